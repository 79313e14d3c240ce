package f16

import (
	"math"

	"github.com/regolith/regolith/quant"
)

func madRef(y, x []uint16, v float32) {
	for i := range y {
		p := float32(quant.FP16ToFP32(x[i]) * v)
		y[i] = quant.FP32ToFP16(quant.FP16ToFP32(y[i]) + p)
	}
}

func madFMARef(y, x []uint16, v float32) {
	for i := range y {
		f := float32(math.FMA(float64(quant.FP16ToFP32(x[i])), float64(v), float64(quant.FP16ToFP32(y[i]))))
		y[i] = quant.FP32ToFP16(f)
	}
}

func scaleRef(y []uint16, v float32) {
	for i := range y {
		y[i] = quant.FP32ToFP16(float32(quant.FP16ToFP32(y[i]) * v))
	}
}

func dotRef(a, b []uint16) float32 {
	if len(a) >= 64 {
		return dotLanes(a, b)
	}
	var s float64
	for i := range a {
		s += float64(quant.FP16ToFP32(a[i]) * quant.FP16ToFP32(b[i]))
	}
	return float32(s)
}
