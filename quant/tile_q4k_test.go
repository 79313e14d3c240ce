package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// tileQ4_KCase builds rows Q4_K weight rows (quantized floats, or raw blocks: every nibble
// and 6-bit scale/min value) and T Q8_K activation rows of n elements, quantized as llama.cpp
// quantizes the rows of the order (quantQ8K4x8Ref for the GEMM group, quantize_row_q8_K for
// the GEMV), or raw Q8_K blocks.
func tileQ4_KCase(r *rand.Rand, rows, T, n int, gemm, raw bool) (w []byte, rb int, act []byte) {
	rb = n / QK_K * 144
	if raw {
		w = simdRawBlocks(r, Q4_K, rows*n/QK_K)
	} else {
		w = make([]byte, rows*rb)
		for i := 0; i < rows; i++ {
			if err := QuantizeRow(Q4_K, simdRandomFloats(r, n, i%3 == 0), w[i*rb:(i+1)*rb]); err != nil {
				panic(err)
			}
		}
	}
	ab := n / QK_K * q8kSize
	act = make([]byte, T*ab)
	for t := 0; t < T; t++ {
		a := act[t*ab : (t+1)*ab]
		switch {
		case raw && t%2 == 0:
			copy(a, simdRawBlocks(r, Q8_K, n/QK_K))
		case gemm:
			quantQ8K4x8Ref(simdRandomFloats(r, n, t%2 == 1), a)
		default:
			if err := QuantizeActivations(Q4_K, simdRandomFloats(r, n, t%2 == 1), a); err != nil {
				panic(err)
			}
		}
	}
	return w, rb, act
}

// TestTileQ4_K holds the Q4_K tile kernels (plain Go and, where the CPU has it, AVX-512
// VNNI) to dotQ4_KGemmRef (GEMM order) and dotQ4_KGemvRef (GEMV order) bit for bit, over
// column ranges that start and end anywhere, padded last quads included.
func TestTileQ4_K(t *testing.T) {
	type tiler struct {
		name string
		g    *Tiler
		gemm bool
	}
	tilers := []tiler{{"ref-gemm", tilerQ4_KGemmRef, true}, {"ref-gemv", tilerQ4_KGemvRef, false}}
	if tilerQ4_KGemm != nil {
		tilers = append(tilers, tiler{"vnni-gemm", tilerQ4_KGemm, true}, tiler{"vnni-gemv", tilerQ4_KGemv, false})
	} else {
		t.Log("no AVX-512 VNNI: testing the plain-Go tile kernels only")
	}
	if g := (LlamaMatMul{Type: Q4_K, Rows: 16, T: 8, Gemm: true}).Tiles(); g != tilerQ4_KGemm {
		t.Fatalf("Tiles (GEMM) = %p, want %p", g, tilerQ4_KGemm)
	}
	if g := (LlamaMatMul{Type: Q4_K, Rows: 16, T: 8}).Tiles(); g != tilerQ4_KGemv {
		t.Fatalf("Tiles (GEMV) = %p, want %p", g, tilerQ4_KGemv)
	}
	if (LlamaMatMul{Type: Q4_K, Rows: 12, T: 8, Gemm: true}).Tiles() != nil {
		t.Fatal("Tiles for Q4_K rows not a multiple of 8 (not repacked by llama.cpp)")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, nsb := range []int{1, 2, 3, 8} {
		n := nsb * QK_K
		for T := 1; T <= 13; T++ {
			for _, raw := range []bool{false, true} {
				for _, tl := range tilers {
					const rows = 8
					w, rb, act := tileQ4_KCase(r, rows, T, n, tl.gemm, raw)
					ab := n / QK_K * q8kSize
					ref := dotQ4_KGemvRef
					if tl.gemm {
						ref = dotQ4_KGemmRef
					}
					checkTiler(t, fmt.Sprintf("%s raw=%v", tl.name, raw), tl.g, w, rb, rows, act, ab, T, n, ref)
				}
			}
		}
	}
}

// BenchmarkTileQ4_K compares the Q4_K tile kernels with the 4-row kernel
// (simdLlamaQ4_KRows4: one weight row × 4 activation rows), in both orders, on a 2048 × 2048
// Q4_K matrix and 64 activation rows (a prefill projection's shape): MAC/s counts
// weight×activation multiply-adds.
func BenchmarkTileQ4_K(b *testing.B) {
	const rows, T, n = 2048, 64, 2048
	for _, gemm := range []bool{true, false} {
		order := map[bool]string{true: "gemm", false: "gemv"}[gemm]
		r := rand.New(rand.NewPCG(1, 2))
		w, rb, act := tileQ4_KCase(r, rows, T, n, gemm, false)
		ab := n / QK_K * q8kSize
		out := make([]float32, T*rows)
		macs := float64(rows * T * n)
		b.Run(order+"/rows4", func(b *testing.B) {
			var four [4]float32
			for b.Loop() {
				for i := 0; i < rows; i++ {
					for t := 0; t < T; t += 4 {
						if !simdLlamaQ4_KRows4(gemm, w[i*rb:(i+1)*rb], act[t*ab:(t+4)*ab], n, four[:]) {
							b.Skip("no 4-row Q4_K kernel")
						}
					}
				}
			}
			b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
		tl := map[bool][2]*Tiler{true: {tilerQ4_KGemmRef, tilerQ4_KGemm}, false: {tilerQ4_KGemvRef, tilerQ4_KGemv}}[gemm]
		for i, name := range []string{"tile-ref", "tile"} {
			g := tl[i]
			b.Run(order+"/"+name, func(b *testing.B) {
				if g == nil {
					b.Skip("no AVX-512 VNNI")
				}
				packed := make([]byte, g.PackedBytes(T, n))
				for b.Loop() {
					g.Pack(act, T, n, packed)
					for i := 0; i < rows; i += TileRows {
						g.Rows(w[i*rb:], rb, n, packed, T, 0, T/TileCols, out[i:], rows)
					}
				}
				b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}
