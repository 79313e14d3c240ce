package quant

import (
	"encoding/binary"
	"math"
)

// Register-tiled matrix products for prefill. A one-row kernel loads a weight row once per
// activation row and converts every block's scales each time; a tile keeps TileRows weight
// rows × TileCols activation rows of accumulators in registers, so each weight block is
// loaded once per TileCols activation rows and each activation block once per TileRows
// weight rows. Activations are first repacked (Tiler.Pack) into a layout made for the tile
// kernel, with the per-block values it needs precomputed. Every output is bit for bit the
// one-row llama-order kernel's (LlamaKernel), so tiles change speed, not results (exact).

// TileRows and TileCols are the weight rows and activation rows one tile covers.
const (
	TileRows = 4
	TileCols = 4
)

// Tiler is the tiled kernel of one weight type: Pack, then Rows over groups of TileRows
// weight rows. Tiles returns nil where the CPU or the type has none; callers then use
// LlamaMatMul.Kernels.
type Tiler struct {
	blockBytes int // packed bytes per 32-element block per column quad
	pack       func(act []byte, T, nb int, dst []byte)
	asm        bool // tile runs the assembly kernel, else the plain-Go reference
	kind       tileKind
}

// tileKind is the kernel (weight type and order) a Tiler runs.
type tileKind uint8

const (
	tileQ8_0     tileKind = iota
	tileQ4_KGemm          // dotQ4_KGemmRef's order (a mul_mat's full groups of four rows)
	tileQ4_KGemv          // dotQ4_KGemvRef's order (mul_mat_id)
	tileQ6_K              // dotQ6_KLanesRef's order (mul_mat and mul_mat_id)
	tileQ5_K              // dotQ5_KLanesRef's order (mul_mat and mul_mat_id)
)

// tile runs nq column quads of 4 weight rows. It calls the kernels directly rather than
// through a func value, so Rows' scratch stays on the stack.
func (g *Tiler) tile(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	if g.kind == tileQ6_K {
		if g.asm {
			tileQ6_KAsm(w, rb, p, nb, nq, out, ldo)
			return
		}
		tileQ6_KRef(w, rb, p, nb, nq, out, ldo)
		return
	}
	if g.kind == tileQ5_K {
		if g.asm {
			tileQ5_KAsm(w, rb, p, nb, nq, out, ldo)
			return
		}
		tileQ5_KRef(w, rb, p, nb, nq, out, ldo)
		return
	}
	if g.kind != tileQ8_0 {
		if g.asm {
			tileQ4_KAsm(g.kind == tileQ4_KGemm, w, rb, p, nb, nq, out, ldo)
			return
		}
		tileQ4_KRef(g.kind == tileQ4_KGemm, w, rb, p, nb, nq, out, ldo)
		return
	}
	if g.asm {
		tileQ8_0Asm(w, rb, p, nb, nq, out, ldo)
		return
	}
	tileQ8_0Ref(w, rb, p, nb, nq, out, ldo)
}

// Tiles returns the tiled kernel for m, or nil. It covers, on CPUs with AVX-512 VNNI, Q8_0
// (one kernel for mul_mat and mul_mat_id, both of which llama.cpp sums in the same
// per-output order) and repacked Q4_K (Rows a multiple of 8): the GEMM order for the rows
// before Kernels' split when m.Gemm, else the GEMV order; and Q6_K and Q5_K (one order for
// both).
func (m LlamaMatMul) Tiles() *Tiler {
	switch {
	case m.Type == Q8_0:
		return tilerQ8_0
	case m.Type == Q4_K && m.Rows%8 == 0 && m.Gemm:
		return tilerQ4_KGemm
	case m.Type == Q4_K && m.Rows%8 == 0:
		return tilerQ4_KGemv
	case m.Type == Q6_K:
		return tilerQ6_K
	case m.Type == Q5_K:
		return tilerQ5_K
	}
	return nil
}

// PackedBytes is the size of T activation rows of n elements once packed.
func (g *Tiler) PackedBytes(T, n int) int {
	return (T + TileCols - 1) / TileCols * (n / 32) * g.blockBytes
}

// Pack rearranges T activation rows of n elements (VecDotType's layout, what
// LlamaRows.Act writes, back to back) into dst, which must hold PackedBytes(T, n). The
// last column quad is padded with zero rows.
func (g *Tiler) Pack(act []byte, T, n int, dst []byte) {
	g.pack(act, T, n/32, dst[:g.PackedBytes(T, n)])
}

// Rows computes out[t*ldo + i] = w_i · a_t for the TileRows weight rows w_i (row i at
// w[i*rb:], n elements) and activation rows t in [TileCols*q0, min(TileCols*q1, T)) of
// packed (Pack's output for T rows).
func (g *Tiler) Rows(w []byte, rb, n int, packed []byte, T, q0, q1 int, out []float32, ldo int) {
	nb := n / 32
	full := min(q1, T/TileCols)
	qb := nb * g.blockBytes
	if full > q0 {
		g.tile(w, rb, packed[q0*qb:full*qb], nb, full-q0, out[q0*TileCols*ldo:], ldo)
	}
	if full < q1 { // the padded last quad: its rows past T go to scratch
		var tmp [TileRows * TileCols]float32
		g.tile(w, rb, packed[full*qb:(full+1)*qb], nb, 1, tmp[:], TileRows)
		for t := full * TileCols; t < T; t++ {
			copy(out[t*ldo:t*ldo+TileRows], tmp[(t-full*TileCols)*TileRows:])
		}
	}
}

// Q8_0 tiles. A column quad's packed block (q8TileBlock bytes) holds, for tokens 0-3:
//
//	[0,128)   the four rows' 32 quants, back to back (pairs 0|1 and 2|3 are one 64-byte load)
//	[128,256) per pair, the two rows' scales as float32, each repeated over 8 lanes
//	[256,384) per pair, -128 × the sum of each 4-quant lane, as int32 (8 lanes per row)
//
// The kernel adds 128 to the weights to use VPDPBUSD (unsigned × signed) and subtracts the
// precomputed 128·Σa, so each lane's integer sum is exact for any int8 values.
const q8TileBlock = 384

func packQ8_0Tiles(act []byte, T, nb int, dst []byte) {
	ab := nb * 34
	for q := 0; q*TileCols < T; q++ {
		for b := 0; b < nb; b++ {
			blk := dst[(q*nb+b)*q8TileBlock : (q*nb+b+1)*q8TileBlock]
			for i := 0; i < TileCols; i++ {
				pair, half := i/2, i%2
				quants := blk[32*i : 32*i+32]
				da := blk[128+64*pair+32*half : 128+64*pair+32*half+32]
				c := blk[256+64*pair+32*half : 256+64*pair+32*half+32]
				t := q*TileCols + i
				if t >= T {
					clear(quants)
					clear(da)
					clear(c)
					continue
				}
				src := act[t*ab+b*34 : t*ab+b*34+34]
				copy(quants, src[2:])
				d := math.Float32bits(FP16ToFP32(binary.LittleEndian.Uint16(src)))
				for l := 0; l < 8; l++ {
					binary.LittleEndian.PutUint32(da[4*l:], d)
					s := int32(0)
					for _, v := range src[2+4*l : 6+4*l] {
						s += int32(int8(v))
					}
					binary.LittleEndian.PutUint32(c[4*l:], uint32(-128*s))
				}
			}
		}
	}
}

// tileQ8_0Ref is the tile kernel in plain Go on the packed layout: each output is
// dotQ8_0LanesRef's (the tests hold the assembly to it bit for bit).
func tileQ8_0Ref(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	for q := 0; q < nq; q++ {
		for r := 0; r < TileRows; r++ {
			for i := 0; i < TileCols; i++ {
				pair, half := i/2, i%2
				var acc [8]float32
				for b := 0; b < nb; b++ {
					wb := w[r*rb+b*34 : r*rb+b*34+34]
					blk := p[(q*nb+b)*q8TileBlock:]
					d := FP16ToFP32(binary.LittleEndian.Uint16(wb)) * f32le(blk, (128+64*pair+32*half)/4)
					for l := 0; l < 8; l++ {
						s := int32(binary.LittleEndian.Uint32(blk[256+64*pair+32*half+4*l:]))
						for j := 0; j < 4; j++ {
							s += int32(wb[2+4*l+j]^0x80) * int32(int8(blk[32*i+4*l+j]))
						}
						acc[l] = fma32(d, float32(s), acc[l])
					}
				}
				out[(q*TileCols+i)*ldo+r] = hsum8(&acc)
			}
		}
	}
}

// tilerQ8_0Ref runs the plain-Go tile kernel (tests; CPUs without a tiled kernel get nil).
var tilerQ8_0Ref = &Tiler{blockBytes: q8TileBlock, pack: packQ8_0Tiles}
