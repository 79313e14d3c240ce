package quant

import "encoding/binary"

// Q4_K tiles, in the orders of llama.cpp's repacked Q4_K kernels (llamaorder_k.go): the
// GEMM (dotQ4_KGemmRef: four folds per super-block, one per pair of sub-blocks) for the
// full groups of four rows of a mul_mat, the GEMV (dotQ4_KGemvRef: one fold per
// super-block) for mul_mat_id. The integer sums are exact, so only the float folds follow
// the references; they run 16 outputs wide (lane 4r+c: weight row r, activation row c).
//
// A column quad's packed super-block (q4kTileSB bytes) holds, for activation rows c = 0-3:
//
//	[0,1024)     row c's 256 quants at 256c (the kernel broadcasts 16 of them to all four
//	             weight rows' lanes)
//	[1024,1280)  per pair p, 64 bytes: four copies of 16 bytes whose int32 lane c holds
//	             row c's sub-block sums (int16) B[c][2p], B[c][2p+1], B[c][s] = bsum[2s] +
//	             bsum[2s+1] (|B| ≤ 4096, exact), for the mins
//	[1280,1344)  four copies of the rows' scales d_a[0..3] as float32
const q4kTileSB = 1344

func packQ4_KTiles(act []byte, T, nb int, dst []byte) {
	nsb := nb / 8
	ab := nsb * q8kSize
	for q := 0; q*TileCols < T; q++ {
		for b := 0; b < nsb; b++ {
			blk := dst[(q*nsb+b)*q4kTileSB : (q*nsb+b+1)*q4kTileSB]
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
					b0 := q8kBsum(y, 4*p) + q8kBsum(y, 4*p+1)
					b1 := q8kBsum(y, 4*p+2) + q8kBsum(y, 4*p+3)
					for rep := 0; rep < 4; rep++ {
						o := 1024 + 64*p + 16*rep + 4*c
						binary.LittleEndian.PutUint16(blk[o:], uint16(int16(b0)))
						binary.LittleEndian.PutUint16(blk[o+2:], uint16(int16(b1)))
					}
				}
				for rep := 0; rep < 4; rep++ {
					copy(blk[1280+16*rep+4*c:1280+16*rep+4*c+4], y[0:4])
				}
			}
		}
	}
}

// tileQ4_KRef is the Q4_K tile kernel in plain Go on the packed layout (nb 32-element
// blocks, a multiple of 8): each output is dotQ4_KGemmRef's (gemm) or dotQ4_KGemvRef's (the
// tests hold it and the assembly to them bit for bit).
func tileQ4_KRef(gemm bool, w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	nsb := nb / 8
	for q := 0; q < nq; q++ {
		for r := 0; r < TileRows; r++ {
			for c := 0; c < TileCols; c++ {
				var acc, accMin float32
				for b := 0; b < nsb; b++ {
					x := w[r*rb+b*144 : r*rb+b*144+144]
					blk := p[(q*nsb+b)*q4kTileSB : (q*nsb+b+1)*q4kTileSB]
					sc, m := kScalesMins(x[4:16])
					q4, q8 := x[16:144], blk[256*c:256*c+256]
					var isum, imin [4]int32
					for j := 0; j < 4; j++ {
						var lo, hi int32
						for l := 0; l < 32; l++ {
							lo += int32(q4[32*j+l]&0xF) * int32(int8(q8[64*j+l]))
							hi += int32(q4[32*j+l]>>4) * int32(int8(q8[64*j+32+l]))
						}
						isum[j] = sc[2*j]*lo + sc[2*j+1]*hi
						o := 1024 + 64*j + 4*c
						b0 := int32(int16(binary.LittleEndian.Uint16(blk[o:])))
						b1 := int32(int16(binary.LittleEndian.Uint16(blk[o+2:])))
						imin[j] = m[2*j]*b0 + m[2*j+1]*b1
					}
					da := f32At(blk, 1280+4*c)
					d, dmin := f16At(x, 0)*da, f16At(x, 2)*da
					if gemm {
						for j := 0; j < 4; j++ {
							acc = fma32(float32(isum[j]), d, acc)
							accMin = fma32(float32(imin[j]), dmin, accMin)
						}
					} else {
						acc = fma32(float32(isum[0]+isum[1]+isum[2]+isum[3]), d, acc)
						accMin = fma32(float32(imin[0]+imin[1]+imin[2]+imin[3]), dmin, accMin)
					}
				}
				out[(q*TileCols+c)*ldo+r] = acc - accMin
			}
		}
	}
}

// The plain-Go Q4_K tilers (tests; CPUs without a tiled kernel get nil from Tiles).
var (
	tilerQ4_KGemmRef = &Tiler{blockBytes: q4kTileSB / 8, pack: packQ4_KTiles, kind: tileQ4_KGemm}
	tilerQ4_KGemvRef = &Tiler{blockBytes: q4kTileSB / 8, pack: packQ4_KTiles, kind: tileQ4_KGemv}
)
