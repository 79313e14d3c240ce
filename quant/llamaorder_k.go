package quant

import "encoding/binary"

// K-quant products in llama.cpp's order (x86, AVX2/AVX-512 build).
//
// llama.cpp repacks Q4_K weights with a multiple of 8 rows at load time (repack.cpp,
// q4_K_8x8_q8_K) and computes every product with them, mul_mat and mul_mat_id alike, with its
// own GEMV/GEMM kernels. In a mul_mat, the activation rows of each full group of four are
// quantized together by ggml_quantize_mat_q8_K_4x8 and summed by ggml_gemm_q4_K_8x8_q8_K; the
// T%4 rows left over (all rows when T < 4) are quantized by quantize_row_q8_K and summed by
// ggml_gemv_q4_K_8x8_q8_K. mul_mat_id quantizes every row with quantize_row_q8_K and uses
// the GEMV. The two kernels compute the same exact integer sums and differ only in how often
// they fold them into float: the GEMV once per 256-element super-block, the GEMM once per
// pair of 32-element sub-blocks. Q6_K is not repacked on x86 and llamafile's sgemm has no
// K-quants, so every Q6_K product is ggml_vec_dot_q6_K_q8_K per row.

// quantQ8K4x8 is quantQ8K4x8Ref or a SIMD version with its bytes (q8k_amd64.go).
var quantQ8K4x8 = quantQ8K4x8Ref

// quantQ8K4x8Ref is one row of ggml_quantize_mat_q8_K_4x8 (AVX2), in Q8_K's layout. It is
// quantize_row_q8_K_ref except for the sign of the scale when both +max and −max occur:
// iscale = −127/max when some element equals +max|x|, +127/max|x| otherwise (the reference
// takes the sign of the first element of largest magnitude). Rounding (to nearest even) and
// d = 1/iscale are the same.
func quantQ8K4x8Ref(x []float32, dst []byte) {
	for i := 0; i*QK_K < len(x); i++ {
		xb, b := x[i*QK_K:i*QK_K+QK_K], dst[i*q8kSize:i*q8kSize+q8kSize]
		var amax float32
		for _, v := range xb {
			amax = max(amax, abs32(v))
		}
		if amax == 0 {
			clear(b)
			continue
		}
		iscale := 127 / amax
		for _, v := range xb {
			if v == amax {
				iscale = -127 / amax
				break
			}
		}
		for j, v := range xb {
			b[q8kQs+j] = byte(int8(min(127, nearestInt(iscale*v))))
		}
		for j := 0; j < QK_K/16; j++ {
			sum := 0
			for ii := 0; ii < 16; ii++ {
				sum += int(int8(b[q8kQs+16*j+ii]))
			}
			binary.LittleEndian.PutUint16(b[q8kBsums+2*j:], uint16(int16(sum)))
		}
		putF32(b, 0, 1/iscale)
	}
}

// q4KPairSums returns, for one Q4_K block x and Q8_K block y, the exact integer sums of the
// four pairs of sub-blocks (2p, 2p+1): isum[p] = Σ scale_s·Σ q4·q8 and imin[p] = Σ min_s·Σ q8.
func q4KPairSums(x, y []byte) (isum, imin [4]int32) {
	sc, m := kScalesMins(x[4:16])
	q4, q8 := x[16:144], y[q8kQs:]
	for j := 0; j < 4; j++ {
		var lo, hi int32
		for l := 0; l < 32; l++ {
			lo += int32(q4[32*j+l]&0xF) * int32(int8(q8[64*j+l]))
			hi += int32(q4[32*j+l]>>4) * int32(int8(q8[64*j+32+l]))
		}
		isum[j] = sc[2*j]*lo + sc[2*j+1]*hi
		b0 := q8kBsum(y, 4*j) + q8kBsum(y, 4*j+1)
		b1 := q8kBsum(y, 4*j+2) + q8kBsum(y, 4*j+3)
		imin[j] = m[2*j]*b0 + m[2*j+1]*b1
	}
	return isum, imin
}

// dotQ4_KGemvRef is ggml_gemv_q4_K_8x8_q8_K (AVX2) for one output: per super-block,
// acc = fma(float(Σ isum), d·d_a, acc) and accmin = fma(float(Σ imin), dmin·d_a, accmin);
// the result is acc − accmin.
func dotQ4_KGemvRef(w, a []byte, n int) float32 {
	var acc, accMin float32
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*144:], a[i*q8kSize:]
		isum, imin := q4KPairSums(x, y)
		da := f32At(y, 0)
		d, dmin := f16At(x, 0)*da, f16At(x, 2)*da
		acc = fma32(float32(isum[0]+isum[1]+isum[2]+isum[3]), d, acc)
		accMin = fma32(float32(imin[0]+imin[1]+imin[2]+imin[3]), dmin, accMin)
	}
	return acc - accMin
}

// dotQ4_KGemmRef is ggml_gemm_q4_K_8x8_q8_K (AVX2 and AVX-512 paths alike) for one output:
// as dotQ4_KGemvRef, but folding each pair of sub-blocks into the float accumulators.
func dotQ4_KGemmRef(w, a []byte, n int) float32 {
	var acc, accMin float32
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*144:], a[i*q8kSize:]
		isum, imin := q4KPairSums(x, y)
		da := f32At(y, 0)
		d, dmin := f16At(x, 0)*da, f16At(x, 2)*da
		for p := 0; p < 4; p++ {
			acc = fma32(float32(isum[p]), d, acc)
			accMin = fma32(float32(imin[p]), dmin, accMin)
		}
	}
	return acc - accMin
}

// dotQ6_KLanesRef is ggml_vec_dot_q6_K_q8_K (AVX2 path): eight int32 lanes per super-block,
// lane l holding Σ scale·Σ q6·q8 over bytes 4l..4l+3 of each 32-byte chunk (q6 unsigned,
// 0..63) minus 32·(scale_{2l}·bsum_{2l} + scale_{2l+1}·bsum_{2l+1}); then
// acc_l = fma(d·d_a, float(lane_l), acc_l) and hsum_float_8.
func dotQ6_KLanesRef(w, a []byte, n int) float32 {
	var acc [8]float32
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*210:], a[i*q8kSize:]
		ql, qh, sc := x[0:128], x[128:192], x[192:208]
		q8 := y[q8kQs:]
		d := f32At(y, 0) * f16At(x, 208)
		var lane [8]int32
		for l := 0; l < 8; l++ {
			lane[l] = -32 * (q8kBsum(y, 2*l)*int32(int8(sc[2*l])) + q8kBsum(y, 2*l+1)*int32(int8(sc[2*l+1])))
		}
		for j := 0; j < 2; j++ { // 128-element halves
			for k := 0; k < 4; k++ { // 32-element chunks
				for e := 0; e < 32; e++ {
					var q int32
					switch k {
					case 0:
						q = int32(ql[64*j+e]&0xF | (qh[32*j+e]&3)<<4)
					case 1:
						q = int32(ql[64*j+32+e]&0xF | (qh[32*j+e]>>2&3)<<4)
					case 2:
						q = int32(ql[64*j+e]>>4 | (qh[32*j+e]>>4&3)<<4)
					case 3:
						q = int32(ql[64*j+32+e]>>4 | (qh[32*j+e]>>6&3)<<4)
					}
					idx := 128*j + 32*k + e
					lane[e/4] += int32(int8(sc[idx/16])) * q * int32(int8(q8[idx]))
				}
			}
		}
		for l := 0; l < 8; l++ {
			acc[l] = fma32(d, float32(lane[l]), acc[l])
		}
	}
	return hsum8(&acc)
}
