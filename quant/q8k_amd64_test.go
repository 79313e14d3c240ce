package quant

import (
	"math/rand/v2"
	"testing"
)

// TestQ8KAVX512Coverage checks that the assembly itself quantizes ordinary blocks (the Go
// reference takes only those it stops at: amax Inf or NaN, 127/amax overflowing).
func TestQ8KAVX512Coverage(t *testing.T) {
	if !q8kSIMD {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(3, 4))
	const nb = 16
	x := make([]float32, nb*QK_K)
	dst := make([]byte, nb*q8kSize)
	for _, posMax := range []bool{false, true} {
		for b := 0; b < nb; b++ {
			q8kBlock(r, []int{0, 1, 2, 3, 4, 5, 6, 7, 12}[b%9], x[b*QK_K:(b+1)*QK_K])
		}
		if got := quantQ8KAVX512(&x[0], &dst[0], nb, posMax); got != nb {
			t.Fatalf("posMax %v: the assembly did %d of %d finite blocks", posMax, got, nb)
		}
		x[5*QK_K+7] = float32(1e-45)
		for j := 5 * QK_K; j < 6*QK_K; j++ {
			x[j] = 1e-45
		}
		if got := quantQ8KAVX512(&x[0], &dst[0], nb, posMax); got != 5 {
			t.Fatalf("posMax %v: stopped at %d, not at the block whose 127/amax overflows (5)", posMax, got)
		}
	}
}
