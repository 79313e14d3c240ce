package model

// The delta rule's inner loops, one row of a value head's state at a time (gdnHead). Row j
// of the state only ever meets k, q and its own δ_j, so decaying it, taking its dot with k,
// updating it and taking its dot with q row by row gives the same numbers as doing each step
// over the whole state. The fused multiply-adds round once (fmaf), as the x86 FMA
// instructions llama.cpp's ggml_vec_dot_f32 and the state update compile to; the AVX-512
// kernels (qwen3next_gdn_amd64.s) and these references are bit-identical (tested).

// gdnDecayDotRef scales row by eg and returns ggml_vec_dot_f32(row, k).
func gdnDecayDotRef(row, k []float32, eg float32) float32 {
	for i := range row {
		row[i] *= eg
	}
	return vecDotF32(row, k)
}

// gdnUpdateDotRef adds k·d to row (fused) and returns ggml_vec_dot_f32(row, q).
func gdnUpdateDotRef(row, k, q []float32, d float32) float32 {
	for i, kv := range k[:len(row)] {
		row[i] = fmaf(kv, d, row[i])
	}
	return vecDotF32(row, q)
}

// convTapsRef is one output row of ggml_ssm_conv for a window inside the chunk: out[ch] =
// Σ_i in[i·cd+ch]·w[i·cd+ch], a fused multiply-add chain over the k taps, oldest first; w is
// the convolution tap-major (NextLayer.ConvT).
func convTapsRef(out, in, w []float32, cd, k int) {
	for ch := range out[:cd] {
		var sum float32
		for i := 0; i < k; i++ {
			sum = fmaf(in[i*cd+ch], w[i*cd+ch], sum)
		}
		out[ch] = sum
	}
}
