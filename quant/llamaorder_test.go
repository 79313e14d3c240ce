package quant

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// The AVX2 kernel gives the reference's bits; the reference itself is checked against
// llama.cpp through the model's parity tests (bit-identical logits on Q8_0 and F32 models).
func TestLlamaOrderQ8_0Kernel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, nb := range []int{1, 2, 3, 8, 9, 64, 127} {
		n := nb * 32
		for trial := 0; trial < 50; trial++ {
			x := make([]float32, n)
			y := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(8))))
				y[i] = float32(r.NormFloat64())
			}
			if trial%5 == 0 {
				x[0], y[1] = 1e4, -1e4 // extreme scales and full-range int8 codes
			}
			w := make([]byte, n/32*34)
			a := make([]byte, n/32*34)
			if err := QuantizeRow(Q8_0, x, w); err != nil {
				t.Fatal(err)
			}
			if err := QuantizeActivations(Q8_0, y, a); err != nil {
				t.Fatal(err)
			}
			got, want := dotQ8_0Lanes(w, a, n), dotQ8_0LanesRef(w, a, n)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("nb=%d: %v, reference %v", nb, got, want)
			}
			// And it is the same dot product as DotRef up to float rounding.
			if ref := DotRef(Q8_0, w, a, n); math.Abs(float64(got-ref)) > 1e-4*math.Abs(float64(ref))+1e-3 {
				t.Fatalf("nb=%d: %v far from DotRef %v", nb, got, ref)
			}
		}
	}
}

func TestLlamaOrderF32(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{16, 64, 256, 200, 1000} {
		w := make([]byte, 4*n)
		a := make([]byte, 4*n)
		var exact float64
		for i := 0; i < n; i++ {
			x, y := float32(r.NormFloat64()), float32(r.NormFloat64())
			putF32(w, 4*i, x)
			putF32(a, 4*i, y)
			exact += float64(x) * float64(y)
		}
		for name, f := range map[string]func(w, a []byte, n int) float32{"vec": dotF32Vec, "gemm": dotF32Gemm} {
			if got := f(w, a, n); math.Abs(float64(got)-exact) > 1e-5*float64(n) {
				t.Fatalf("%s n=%d: %v, exact %v", name, n, got, exact)
			}
		}
	}
}

func BenchmarkDotQ8_0Lanes(b *testing.B) {
	const n = 4096
	w := make([]byte, n/32*34)
	a := make([]byte, n/32*34)
	b.SetBytes(int64(len(w)))
	for i := 0; i < b.N; i++ {
		dotQ8_0Lanes(w, a, n)
	}
}

// randKRows returns a weight row of type wt and a Q8_K activation row of n elements.
func randKRows(r *rand.Rand, wt Type, n int) (w, a []byte, y []float32) {
	x := make([]float32, n)
	y = make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(4))))
		y[i] = float32(r.NormFloat64())
	}
	wb, _ := wt.RowBytes(int64(n))
	w = make([]byte, wb)
	a = make([]byte, n/QK_K*q8kSize)
	if err := QuantizeRow(wt, x, w); err != nil {
		panic(err)
	}
	if err := QuantizeActivations(wt, y, a); err != nil {
		panic(err)
	}
	return w, a, y
}

// The K-quant kernels compute DotRef's dot product up to float rounding, and the 4x8
// activation quantizer is quantize_row_q8_K_ref but for the tie rule of its scale's sign.
func TestLlamaOrderKQuants(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, nb := range []int{1, 2, 5} {
		n := nb * QK_K
		for trial := 0; trial < 40; trial++ {
			for _, c := range []struct {
				wt  Type
				dot func(w, a []byte, n int) float32
			}{{Q4_K, dotQ4_KGemvRef}, {Q4_K, dotQ4_KGemmRef}, {Q6_K, dotQ6_KLanesRef}} {
				w, a, _ := randKRows(r, c.wt, n)
				got, ref := c.dot(w, a, n), DotRef(c.wt, w, a, n)
				if math.Abs(float64(got-ref)) > 1e-4*math.Abs(float64(ref))+1e-3 {
					t.Fatalf("%s nb=%d: %v far from DotRef %v", c.wt, nb, got, ref)
				}
			}
			_, a, y := randKRows(r, Q4_K, n)
			b := make([]byte, len(a))
			quantQ8K4x8Ref(y, b)
			if string(a) != string(b) {
				t.Fatalf("nb=%d: 4x8 quantization differs from quantize_row_q8_K without a tie", nb)
			}
		}
	}
	// A tie: +max after −max. The reference takes −max's sign, the 4x8 quantizer +max's.
	y := make([]float32, QK_K)
	y[3], y[7], y[9] = -2, 2, 0.5
	a, b := make([]byte, q8kSize), make([]byte, q8kSize)
	quantRefQ8_K(y, a)
	quantQ8K4x8Ref(y, b)
	if f32At(a, 0) != -f32At(b, 0) || int8(a[q8kQs+7]) != 127 || int8(b[q8kQs+7]) != -127 {
		t.Fatalf("tie: d %v / %v, q[7] %d / %d", f32At(a, 0), f32At(b, 0), int8(a[q8kQs+7]), int8(b[q8kQs+7]))
	}
}

// LlamaMatMul.Kernels gives Row's bits: its SIMD kernels equal the references, for every row
// of a batch with a GEMM group and left-over rows, and for single rows and experts.
func TestLlamaMatMulKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, wt := range []Type{Q4_K, Q6_K, Q8_0, F32} {
		for _, mm := range []LlamaMatMul{
			{Type: wt, Rows: 8, T: 7, Gemm: true}, {Type: wt, Rows: 8, T: 1}, {Type: wt, Rows: 8, T: 5},
			{Type: wt, Rows: 12, T: 6, Gemm: true},
		} {
			split, head, tail, ok := mm.Kernels()
			if !ok {
				t.Fatalf("%s: no kernels", wt)
			}
			for _, n := range []int{QK_K, 3 * QK_K} {
				wb, _ := wt.RowBytes(int64(n))
				ab := ActivationBytes(wt, n)
				for i := 0; i < mm.T; i++ {
					k := head
					if i >= split {
						k = tail
					}
					refAct, refDot := mm.Row(i)
					if refDot == nil {
						refDot = Kernel(wt)
					}
					if k.Dot == nil {
						k.Dot = Kernel(wt)
					}
					for trial := 0; trial < 8; trial++ {
						x, y := make([]float32, n), make([]float32, n)
						for j := range x {
							x[j] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(4))))
							y[j] = float32(r.NormFloat64())
						}
						w, a, b := make([]byte, wb), make([]byte, ab), make([]byte, ab)
						if err := QuantizeRow(wt, x, w); err != nil {
							t.Fatal(err)
						}
						k.Act(y, a)
						refAct(y, b)
						if string(a) != string(b) {
							t.Fatalf("%s %+v row %d: activations differ", wt, mm, i)
						}
						if got, want := k.Dot(w, a, n), refDot(w, a, n); math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s %+v row %d n=%d: %v, reference %v", wt, mm, i, n, got, want)
						}
					}
				}
			}
		}
	}
}

// The multi-row kernels LlamaMatMul hands out give the one-row kernels' bits.
func TestLlamaRowsKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, typ := range []Type{Q8_0, Q6_K, Q4_K} {
		n := 512
		_, head, _, ok := LlamaMatMul{Type: typ, Rows: 8, T: 8, Gemm: true}.Kernels()
		if !ok || head.Rows == nil {
			t.Skipf("%s: no multi-row kernel on this CPU", typ)
		}
		rb, _ := typ.RowBytes(int64(n))
		ab := ActivationBytes(typ, n)
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		w := make([]byte, rb)
		if err := QuantizeRow(typ, x, w); err != nil {
			t.Fatal(err)
		}
		a := make([]byte, LlamaRowsWidth*ab)
		for row := 0; row < LlamaRowsWidth; row++ {
			for i := range x {
				x[i] = float32(r.NormFloat64() * float64(row+1))
			}
			head.Act(x, a[row*ab:(row+1)*ab])
		}
		out := make([]float32, LlamaRowsWidth)
		head.Rows(w, a, n, out)
		for row := range out {
			if want := head.Dot(w, a[row*ab:(row+1)*ab], n); math.Float32bits(out[row]) != math.Float32bits(want) {
				t.Fatalf("%s row %d: %v, one-row kernel %v", typ, row, out[row], want)
			}
		}
	}
}

// The 4-row Q8_0 kernel (DotRows) gives llama.cpp's order too, so prefill can use it.
func TestLlamaOrderQ8_0Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, nb := range []int{1, 3, 8, 33} {
		n := nb * 32
		w := make([]byte, nb*34)
		a := make([]byte, 4*nb*34)
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		if err := QuantizeRow(Q8_0, x, w); err != nil {
			t.Fatal(err)
		}
		for row := 0; row < 4; row++ {
			for i := range x {
				x[i] = float32(r.NormFloat64() * float64(row+1))
			}
			if err := QuantizeActivations(Q8_0, x, a[row*nb*34:(row+1)*nb*34]); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]float32, 4)
		DotRows(Q8_0, w, a, n, out)
		for row := range out {
			want := dotQ8_0LanesRef(w, a[row*nb*34:(row+1)*nb*34], n)
			if math.Float32bits(out[row]) != math.Float32bits(want) {
				t.Fatalf("nb=%d row %d: %v, llama order %v", nb, row, out[row], want)
			}
		}
	}
}

// The vector Q8_0 activation quantizer gives the Go emulation's bytes (which the reference
// tests hold to ggml-cpu's own output), on ordinary rows, zeros, ties at .5 and huge values.
func TestQuantActQ8_0Fast(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 300; trial++ {
		n := 32 * (1 + r.IntN(12))
		x := make([]float32, n)
		for i := range x {
			switch r.IntN(6) {
			case 0:
				x[i] = 0
			case 1:
				x[i] = float32(r.IntN(255)-127) / 2 // exact halves: ties
			case 2:
				x[i] = float32(r.NormFloat64() * 1e30)
			default:
				x[i] = float32(r.NormFloat64())
			}
		}
		if trial%7 == 0 {
			for i := range x[:32] {
				x[i] = 0 // an all-zero block
			}
		}
		got := make([]byte, n/32*34)
		want := make([]byte, n/32*34)
		formats[Q8_0].act(x, got)
		quantActQ8_0(x, want)
		if !bytes.Equal(got, want) {
			t.Fatalf("trial %d: the fast quantizer differs from the reference", trial)
		}
	}
}

// The F16 kernel in ggml's AVX-512 order gives the reference's bits at every length.
func TestLlamaOrderF16(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{8, 32, 63, 64, 65, 128, 200, 256} {
		w, a := make([]byte, 2*n), make([]byte, 2*n)
		for i := 0; i < n; i++ {
			putF16(w, 2*i, float32(r.NormFloat64()))
			putF16(a, 2*i, float32(r.NormFloat64()))
		}
		got, want := LlamaKernel(F16, false)(w, a, n), dotF16LanesRef(w, a, n)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: %v, reference %v", n, got, want)
		}
	}
}
