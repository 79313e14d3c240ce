package quant

import "golang.org/x/sys/cpu"

// tilerQ8_0 is the AVX-512 VNNI tile kernel (tile_amd64.s), where the CPU has it.
var tilerQ8_0 *Tiler

func init() {
	x := cpu.X86
	if x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VNNI && x.HasF16C {
		tilerQ8_0 = &Tiler{blockBytes: q8TileBlock, pack: packQ8_0TilesAsm, asm: true}
	}
}

func tileQ8_0Asm(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	_ = w[3*rb+nb*34-1]
	_ = p[nq*nb*q8TileBlock-1]
	_ = out[(nq*TileCols-1)*ldo+TileRows-1]
	tileQ8_0VNNI(&w[0], rb, &p[0], nb, nq, &out[0], ldo)
}

// tileQ8_0VNNI computes nq column quads of 4 weight rows (row i at w+i*rb, nb Q8_0 blocks)
// against packed activations (packQ8_0Tiles): out[(4q+c)*ldo + i]. nb, nq ≥ 1.
//
//go:noescape
func tileQ8_0VNNI(w *byte, rb int, p *byte, nb, nq int, out *float32, ldo int)

// packQ8_0TilesAsm is packQ8_0Tiles with the full column quads packed in assembly.
func packQ8_0TilesAsm(act []byte, T, nb int, dst []byte) {
	full, ab := T/TileCols, nb*34
	if full > 0 && nb > 0 {
		_ = act[full*TileCols*ab-1]
		_ = dst[full*nb*q8TileBlock-1]
		packQ8_0VNNI(&act[0], ab, full, nb, &dst[0])
	}
	if T > full*TileCols {
		packQ8_0Tiles(act[full*TileCols*ab:], T-full*TileCols, nb, dst[full*nb*q8TileBlock:])
	}
}

//go:noescape
func packQ8_0VNNI(act *byte, ab, nq, nb int, dst *byte)
