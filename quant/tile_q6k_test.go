package quant

import (
	"math/rand/v2"
	"testing"
)

// TestTileQ6_K holds the Q6_K tile kernels (plain Go and, where the CPU has it, AVX-512
// VNNI) to dotQ6_KLanesRef bit for bit, over column ranges that start and end anywhere,
// padded last quads included.
func TestTileQ6_K(t *testing.T) {
	checkKTilers(t, Q6_K, tilerQ6_KRef, tilerQ6_K, 13, tileKCase(Q6_K), dotQ6_KLanesRef)
}

// BenchmarkTileQ6_K compares the Q6_K tile kernel with the 4-row kernel (dotRowsKernels:
// one weight row × 4 activation rows, dotQ6_KRows4AVX2 on amd64) on a 2048 × 2048 Q6_K
// matrix and 64 activation rows (a prefill projection's shape): MAC/s counts
// weight×activation multiply-adds (reportMACs: by wall and by thread CPU time).
func BenchmarkTileQ6_K(b *testing.B) {
	const rows, T, n = 2048, 64, 2048
	r := rand.New(rand.NewPCG(1, 2))
	w, rb, act := tileKCase(Q6_K)(r, rows, T, n, false)
	ab := n / QK_K * q8kSize
	out := make([]float32, T*rows)
	macs := float64(rows * T * n)
	b.Run("rows4", func(b *testing.B) {
		f := dotRowsKernels[Q6_K]
		if f == nil {
			b.Skip("no 4-row Q6_K kernel")
		}
		var four [4]float32
		reportMACs(b, macs, func() {
			for range b.N {
				for i := 0; i < rows; i++ {
					for t := 0; t < T; t += 4 {
						f(w[i*rb:(i+1)*rb], act[t*ab:(t+4)*ab], n, four[:])
					}
				}
			}
		})
	})
	for _, tc := range []struct {
		name string
		g    *Tiler
	}{{"tile-ref", tilerQ6_KRef}, {"tile", tilerQ6_K}} {
		g := tc.g
		b.Run(tc.name, func(b *testing.B) {
			if g == nil {
				b.Skip("no AVX-512 VNNI")
			}
			packed := make([]byte, g.PackedBytes(T, n))
			reportMACs(b, macs, func() {
				for range b.N {
					g.Pack(act, T, n, packed)
					for i := 0; i < rows; i += TileRows {
						g.Rows(w[i*rb:], rb, n, packed, T, 0, T/TileCols, out[i:], rows)
					}
				}
			})
		})
	}
}
