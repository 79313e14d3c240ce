package quant

import "encoding/binary"

// Q5_K tiles, in ggml_vec_dot_q5_K_q8_K's order (dotQ5_KLanesRef), which llama.cpp's x86
// build uses for mul_mat and mul_mat_id alike: per super-block eight exact int32 lanes
// (lane l: the products of elements 4l..4l+3 of every 32-element sub-block times its
// scale), acc_l = fma(d·d_a, float(lane_l), acc_l); and the mins' exact sum
// Σ_k m[k]·B[k], B[k] = bsum[2k]+bsum[2k+1], summs = fma(−(dmin·d_a), float(that), summs);
// hsum_float_8(acc) + summs at the end. The integer sums are exact, so only the float folds
// and the final sums follow the reference.
//
// A column quad's packed super-block (q5kTileSB bytes) holds, for activation rows c = 0-3:
//
//	[0,1024)     row c's 256 quants at 256c
//	[1024,1280)  per pair p of mins, 64 bytes: four copies of 16 bytes whose int32 lane c
//	             holds row c's B[2p], B[2p+1] (int16, wrapped as _mm_hadd_epi16 does)
//	[1280,1344)  four copies of the rows' d_a[0..3] as float32 (for dmin·d_a, lane 4r+c)
//	[1344,1472)  at 1344+64(c/2)+32(c%2), row c's d_a as float32, 8 times (for d·d_a)
const q5kTileSB = 1472

func packQ5_KTiles(act []byte, T, nb int, dst []byte) {
	nsb := nb / 8
	ab := nsb * q8kSize
	for q := 0; q*TileCols < T; q++ {
		for b := 0; b < nsb; b++ {
			blk := dst[(q*nsb+b)*q5kTileSB : (q*nsb+b+1)*q5kTileSB]
			if (q+1)*TileCols > T {
				clear(blk) // padded rows: zero quants, sums and scales
			}
			for c := 0; c < TileCols; c++ {
				t := q*TileCols + c
				if t >= T {
					break
				}
				y := act[t*ab+b*q8kSize : t*ab+(b+1)*q8kSize]
				copy(blk[256*c:256*c+256], y[q8kQs:q8kQs+QK_K])
				for p := 0; p < 4; p++ {
					b0 := q5kPairBsum(y, 2*p)
					b1 := q5kPairBsum(y, 2*p+1)
					for rep := 0; rep < 4; rep++ {
						o := 1024 + 64*p + 16*rep + 4*c
						binary.LittleEndian.PutUint16(blk[o:], uint16(b0))
						binary.LittleEndian.PutUint16(blk[o+2:], uint16(b1))
					}
				}
				for rep := 0; rep < 4; rep++ {
					copy(blk[1280+16*rep+4*c:1280+16*rep+4*c+4], y[0:4])
				}
				o := 1344 + 64*(c/2) + 32*(c%2)
				for l := 0; l < 8; l++ {
					copy(blk[o+4*l:o+4*l+4], y[0:4])
				}
			}
		}
	}
}

// q5kPairBsum is B[k] = bsum[2k] + bsum[2k+1] of a Q8_K block, wrapped to int16.
func q5kPairBsum(y []byte, k int) int16 {
	return int16(binary.LittleEndian.Uint16(y[q8kBsums+4*k:])) + int16(binary.LittleEndian.Uint16(y[q8kBsums+4*k+2:]))
}

// q5kQuant is element e (0-255) of a Q5_K super-block x, 0-31.
func q5kQuant(x []byte, e int) int32 {
	j, h, i := e/64, e%64/32, e%32
	q := x[48+32*j+i] & 0xF
	if h == 1 {
		q = x[48+32*j+i] >> 4
	}
	return int32(q | (x[16+i]>>(2*j+h)&1)<<4)
}

// tileQ5_KRef is the Q5_K tile kernel in plain Go on the packed layout (nb 32-element
// blocks, a multiple of 8): each output is dotQ5_KLanesRef's (the tests hold it and the
// assembly to it bit for bit).
func tileQ5_KRef(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	nsb := nb / 8
	for q := 0; q < nq; q++ {
		for r := 0; r < TileRows; r++ {
			for c := 0; c < TileCols; c++ {
				var acc [8]float32
				var summs float32
				for b := 0; b < nsb; b++ {
					x := w[r*rb+b*176 : r*rb+b*176+176]
					blk := p[(q*nsb+b)*q5kTileSB : (q*nsb+b+1)*q5kTileSB]
					sc, m := kScalesMins(x[4:16])
					q8 := blk[256*c : 256*c+256]
					var lane [8]int32
					for e := 0; e < QK_K; e++ {
						lane[e%32/4] += sc[e/32] * q5kQuant(x, e) * int32(int8(q8[e]))
					}
					var imin int32
					for k := 0; k < 8; k++ {
						bk := int16(binary.LittleEndian.Uint16(blk[1024+64*(k/2)+4*c+2*(k%2):]))
						imin += m[k] * int32(bk)
					}
					dmin := f32At(blk, 1280+4*c) * f16At(x, 2)
					summs = fma32(-dmin, float32(imin), summs)
					d := f32At(blk, 1344+64*(c/2)+32*(c%2)) * f16At(x, 0)
					for l := 0; l < 8; l++ {
						acc[l] = fma32(d, float32(lane[l]), acc[l])
					}
				}
				out[(q*TileCols+c)*ldo+r] = hsum8(&acc) + summs
			}
		}
	}
}

// tilerQ5_KRef runs the plain-Go Q5_K tile kernel (tests; CPUs without a tiled kernel get
// nil from Tiles).
var tilerQ5_KRef = &Tiler{blockBytes: q5kTileSB / 8, pack: packQ5_KTiles, kind: tileQ5_K}
