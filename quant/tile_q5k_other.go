//go:build !amd64

package quant

var tilerQ5_K *Tiler

func tileQ5_KAsm(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	tileQ5_KRef(w, rb, p, nb, nq, out, ldo)
}
