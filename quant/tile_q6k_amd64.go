package quant

import "golang.org/x/sys/cpu"

// tilerQ6_K is the AVX-512 VNNI Q6_K tile kernel (tile_q6k_amd64.s), where the CPU has it.
var tilerQ6_K *Tiler

func init() {
	x := cpu.X86
	if x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VNNI && x.HasF16C {
		tilerQ6_K = &Tiler{blockBytes: q6kTileSB / 8, pack: packQ6_KTiles, asm: true, kind: tileQ6_K}
	}
}

func tileQ6_KAsm(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	nsb := nb / 8
	_ = w[3*rb+nsb*210-1]
	_ = p[nq*nsb*q6kTileSB-1]
	_ = out[(nq*TileCols-1)*ldo+TileRows-1]
	tileQ6_KVNNI(&w[0], rb, &p[0], nsb, nq, &out[0], ldo)
}

// tileQ6_KVNNI computes nq column quads of 4 weight rows (row i at w+i*rb, nsb Q6_K
// super-blocks) against packed activations (packQ6_KTiles): out[(4q+c)*ldo + i], in
// dotQ6_KLanesRef's order. nsb, nq ≥ 1.
//
//go:noescape
func tileQ6_KVNNI(w *byte, rb int, p *byte, nsb, nq int, out *float32, ldo int)
