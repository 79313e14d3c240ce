package model

import "math"

// llama.cpp's CPU backend computes softmax and SwiGLU 16 floats at a time with its own
// vector exponential (ggml_v_expf, AVX-512 form), and only the remainder with libm's
// expf. The two differ in the last bits, and the fixtures' logits show it, so regolith
// evaluates the same polynomial with the same fused multiply-adds.

const simdWidth = 16 // floats per AVX-512 vector

// expf is libm's expf as glibc computes it on x86-64 with FMA (the fixtures' llama.cpp
// links it): x·32/ln2 split into k + r, 2^(k/32) from a table, a cubic in r, all in
// float64 with fused multiply-adds, then one rounding to float32. It is not always the
// correctly rounded result (about 1 input in 13,000 differs by one ulp), and matching it
// keeps attention's online softmax bit-identical. Checked against glibc on 2.4 million
// inputs, including all 170,589 that it rounds differently from math.Exp (see the test).
func expf(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 0x1.62e42ep6:
		return float32(math.Inf(1))
	case x < -0x1.9fe368p6:
		return 0
	}
	const (
		n      = 32
		invLn2 = 0x1.71547652b82fep+0 * n
		shift  = 0x1.8p+52
		c0     = 0x1.c6af84b912394p-5 / n / n / n
		c1     = 0x1.ebfce50fac4f3p-3 / n / n
		c2     = 0x1.62e42ff0c52d6p-1 / n
	)
	xd := float64(x)
	kd := math.FMA(invLn2, xd, shift)
	ki := math.Float64bits(kd)
	kd -= shift
	r := math.FMA(invLn2, xd, -kd)
	s := math.Float64frombits(exp2Tab[ki%n] + ki<<(52-5))
	y := math.FMA(math.FMA(c0, r, c1), r*r, math.FMA(c2, r, 1))
	return float32(y * s)
}

// exp2Tab[i] is 2^(i/32) as float64 bits, less i<<47, so that adding k<<47 scales by 2^(k/32).
var exp2Tab = [32]uint64{
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
}

// vexpf is ggml_v_expf for one lane.
func vexpf(x float32) float32 {
	switch {
	case x <= -134: // n <= -193: the vector code flushes to 0 (masked cells are -Inf)
		return 0
	case x >= 134:
		return float32(math.Inf(1))
	}
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
	if ni := int32(n); ni >= -126 && ni <= 127 {
		// j·2^n with 2^n a normal float rounds once, like _mm512_scalef_ps.
		return j * math.Float32frombits(uint32(ni+127)<<23)
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
	var e [simdWidth]float32
	for ; i+simdWidth <= n; i += simdWidth {
		for l := range e {
			e[l] = -x[i+l]
		}
		vexpRow(e[:], e[:])
		for l, ev := range e {
			y[i+l] = x[i+l] / (1 + ev) * g[i+l] // vsilu(x)·g
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
	i := len(x) &^ (simdWidth - 1)
	sum := softmaxTile(x[:i], m)
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

// softmaxTile is ggml_vec_soft_max_f32 over a whole number of vectors: x[i] becomes
// e^(x[i]-max) by the vector exponential, and the float64 sum adds each vector's
// _mm512_reduce_add_ps.
func softmaxTile(x []float32, max float32) float64 {
	var sum float64
	i := 0
	var tmp [faTileKV]float32
	for end := len(x) &^ (simdWidth - 1); i < end; {
		n := min(faTileKV, end-i)
		s, ok := softmaxVecs(tmp[:n], x[i:i+n], max, sum)
		if !ok {
			break // the loop below goes on from vector i with the scalar fallback per lane
		}
		copy(x[i:i+n], tmp[:n])
		sum, i = s, i+n
	}
	var lanes [simdWidth]float32
	for ; i+simdWidth <= len(x); i += simdWidth {
		for l := range lanes {
			lanes[l] = x[i+l] - max
		}
		vexpRow(lanes[:], lanes[:])
		copy(x[i:i+simdWidth], lanes[:])
		sum += float64(reduceLanes(&lanes))
	}
	return sum
}

// reduceLanes is _mm512_reduce_add_ps: halves folded 8, 4, 2, 1.
func reduceLanes(v *[simdWidth]float32) float32 {
	for w := simdWidth / 2; w >= 1; w /= 2 {
		for l := 0; l < w; l++ {
			v[l] += v[l+w]
		}
	}
	return v[0]
}
