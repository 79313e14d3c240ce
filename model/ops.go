package model

import (
	"math"

	"github.com/regolith/regolith/quant"
)

// rmsNorm writes x·w/rms(x) into dst, as ggml_rms_norm followed by ggml_mul: the sum of
// squares accumulates in float64 (ggml_float), the scale is a float32.
func rmsNorm(dst, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	for i, v := range x {
		dst[i] = (v * scale) * w[i]
	}
}

// silu is ggml_silu_f32: x/(1+e^-x).
func silu(x float32) float32 { return x / (1 + expf(-x)) }

// rope holds the cos/sin table of NeoX rotary embedding for one position, computed as
// ggml's rope_cache_init does (theta multiplied step by step in float32, glibc's cosf/sinf).
type rope struct {
	dims      int
	thetaStep float32
	cos, sin  []float32
}

func newRope(dims int, base float32) *rope {
	return &rope{
		dims:      dims,
		thetaStep: float32(math.Pow(float64(base), -2.0/float64(dims))),
		cos:       make([]float32, dims/2),
		sin:       make([]float32, dims/2),
	}
}

func (r *rope) at(pos int) {
	theta := float32(pos)
	for i := range r.cos {
		r.cos[i] = cosf(theta)
		r.sin[i] = sinf(theta)
		theta *= r.thetaStep
	}
}

// apply rotates one head (NeoX layout: element i pairs with i + dims/2).
func (r *rope) apply(x []float32) {
	h := r.dims / 2
	for i := 0; i < h; i++ {
		x0, x1 := x[i], x[i+h]
		c, s := r.cos[i], r.sin[i]
		// GCC contracts x0*c - x1*s into fma(x0, c, -(x1*s)) (ggml is built in GNU C mode,
		// -ffp-contract=fast), and so must we to get the same bits.
		x[i] = fmaf(x0, c, -float32(x1*s))
		x[i+h] = fmaf(x0, s, float32(x1*c))
	}
}

// fmaf is a float32 fused multiply-add rounded once (llama.cpp's x86 build contracts these
// into FMA instructions).
func fmaf(a, b, c float32) float32 { return quant.FMA32(a, b, c) }
