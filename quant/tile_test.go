package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// tileCase builds rows Q8_0 weight rows and T activation rows of n elements, some weights
// at the int8 extremes (-128 is legal in a file and exact through the +128 offset).
func tileCase(r *rand.Rand, rows, T, n int) (w []byte, rb int, act []byte) {
	rb = n / 32 * 34
	w = make([]byte, rows*rb)
	for i := 0; i < rows; i++ {
		if err := QuantizeRow(Q8_0, simdRandomFloats(r, n, i%3 == 0), w[i*rb:(i+1)*rb]); err != nil {
			panic(err)
		}
	}
	for k := 0; k < len(w)/50; k++ { // extremes in quant bytes, never in a scale
		i := r.IntN(len(w))
		if i%34 >= 2 {
			w[i] = []byte{0x80, 0x7f, 0x81}[k%3]
		}
	}
	ab := n / 32 * 34
	act = make([]byte, T*ab)
	for t := 0; t < T; t++ {
		if err := QuantizeActivations(Q8_0, simdRandomFloats(r, n, t%2 == 1), act[t*ab:(t+1)*ab]); err != nil {
			panic(err)
		}
	}
	return w, rb, act
}

// checkTiler holds tiler g to ref bit for bit on rows weight rows w (row i at w[i*rb:]) and
// T activation rows act (ab bytes each) of n elements: Pack writes every byte, and Rows over
// every range of column quads (padded last quads included) writes exactly that range.
func checkTiler(t *testing.T, what string, g *Tiler, w []byte, rb, rows int, act []byte, ab, T, n int, ref func(w, a []byte, n int) float32) {
	t.Helper()
	want := make([]float32, T*rows)
	for tt := 0; tt < T; tt++ {
		for i := 0; i < rows; i++ {
			want[tt*rows+i] = ref(w[i*rb:(i+1)*rb], act[tt*ab:(tt+1)*ab], n)
		}
	}
	packed := make([]byte, g.PackedBytes(T, n))
	for i := range packed {
		packed[i] = 0xAA // Pack must write every byte
	}
	g.Pack(act, T, n, packed)
	nq := (T + TileCols - 1) / TileCols
	for q0 := 0; q0 < nq; q0++ {
		for q1 := q0 + 1; q1 <= nq; q1++ {
			got := make([]float32, T*rows)
			for i := range got {
				got[i] = float32(math.NaN())
			}
			for g0 := 0; g0 < rows; g0 += TileRows {
				g.Rows(w[g0*rb:], rb, n, packed, T, q0, q1, got[g0:], rows)
			}
			for tt := 0; tt < T; tt++ {
				for i := 0; i < rows; i++ {
					v, inRange := got[tt*rows+i], tt >= q0*TileCols && tt < q1*TileCols
					if inRange && math.Float32bits(v) != math.Float32bits(want[tt*rows+i]) {
						t.Fatalf("%s n=%d T=%d quads [%d,%d): out[%d][%d] = %v, want %v", what, n, T, q0, q1, tt, i, v, want[tt*rows+i])
					}
					if !inRange && !math.IsNaN(float64(v)) {
						t.Fatalf("%s n=%d T=%d quads [%d,%d): wrote out[%d][%d] outside the range", what, n, T, q0, q1, tt, i)
					}
				}
			}
		}
	}
}

// tileKCase returns a maker of rows weight rows of K-quant type typ (quantized floats, or
// raw blocks: every quant, scale and min pattern) and T Q8_K activation rows of n elements
// (the type's activation quantizer on random floats, or raw Q8_K blocks), for checkKTilers.
func tileKCase(typ Type) func(r *rand.Rand, rows, T, n int, raw bool) (w []byte, rb int, act []byte) {
	return func(r *rand.Rand, rows, T, n int, raw bool) (w []byte, rb int, act []byte) {
		b, err := typ.RowBytes(int64(n))
		if err != nil {
			panic(err)
		}
		rb = int(b)
		if raw {
			w = simdRawBlocks(r, typ, rows*n/QK_K)
		} else {
			w = make([]byte, rows*rb)
			for i := 0; i < rows; i++ {
				if err := QuantizeRow(typ, simdRandomFloats(r, n, i%3 == 0), w[i*rb:(i+1)*rb]); err != nil {
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
			if err := QuantizeActivations(typ, simdRandomFloats(r, n, t%2 == 1), a); err != nil {
				panic(err)
			}
		}
		return w, rb, act
	}
}

// checkKTilers runs checkTiler for a K-quant type's tilers (the plain-Go reference and, where
// the CPU has it, the assembly) over n = 256·{1,2,3,8}, T = 1..13, random and raw blocks
// (mk makes the weights and activations), against ref; Tiles() must return asm for the type
// in mul_mat and mul_mat_id alike.
func checkKTilers(t *testing.T, typ Type, refTiler, asm *Tiler, seed uint64,
	mk func(r *rand.Rand, rows, T, n int, raw bool) (w []byte, rb int, act []byte), ref func(w, a []byte, n int) float32) {
	tilers := map[string]*Tiler{"ref": refTiler}
	if asm != nil {
		tilers["vnni"] = asm
	} else {
		t.Log("no AVX-512 VNNI: testing the plain-Go tile kernel only")
	}
	for _, gemm := range []bool{false, true} {
		if g := (LlamaMatMul{Type: typ, Rows: 12, T: 8, Gemm: gemm}).Tiles(); g != asm {
			t.Fatalf("Tiles (gemm=%v) = %p, want %p", gemm, g, asm)
		}
	}
	r := rand.New(rand.NewPCG(seed, seed+1))
	for _, nsb := range []int{1, 2, 3, 8} {
		n := nsb * QK_K
		for T := 1; T <= 13; T++ {
			for _, raw := range []bool{false, true} {
				for name, g := range tilers {
					const rows = 8
					w, rb, act := mk(r, rows, T, n, raw)
					checkTiler(t, fmt.Sprintf("%s raw=%v", name, raw), g, w, rb, rows, act, n/QK_K*q8kSize, T, n, ref)
				}
			}
		}
	}
}

// TestTileQ8_0 holds the tile kernels (plain Go and, where the CPU has it, AVX-512 VNNI) to
// dotQ8_0LanesRef — llama.cpp's per-output order — bit for bit, over column ranges that
// start and end anywhere, padded last quads included.
func TestTileQ8_0(t *testing.T) {
	tilers := map[string]*Tiler{"ref": tilerQ8_0Ref}
	if tilerQ8_0 != nil {
		tilers["vnni"] = tilerQ8_0
	} else {
		t.Log("no AVX-512 VNNI: testing the plain-Go tile kernel only")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{32, 96, 256, 2048} {
		for _, T := range []int{1, 3, 4, 5, 8, 13} {
			const rows = 8
			w, rb, act := tileCase(r, rows, T, n)
			for name, g := range tilers {
				checkTiler(t, name, g, w, rb, rows, act, n/32*34, T, n, dotQ8_0LanesRef)
			}
		}
	}
}

// The assembly packer writes packQ8_0Tiles' bytes (extreme quants included), padded quads too.
func TestPackQ8_0(t *testing.T) {
	if tilerQ8_0 == nil {
		t.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{32, 256, 2048} {
		for _, T := range []int{1, 4, 7, 8, 13} {
			_, _, act := tileCase(r, 4, T, n)
			for k := 0; k < len(act)/40; k++ {
				if i := r.IntN(len(act)); i%34 >= 2 {
					act[i] = []byte{0x80, 0x7f, 0x81}[k%3]
				}
			}
			size := tilerQ8_0.PackedBytes(T, n)
			a, b := make([]byte, size), make([]byte, size)
			for i := range a {
				a[i], b[i] = 0xAA, 0x55 // every byte must be written
			}
			tilerQ8_0.Pack(act, T, n, a)
			packQ8_0Tiles(act, T, n/32, b)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("n=%d T=%d: packed byte %d (quad %d, block offset %d) = %#x, want %#x", n, T, i, i/(n/32*q8TileBlock), i%q8TileBlock, a[i], b[i])
				}
			}
		}
	}
}

// reportMACs reports GMAC/s by wall time and, where the OS gives it, by the thread's CPU
// time (cpu-GMAC/s), which other load on a shared machine moves much less. run runs the
// kernel b.N times on the benchmark's locked OS thread.
func reportMACs(b *testing.B, macs float64, run func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := threadCPU()
	b.ResetTimer()
	run()
	b.StopTimer()
	b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
	if c1 := threadCPU(); c0 > 0 && c1 > c0 {
		b.ReportMetric(macs*float64(b.N)/(c1-c0).Seconds()/1e9, "cpu-GMAC/s")
	}
}

// BenchmarkTileQ8_0 compares the tile kernel with the 4-row kernel (one weight row × 4
// activation rows) on a 2048 × 2048 Q8_0 matrix and 64 activation rows (a prefill
// projection's shape): MAC/s counts weight×activation multiply-adds.
func BenchmarkTileQ8_0(b *testing.B) {
	const rows, T, n = 2048, 64, 2048
	r := rand.New(rand.NewPCG(1, 2))
	w, rb, act := tileCase(r, rows, T, n)
	ab := n / 32 * 34
	out := make([]float32, T*rows)
	macs := float64(rows * T * n)
	b.Run("rows4", func(b *testing.B) {
		f := dotRowsKernels[Q8_0]
		if f == nil {
			b.Skip("no 4-row Q8_0 kernel")
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
	for name, g := range map[string]*Tiler{"tile-ref": tilerQ8_0Ref, "tile": tilerQ8_0} {
		b.Run(name, func(b *testing.B) {
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
