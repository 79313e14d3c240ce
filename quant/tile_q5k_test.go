package quant

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
)

// TestDotQ5_KLanesRef holds dotQ5_KLanesRef to llama.cpp's own ggml_vec_dot_q5_K_q8_K
// outputs (testdata/simd_llama_dots.json, see TestSIMDLlamaOrder) and, bit for bit, to the
// registered SIMD kernel (dotQ5_KAVX2, itself checked against those outputs) on random and
// raw blocks.
func TestDotQ5_KLanesRef(t *testing.T) {
	raw, err := os.ReadFile("testdata/simd_llama_dots.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Type string
		N    int
		W, A string
		Bits uint32
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range cases {
		if c.Type != "Q5_K" {
			continue
		}
		seen++
		w, _ := hex.DecodeString(c.W)
		a, _ := hex.DecodeString(c.A)
		if got := dotQ5_KLanesRef(w, a, c.N); math.Float32bits(got) != c.Bits {
			t.Errorf("n=%d: %g, llama.cpp %g", c.N, got, math.Float32frombits(c.Bits))
		}
	}
	if seen == 0 {
		t.Fatal("no Q5_K cases in testdata/simd_llama_dots.json")
	}
	simd := simdLlamaVecDot(Q5_K)
	if simd == nil {
		t.Skip("no SIMD Q5_K kernel on this CPU")
	}
	// Kernels hands out the SIMD kernel for Q5_K rows, not the plain-Go reference.
	for _, gemm := range []bool{false, true} {
		_, head, tail, _ := LlamaMatMul{Type: Q5_K, Rows: 8, T: 5, Gemm: gemm}.Kernels()
		if reflect.ValueOf(head.Dot).Pointer() != reflect.ValueOf(simd).Pointer() || reflect.ValueOf(tail.Dot).Pointer() != reflect.ValueOf(simd).Pointer() {
			t.Fatalf("Kernels (gemm=%v): Q5_K rows do not take the SIMD kernel", gemm)
		}
	}
	r := rand.New(rand.NewPCG(51, 52))
	for _, nsb := range []int{1, 2, 3, 8, 9} {
		n := nsb * QK_K
		for trial := 0; trial < 64; trial++ {
			w, _, act := tileKCase(Q5_K)(r, 1, 1, n, trial%2 == 1)
			got, want := dotQ5_KLanesRef(w, act, n), simd(w, act, n)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d trial %d: %v, SIMD kernel %v", n, trial, got, want)
			}
		}
	}
}

// TestTileQ5_K holds the Q5_K tile kernels (plain Go and, where the CPU has it, AVX-512
// VNNI) to dotQ5_KLanesRef bit for bit, over column ranges that start and end anywhere,
// padded last quads included.
func TestTileQ5_K(t *testing.T) {
	checkKTilers(t, Q5_K, tilerQ5_KRef, tilerQ5_K, 15, tileKCase(Q5_K), dotQ5_KLanesRef)
}

// BenchmarkTileQ5_K compares the Q5_K tile kernel with the one-row kernel the model used
// for Q5_K products before (LlamaMatMul.Kernels' head, dotQ5_KAVX2 on amd64: Q5_K had no
// multi-row kernel there) and the 4-row kernel (dotRowsKernels: one weight row × 4
// activation rows, dotQ5_KRows4AVX2) on a 2048 × 2048 Q5_K matrix and 64 activation rows
// (a prefill projection's shape): MAC/s counts weight×activation multiply-adds
// (reportMACs: by wall and by thread CPU time).
func BenchmarkTileQ5_K(b *testing.B) {
	const rows, T, n = 2048, 64, 2048
	r := rand.New(rand.NewPCG(1, 2))
	w, rb, act := tileKCase(Q5_K)(r, rows, T, n, false)
	ab := n / QK_K * q8kSize
	out := make([]float32, T*rows)
	macs := float64(rows * T * n)
	b.Run("row", func(b *testing.B) {
		_, head, _, _ := LlamaMatMul{Type: Q5_K, Rows: rows, T: T, Gemm: true}.Kernels()
		f := head.Dot
		if f == nil {
			f = Kernel(Q5_K)
		}
		reportMACs(b, macs, func() {
			for range b.N {
				for i := 0; i < rows; i++ {
					for t := 0; t < T; t++ {
						out[t*rows+i] = f(w[i*rb:(i+1)*rb], act[t*ab:(t+1)*ab], n)
					}
				}
			}
		})
	})
	b.Run("rows4", func(b *testing.B) {
		f := dotRowsKernels[Q5_K]
		if f == nil {
			b.Skip("no 4-row Q5_K kernel")
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
	}{{"tile-ref", tilerQ5_KRef}, {"tile", tilerQ5_K}} {
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
