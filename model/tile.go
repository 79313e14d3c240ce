package model

import "math"

// Kernels of llama.cpp's tiled flash attention (ggml_compute_forward_flash_attn_ext_tiled
// and its simd_gemm), for one query row against one tile of faTileKV cells. Each output
// element is a chain of fused multiply-adds in a fixed order, so computing several
// elements side by side (the vector kernels) changes nothing: exact class.

// tileScoresRef sets kq[j] = Σ_dk fma(q[dk], kt[dk*faTileKV+j], ·) for the faTileKV cells
// of a tile whose keys are transposed into kt (dk-major), the chain starting at 0.
func tileScoresRef(kq []float32, q, kt []float32) {
	for j := range kq[:faTileKV] {
		var s float32
		for dk, qv := range q {
			s = fmaf(qv, kt[dk*faTileKV+j], s)
		}
		kq[j] = s
	}
}

// tileAccumRef adds the first n cells' weighted values: out[d] = fma(p[tk], vf[tk*hd+d],
// out[d]) for tk = 0…n-1 in order (hd = len(out)).
func tileAccumRef(out, p, vf []float32, n int) {
	hd := len(out)
	for tk := 0; tk < n; tk++ {
		pv := p[tk]
		v := vf[tk*hd : tk*hd+hd]
		for d := range out {
			out[d] = fmaf(pv, v[d], out[d])
		}
	}
}

// scaleMaskMaxRef is scaleMaskMax in plain Go.
func scaleMaskMaxRef(kq []float32, scale float32, valid int) float32 {
	m := float32(math.Inf(-1))
	for tk := range kq[:faTileKV] {
		if tk >= valid {
			kq[tk] = float32(math.Inf(-1))
			continue
		}
		kq[tk] *= scale
		m = max(m, kq[tk])
	}
	return m
}
