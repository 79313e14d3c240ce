package quant

import (
	"math/rand/v2"
	"testing"
)

// tileQ6_KCase builds rows Q6_K weight rows (quantized floats, or raw blocks: every 6-bit
// quant and int8 scale) and T Q8_K activation rows of n elements (quantize_row_q8_K of
// random floats, or raw Q8_K blocks).
func tileQ6_KCase(r *rand.Rand, rows, T, n int, raw bool) (w []byte, rb int, act []byte) {
	rb = n / QK_K * 210
	if raw {
		w = simdRawBlocks(r, Q6_K, rows*n/QK_K)
	} else {
		w = make([]byte, rows*rb)
		for i := 0; i < rows; i++ {
			if err := QuantizeRow(Q6_K, simdRandomFloats(r, n, i%3 == 0), w[i*rb:(i+1)*rb]); err != nil {
				panic(err)
			}
		}
	}
	ab := n / QK_K * q8kSize
	act = make([]byte, T*ab)
	for t := 0; t < T; t++ {
		a := act[t*ab : (t+1)*ab]
		if raw && t%2 == 0 {
			copy(a, simdRawBlocks(r, Q8_K, n/QK_K))
			continue
		}
		if err := QuantizeActivations(Q6_K, simdRandomFloats(r, n, t%2 == 1), a); err != nil {
			panic(err)
		}
	}
	return w, rb, act
}

// TestTileQ6_K holds the Q6_K tile kernels (plain Go and, where the CPU has it, AVX-512
// VNNI) to dotQ6_KLanesRef bit for bit, over column ranges that start and end anywhere,
// padded last quads included.
func TestTileQ6_K(t *testing.T) {
	checkKTilers(t, Q6_K, tilerQ6_KRef, tilerQ6_K, 13, tileQ6_KCase, dotQ6_KLanesRef)
}

// BenchmarkTileQ6_K compares the Q6_K tile kernel with the 4-row kernel (dotRowsKernels:
// one weight row × 4 activation rows, dotQ6_KRows4AVX2 on amd64) on a 2048 × 2048 Q6_K
// matrix and 64 activation rows (a prefill projection's shape): MAC/s counts
// weight×activation multiply-adds (reportMACs: by wall and by thread CPU time).
func BenchmarkTileQ6_K(b *testing.B) {
	const rows, T, n = 2048, 64, 2048
	r := rand.New(rand.NewPCG(1, 2))
	w, rb, act := tileQ6_KCase(r, rows, T, n, false)
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
