package quant

import "encoding/binary"

// Q6_K tiles, in ggml_vec_dot_q6_K_q8_K's order (dotQ6_KLanesRef), which llama.cpp's x86
// build uses for mul_mat and mul_mat_id alike: per super-block eight exact int32 lanes
// (lane l: the products of elements 4l..4l+3 of every 32-element chunk times their 16-element
// scales, minus 32·(sc[2l]·bsum[2l] + sc[2l+1]·bsum[2l+1])), then acc_l = fma(d·d_a,
// float(lane_l), acc_l), hsum_float_8 at the end. The integer lanes are exact, so only the
// per-lane float folds and the final sums follow the reference.
//
// A column quad's packed super-block (q6kTileSB bytes) holds, for activation rows c = 0-3
// (pair p = c/2, half h = c%2):
//
//	[0,1024)     row c's 256 quants at 256c
//	[1024,1152)  at 1024+64p+32h, row c's 16 bsums (int16)
//	[1152,1280)  at 1152+64p+32h, row c's d_a as float32, 8 times
const q6kTileSB = 1280

func packQ6_KTiles(act []byte, T, nb int, dst []byte) {
	nsb := nb / 8
	ab := nsb * q8kSize
	for q := 0; q*TileCols < T; q++ {
		for b := 0; b < nsb; b++ {
			blk := dst[(q*nsb+b)*q6kTileSB : (q*nsb+b+1)*q6kTileSB]
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
				o := 64*(c/2) + 32*(c%2)
				copy(blk[1024+o:1024+o+32], y[q8kBsums:q8kBsums+32])
				for l := 0; l < 8; l++ {
					copy(blk[1152+o+4*l:1152+o+4*l+4], y[0:4])
				}
			}
		}
	}
}

// q6kQuant is element e (0-255) of a Q6_K super-block x, 0-63.
func q6kQuant(x []byte, e int) int32 {
	j, k, i := e/128, e%128/32, e%32
	ql, qh := x[64*j+32*(k%2)+i], x[128+32*j+i]
	lo := ql & 0xF
	if k >= 2 {
		lo = ql >> 4
	}
	return int32(lo | (qh>>(2*k)&3)<<4)
}

// tileQ6_KRef is the Q6_K tile kernel in plain Go on the packed layout (nb 32-element
// blocks, a multiple of 8): each output is dotQ6_KLanesRef's (the tests hold it and the
// assembly to it bit for bit).
func tileQ6_KRef(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	nsb := nb / 8
	for q := 0; q < nq; q++ {
		for r := 0; r < TileRows; r++ {
			for c := 0; c < TileCols; c++ {
				o := 64*(c/2) + 32*(c%2)
				var acc [8]float32
				for b := 0; b < nsb; b++ {
					x := w[r*rb+b*210 : r*rb+b*210+210]
					blk := p[(q*nsb+b)*q6kTileSB : (q*nsb+b+1)*q6kTileSB]
					sc, q8 := x[192:208], blk[256*c:256*c+256]
					var lane [8]int32
					for e := 0; e < QK_K; e++ {
						lane[e%32/4] += int32(int8(sc[e/16])) * q6kQuant(x, e) * int32(int8(q8[e]))
					}
					for l := 0; l < 8; l++ {
						b0 := int32(int16(binary.LittleEndian.Uint16(blk[1024+o+4*l:])))
						b1 := int32(int16(binary.LittleEndian.Uint16(blk[1024+o+4*l+2:])))
						lane[l] -= 32 * (b0*int32(int8(sc[2*l])) + b1*int32(int8(sc[2*l+1])))
					}
					d := f32At(blk, 1152+o) * f16At(x, 208)
					for l := 0; l < 8; l++ {
						acc[l] = fma32(d, float32(lane[l]), acc[l])
					}
				}
				out[(q*TileCols+c)*ldo+r] = hsum8(&acc)
			}
		}
	}
}

// tilerQ6_KRef runs the plain-Go Q6_K tile kernel (tests; CPUs without a tiled kernel get
// nil from Tiles).
var tilerQ6_KRef = &Tiler{blockBytes: q6kTileSB / 8, pack: packQ6_KTiles, kind: tileQ6_K}
