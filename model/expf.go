package model

import "math"

// llama.cpp's CPU backend computes softmax and SwiGLU 16 floats at a time with its own
// vector exponential (ggml_v_expf, AVX-512 form), and only the remainder with libm's
// expf. The two differ in the last bits, and the fixtures' logits show it, so regolith
// evaluates the same polynomial with the same fused multiply-adds.

const simdWidth = 16 // floats per AVX-512 vector

// vexpf is ggml_v_expf for one lane.
func vexpf(x float32) float32 {
	const r = 0x1.8p23
	z := fmaf(x, 0x1.715476p+0, r)
	n := z - r
	b := fmaf(-n, 0x1.7f7d1cp-20, fmaf(-n, 0x1.62e4p-1, x))
	u := b * b
	j := fmaf(fmaf(fmaf(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fmaf(0x1.555e66p-3, b, 0x1.fffdb6p-2)),
		u, fmaf(0x1.ffffecp-1, b, 1))
	if abs32(n) > 192 {
		if n <= 0 {
			return 0
		}
		return float32(math.Inf(1))
	}
	return float32(math.Ldexp(float64(j), int(n)))
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// vsilu is ggml_v_silu for one lane.
func vsilu(x float32) float32 { return x / (1 + vexpf(-x)) }

// swiglu is ggml_vec_swiglu_f32: y = silu(x)·g, vector lanes first.
func swiglu(y, x, g []float32) {
	n := len(y)
	i := 0
	for ; i+simdWidth <= n; i += simdWidth {
		for l := i; l < i+simdWidth; l++ {
			y[l] = vsilu(x[l]) * g[l]
		}
	}
	for ; i < n; i++ {
		y[i] = silu(x[i]) * g[i]
	}
}

// softmax replaces x with its softmax as ggml_soft_max computes it: vector exponentials
// summed per 16 lanes in the reduction order of _mm512_reduce_add_ps, the rest with libm,
// the total in float64, then a multiply by the float32 reciprocal.
func softmax(x []float32) {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	var sum float64
	i := 0
	var lanes [simdWidth]float32
	for ; i+simdWidth <= len(x); i += simdWidth {
		for l := range lanes {
			lanes[l] = vexpf(x[i+l] - m)
			x[i+l] = lanes[l]
		}
		for w := simdWidth / 2; w >= 1; w /= 2 {
			for l := 0; l < w; l++ {
				lanes[l] += lanes[l+w]
			}
		}
		sum += float64(lanes[0])
	}
	for ; i < len(x); i++ {
		e := expf(x[i] - m)
		x[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}
