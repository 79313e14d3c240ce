package quant

import "encoding/binary"

// dotQ5_KLanesRef is ggml_vec_dot_q5_K_q8_K (AVX2 path, which llama.cpp's x86 build runs
// for every Q5_K product: Q5_K is not repacked on x86 and llamafile's sgemm has no
// K-quants). Per super-block, eight exact int32 lanes, lane l holding Σ_j (sc[2j]·Σ q5·q8
// over elements 64j+4l..64j+4l+3 + sc[2j+1]·Σ q5·q8 over 64j+32+4l..64j+32+4l+3) with q5
// unsigned (0..31), folded as acc_l = fma(d·d_a, float(lane_l), acc_l); and the mins'
// exact sum Σ_k m[k]·(bsum[2k]+bsum[2k+1]) (the pair sums wrap as int16, as
// _mm_hadd_epi16 does), folded as summs = fma(−(dmin·d_a), float(that), summs). The
// result is hsum_float_8(acc) + summs.
func dotQ5_KLanesRef(w, a []byte, n int) float32 {
	var acc [8]float32
	var summs float32
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*176:i*176+176], a[i*q8kSize:(i+1)*q8kSize]
		sc, m := kScalesMins(x[4:16])
		da := f32At(y, 0)
		d, dmin := da*f16At(x, 0), da*f16At(x, 2)
		var imin int32
		for k := 0; k < 8; k++ {
			b := int16(binary.LittleEndian.Uint16(y[q8kBsums+4*k:])) + int16(binary.LittleEndian.Uint16(y[q8kBsums+4*k+2:]))
			imin += m[k] * int32(b)
		}
		summs = fma32(-dmin, float32(imin), summs)
		qh, qs, q8 := x[16:48], x[48:176], y[q8kQs:q8kQs+QK_K]
		var lane [8]int32
		for j := 0; j < 4; j++ { // 64-element groups: sub-blocks 2j (low nibbles), 2j+1 (high)
			for e := 0; e < 32; e++ {
				lo := int32(qs[32*j+e]&0xF | (qh[e]>>(2*j)&1)<<4)
				hi := int32(qs[32*j+e]>>4 | (qh[e]>>(2*j+1)&1)<<4)
				lane[e/4] += sc[2*j]*lo*int32(int8(q8[64*j+e])) + sc[2*j+1]*hi*int32(int8(q8[64*j+32+e]))
			}
		}
		for l := 0; l < 8; l++ {
			acc[l] = fma32(d, float32(lane[l]), acc[l])
		}
	}
	return hsum8(&acc) + summs
}
