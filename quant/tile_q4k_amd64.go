package quant

import "golang.org/x/sys/cpu"

// tilerQ4_KGemm and tilerQ4_KGemv are the AVX-512 VNNI Q4_K tile kernels
// (tile_q4k_amd64.s), where the CPU has them.
var tilerQ4_KGemm, tilerQ4_KGemv *Tiler

func init() {
	x := cpu.X86
	if x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VNNI {
		tilerQ4_KGemm = &Tiler{blockBytes: q4kTileSB / 8, pack: packQ4_KTiles, asm: true, kind: tileQ4_KGemm}
		tilerQ4_KGemv = &Tiler{blockBytes: q4kTileSB / 8, pack: packQ4_KTiles, asm: true, kind: tileQ4_KGemv}
	}
}

func tileQ4_KAsm(gemm bool, w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	nsb := nb / 8
	_ = w[3*rb+nsb*144-1]
	_ = p[nq*nsb*q4kTileSB-1]
	_ = out[(nq*TileCols-1)*ldo+TileRows-1]
	if gemm {
		tileQ4_KGemmVNNI(&w[0], rb, &p[0], nsb, nq, &out[0], ldo)
		return
	}
	tileQ4_KGemvVNNI(&w[0], rb, &p[0], nsb, nq, &out[0], ldo)
}

// tileQ4_KGemmVNNI and tileQ4_KGemvVNNI compute nq column quads of 4 weight rows (row i at
// w+i*rb, nsb Q4_K super-blocks) against packed activations (packQ4_KTiles):
// out[(4q+c)*ldo + i], in dotQ4_KGemmRef's and dotQ4_KGemvRef's order. nsb, nq ≥ 1.
//
//go:noescape
func tileQ4_KGemmVNNI(w *byte, rb int, p *byte, nsb, nq int, out *float32, ldo int)

//go:noescape
func tileQ4_KGemvVNNI(w *byte, rb int, p *byte, nsb, nq int, out *float32, ldo int)
