package quant

import (
	"encoding/binary"
	"math"
)

// FP16ToFP32 converts an IEEE half to float32 exactly as ggml's GGML_FP16_TO_FP32
// (ggml_compute_fp16_to_fp32: a bit-trick that is exact for every non-NaN half).
func FP16ToFP32(h uint16) float32 { return fp16Table[h] }

// fp16Table caches all 65536 conversions: dequantization reads a half per block and the
// table is faster than the arithmetic, while giving exactly the same bits.
var fp16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = fp16ToFP32Compute(uint16(i))
	}
	return &t
}()

func fp16ToFP32Compute(h uint16) float32 {
	w := uint32(h) << 16
	sign := w & 0x80000000
	twoW := w + w
	const expOffset = 0xE0 << 23
	normalized := float32(math.Float32frombits((twoW>>4)+expOffset) * 0x1p-112)
	const magicMask = 126 << 23
	denormalized := float32(math.Float32frombits((twoW>>17)|magicMask) - 0.5)
	const denormalizedCutoff = 1 << 27
	var r uint32
	if twoW < denormalizedCutoff {
		r = math.Float32bits(denormalized)
	} else {
		r = math.Float32bits(normalized)
	}
	return math.Float32frombits(sign | r)
}

// FP32ToFP16 converts float32 to an IEEE half with round-to-nearest-even, bit-identical to
// ggml's GGML_FP32_TO_FP16 (ggml_compute_fp32_to_fp16). Scaling by 2^112 and 2^-110 lets the
// float adder do the rounding; NaN becomes the quiet NaN 0x7E00 (with sign).
func FP32ToFP16(f float32) uint16 {
	base := float32(float32(abs32(f)*0x1p+112) * 0x1p-110)
	w := math.Float32bits(f)
	shl1W := w + w
	sign := w & 0x80000000
	bias := shl1W & 0xFF000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = float32(math.Float32frombits((bias>>1)+0x07800000) + base)
	bits := math.Float32bits(base)
	expBits := (bits >> 13) & 0x00007C00
	mantissaBits := bits & 0x00000FFF
	nonsign := expBits + mantissaBits
	if shl1W > 0xFF000000 {
		nonsign = 0x7E00
	}
	return uint16(sign>>16) | uint16(nonsign)
}

// BF16ToFP32 widens a bfloat16 (the top half of a float32).
func BF16ToFP32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP32ToBF16 rounds to nearest even and quiets NaNs, as ggml's GGML_FP32_TO_BF16.
func FP32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + ((u >> 16) & 1))) >> 16)
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ 0x80000000) }

func f16At(b []byte, off int) float32 { return fp16Table[binary.LittleEndian.Uint16(b[off:])] }

func putF16(b []byte, off int, f float32) { binary.LittleEndian.PutUint16(b[off:], FP32ToFP16(f)) }

func f32At(b []byte, off int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
}

func putF32(b []byte, off int, f float32) {
	binary.LittleEndian.PutUint32(b[off:], math.Float32bits(f))
}

// The plain float types. Their activation type is themselves; ggml's scalar dot products
// multiply in float32 and accumulate in double (ggml_float).

func init() {
	register(F32, &format{
		vecDot: F32,
		dequant: func(src []byte, dst []float32) {
			for i := range dst {
				dst[i] = f32At(src, 4*i)
			}
		},
		quant: func(src []float32, dst []byte) {
			for i, v := range src {
				putF32(dst, 4*i, v)
			}
		},
		dot: func(w, a []byte, n int) float32 {
			var s float64
			for i := 0; i < n; i++ {
				s += float64(float32(f32At(w, 4*i) * f32At(a, 4*i)))
			}
			return float32(s)
		},
	})
	formats[F32].act = formats[F32].quant

	register(F16, &format{
		vecDot: F16,
		dequant: func(src []byte, dst []float32) {
			for i := range dst {
				dst[i] = f16At(src, 2*i)
			}
		},
		quant: func(src []float32, dst []byte) {
			for i, v := range src {
				putF16(dst, 2*i, v)
			}
		},
		dot: func(w, a []byte, n int) float32 {
			var s float64
			for i := 0; i < n; i++ {
				s += float64(float32(f16At(w, 2*i) * f16At(a, 2*i)))
			}
			return float32(s)
		},
	})
	// ggml-cpu converts with F16C (vcvtps2ph, round to nearest even): the same bits as
	// FP32ToFP16 for every non-NaN input.
	formats[F16].act = formats[F16].quant

	register(BF16, &format{
		vecDot: BF16,
		dequant: func(src []byte, dst []float32) {
			for i := range dst {
				dst[i] = BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
			}
		},
		quant: func(src []float32, dst []byte) {
			for i, v := range src {
				binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(v))
			}
		},
		dot: func(w, a []byte, n int) float32 {
			var s float64
			for i := 0; i < n; i++ {
				x := BF16ToFP32(binary.LittleEndian.Uint16(w[2*i:]))
				y := BF16ToFP32(binary.LittleEndian.Uint16(a[2*i:]))
				s += float64(float32(x * y))
			}
			return float32(s)
		},
	})
	formats[BF16].act = formats[BF16].quant
}
