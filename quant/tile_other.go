//go:build !amd64

package quant

var tilerQ8_0 *Tiler

func tileQ8_0Asm(w []byte, rb int, p []byte, nb, nq int, out []float32, ldo int) {
	tileQ8_0Ref(w, rb, p, nb, nq, out, ldo)
}
