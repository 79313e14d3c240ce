//go:build !amd64

package quant

var tilerQ6_K *Tiler

func tileQ6_KAsm(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	tileQ6_KRef(w, rb, p, nb, nq, out, ldo)
}
