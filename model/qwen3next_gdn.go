package model

import "math"

// The delta rule's inner loops, one row of a value head's state at a time (gdnHead). Row j
// of the state only ever meets k, q and its own δ_j, so decaying it, taking its dot with k,
// updating it and taking its dot with q row by row gives the same numbers as doing each step
// over the whole state. The fused multiply-adds round once, as the x86 FMA instructions
// llama.cpp's ggml_vec_dot_f32 and the state update compile to; the AVX-512 kernels
// (qwen3next_gdn_amd64.s) and these references are bit-identical (tested).

// gdnDecayDotRef scales row by eg and returns ggml_vec_dot_f32(row, k).
func gdnDecayDotRef(row, k []float32, eg float32) float32 {
	for i := range row {
		row[i] *= eg
	}
	return dotF32FMA(row, k)
}

// gdnUpdateDotRef adds k·d to row (fused) and returns ggml_vec_dot_f32(row, q).
func gdnUpdateDotRef(row, k, q []float32, d float32) float32 {
	for i, kv := range k[:len(row)] {
		row[i] = fma32(kv, d, row[i])
	}
	return dotF32FMA(row, q)
}

// dotF32FMA is ggml_vec_dot_f32 (AVX-512) as vecDotF32 sums it, with single-rounding fused
// multiply-adds.
func dotF32FMA(x, y []float32) float32 {
	n := len(x)
	var sum [4][simdWidth]float32
	np := n &^ 63
	for i := 0; i < np; i += 64 {
		for j := 0; j < 4; j++ {
			xs, ys := x[i+16*j:i+16*j+16], y[i+16*j:i+16*j+16]
			for l := range simdWidth {
				sum[j][l] = fma32(xs[l], ys[l], sum[j][l])
			}
		}
	}
	for l := range simdWidth {
		sum[0][l] += sum[2][l]
		sum[1][l] += sum[3][l]
	}
	for l := range simdWidth {
		sum[0][l] += sum[1][l]
	}
	s := reduceLanes(&sum[0])
	for i := np; i < n; i++ {
		s = fma32(x[i], y[i], s)
	}
	return s
}

// fma32 is a float32 fused multiply-add rounded once (VFMADD231SS): a·b is exact in
// float64, the sum is rounded to odd in float64 (TwoSum gives the error of the rounded sum;
// a nonzero error on an even result moves it one ulp toward the exact value), and rounding
// that to float32 is then the correctly rounded a·b+c (Boldo and Melquiond, "Emulation of
// FMA and correctly rounded sums: proved algorithms using rounding to odd", 2008: 53 ≥
// 24+2). float32(math.FMA(…)) rounds twice and misses by one ulp when the float64 sum lands
// on a float32 tie.
func fma32(a, b, c float32) float32 {
	p, cc := float64(a)*float64(b), float64(c)
	s := p + cc
	bb := s - p
	e := (p - (s - bb)) + (cc - bb)
	if e != 0 && !math.IsInf(s, 0) && !math.IsNaN(e) {
		u := math.Float64bits(s)
		if u&1 == 0 {
			if (e > 0) == (s > 0) {
				u++
			} else {
				u--
			}
			s = math.Float64frombits(u)
		}
	}
	return float32(s)
}
