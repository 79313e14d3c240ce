package quant

import "golang.org/x/sys/cpu"

// tilerQ5_K is the AVX-512 VNNI Q5_K tile kernel (tile_q5k_amd64.s), where the CPU has it.
var tilerQ5_K *Tiler

func init() {
	x := cpu.X86
	if x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VNNI && x.HasF16C {
		tilerQ5_K = &Tiler{blockBytes: q5kTileSB / 8, pack: packQ5_KTiles, asm: true, kind: tileQ5_K}
	}
}

func tileQ5_KAsm(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	nsb := nb / 8
	_ = w[3*rb+nsb*176-1]
	_ = p[nq*nsb*q5kTileSB-1]
	_ = out[(nq*TileCols-1)*ldo+TileRows-1]
	tileQ5_KVNNI(&w[0], rb, &p[0], nsb, nq, &out[0], ldo)
}

// tileQ5_KVNNI computes nq column quads of 4 weight rows (row i at w+i*rb, nsb Q5_K
// super-blocks) against packed activations (packQ5_KTiles): out[(4q+c)*ldo + i], in
// dotQ5_KLanesRef's order. nsb, nq ≥ 1.
//
//go:noescape
func tileQ5_KVNNI(w *byte, rb int, p *byte, nsb, nq int, out *float32, ldo int)
