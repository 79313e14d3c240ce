//go:build !amd64

package quant

var tilerQ4_KGemm, tilerQ4_KGemv *Tiler

func tileQ4_KAsm(gemm bool, w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	tileQ4_KRef(gemm, w, rb, p, nb, nq, out, ldo)
}
