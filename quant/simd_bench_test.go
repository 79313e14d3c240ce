package quant

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"unsafe"
)

// Benchmarks of the SIMD kernels against the reference. Each streams a weight matrix of
// rows of n = 4096 elements, 64 MiB in all (more than L2+L3), against one activation row, so
// the GB/s figure (weight bytes per second) is memory-bound and honest. Compare with
// BenchmarkSIMDMemBandwidth.

const (
	simdBenchN     = 4096
	simdBenchBytes = 64 << 20
)

// simdBenchMatrix returns a weight matrix of ~64 MiB of type t (a few distinct quantized
// rows, repeated), its row size, and one activation row.
func simdBenchMatrix(b *testing.B, t Type, size int) (w []byte, rowBytes int, a []byte) {
	r := rand.New(rand.NewPCG(1, uint64(t)))
	n := simdBenchN
	rb, err := t.RowBytes(int64(n))
	if err != nil {
		b.Fatal(err)
	}
	rowBytes = int(rb)
	rows := max(size/rowBytes, 1)
	w = make([]byte, rows*rowBytes)
	for i := 0; i < 8 && i < rows; i++ {
		if err := QuantizeRow(t, simdRandomFloats(r, n, false), w[i*rowBytes:(i+1)*rowBytes]); err != nil {
			b.Skip(err)
		}
	}
	for i := 8; i < rows; i++ {
		copy(w[i*rowBytes:(i+1)*rowBytes], w[(i%8)*rowBytes:])
	}
	a = make([]byte, ActivationBytes(t, n))
	if err := QuantizeActivations(t, simdRandomFloats(r, n, false), a); err != nil {
		b.Skip(err)
	}
	return w, rowBytes, a
}

func simdBenchTypes() []Type {
	var ts []Type
	for t := range dotKernels {
		if f := formats[t]; f != nil && f.dot != nil {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}

func simdBenchDot(b *testing.B, t Type, f func(w, a []byte, n int) float32) {
	simdBenchDotSize(b, t, f, simdBenchBytes)
}

func simdBenchDotSize(b *testing.B, t Type, f func(w, a []byte, n int) float32, size int) {
	w, rowBytes, a := simdBenchMatrix(b, t, size)
	rows := len(w) / rowBytes
	b.SetBytes(int64(rowBytes))
	b.ResetTimer()
	var s float32
	for i := 0; i < b.N; i++ {
		row := i % rows
		s += f(w[row*rowBytes:(row+1)*rowBytes], a, simdBenchN)
	}
	simdSink = s
}

var simdSink float32

// BenchmarkDotFast runs the best registered kernel of each type.
func BenchmarkDotFast(b *testing.B) {
	for _, t := range simdBenchTypes() {
		b.Run(t.String(), func(b *testing.B) { simdBenchDot(b, t, dotKernels[t]) })
	}
}

// BenchmarkDotFastL2 runs the best kernels on a 256 KiB matrix that stays in the L2 cache: the
// kernels' compute speed, i.e. their headroom above memory bandwidth.
func BenchmarkDotFastL2(b *testing.B) {
	for _, t := range simdBenchTypes() {
		b.Run(t.String(), func(b *testing.B) { simdBenchDotSize(b, t, dotKernels[t], 256<<10) })
	}
}

// BenchmarkDotFastL2AVX2 is BenchmarkDotFastL2 with the AVX2 kernels.
func BenchmarkDotFastL2AVX2(b *testing.B) {
	defer setSIMDLevel(simdMaxLevel)
	if setSIMDLevel(simdAVX2) != simdAVX2 {
		b.Skip("no AVX2")
	}
	for _, t := range simdBenchTypes() {
		b.Run(t.String(), func(b *testing.B) { simdBenchDotSize(b, t, dotKernels[t], 256<<10) })
	}
}

// BenchmarkDotFastAVX2 runs the AVX2 kernels (on an AVX-512 machine too).
func BenchmarkDotFastAVX2(b *testing.B) {
	defer setSIMDLevel(simdMaxLevel)
	if setSIMDLevel(simdAVX2) != simdAVX2 {
		b.Skip("no AVX2")
	}
	for _, t := range simdBenchTypes() {
		b.Run(t.String(), func(b *testing.B) { simdBenchDot(b, t, dotKernels[t]) })
	}
}

// BenchmarkDotRef runs the plain-Go reference on the same data.
func BenchmarkDotRef(b *testing.B) {
	for _, t := range simdBenchTypes() {
		b.Run(t.String(), func(b *testing.B) { simdBenchDot(b, t, formats[t].dot) })
	}
}

// BenchmarkSIMDMemBandwidth measures this machine's memory bandwidth on 256 MiB: "copy"
// counts bytes read + written by copy (runtime memmove), "sum" the bytes read by a plain
// Go 8-accumulator uint64 sum.
func BenchmarkSIMDMemBandwidth(b *testing.B) {
	const size = 256 << 20
	src := make([]byte, size)
	dst := make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(2 * size)
		for i := 0; i < b.N; i++ {
			copy(dst, src)
		}
	})
	b.Run("sum", func(b *testing.B) {
		u := unsafe.Slice((*uint64)(unsafe.Pointer(&src[0])), size/8)
		b.SetBytes(size)
		var t uint64
		for i := 0; i < b.N; i++ {
			var s0, s1, s2, s3, s4, s5, s6, s7 uint64
			for j := 0; j+8 <= len(u); j += 8 {
				s0 += u[j]
				s1 += u[j+1]
				s2 += u[j+2]
				s3 += u[j+3]
				s4 += u[j+4]
				s5 += u[j+5]
				s6 += u[j+6]
				s7 += u[j+7]
			}
			t += s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
		}
		simdSink = float32(t)
	})
}

// BenchmarkDotRows compares DotRows over 4 activation rows ("rows4") with 4 separate Dot
// calls ("dot4"), per weight row of the 64 MiB matrix (SetBytes = weight row bytes).
func BenchmarkDotRows(b *testing.B) {
	for _, t := range []Type{Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS} {
		for _, mode := range []string{"rows4", "dot4"} {
			b.Run(t.String()+"/"+mode, func(b *testing.B) {
				w, rowBytes, a1 := simdBenchMatrix(b, t, simdBenchBytes)
				ab := len(a1)
				a := make([]byte, 4*ab)
				for r := 0; r < 4; r++ {
					copy(a[r*ab:], a1)
				}
				out := make([]float32, 4)
				rows := len(w) / rowBytes
				b.SetBytes(int64(rowBytes))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					row := (i % rows) * rowBytes
					wr := w[row : row+rowBytes]
					if mode == "rows4" {
						DotRows(t, wr, a, simdBenchN, out)
					} else {
						for r := 0; r < 4; r++ {
							out[r] = Dot(t, wr, a[r*ab:(r+1)*ab], simdBenchN)
						}
					}
				}
			})
		}
	}
}

// BenchmarkDotDispatch measures the per-call cost of Dot (argument checks + map dispatch)
// against calling the kernel directly, on a one-block Q4_K row in L1.
func BenchmarkDotDispatch(b *testing.B) {
	t := Q4_K
	r := rand.New(rand.NewPCG(5, 5))
	w := make([]byte, t.TypeSize())
	a := make([]byte, ActivationBytes(t, QK_K))
	if QuantizeRow(t, simdRandomFloats(r, QK_K, false), w) != nil || QuantizeActivations(t, simdRandomFloats(r, QK_K, false), a) != nil {
		b.Skip("no Q4_K")
	}
	f := dotKernels[t]
	if f == nil {
		b.Skip("no kernel")
	}
	b.Run("kernel", func(b *testing.B) {
		var s float32
		for i := 0; i < b.N; i++ {
			s += f(w, a, QK_K)
		}
		simdSink = s
	})
	b.Run("Dot", func(b *testing.B) {
		var s float32
		for i := 0; i < b.N; i++ {
			s += Dot(t, w, a, QK_K)
		}
		simdSink = s
	})
}

// BenchmarkMatVec compares MatVec with a loop of Dot over a 64 MiB Q4_K matrix of rows of
// n = 2048 and n = 768 (MoE expert shapes), in weight bytes per second.
func BenchmarkMatVec(b *testing.B) {
	t := Q4_K
	for _, n := range []int{2048, 768} {
		rb := n / QK_K * t.TypeSize()
		rows := simdBenchBytes / rb
		w := make([]byte, rows*rb)
		r := rand.New(rand.NewPCG(9, 9))
		for i := 0; i < 8; i++ {
			if QuantizeRow(t, simdRandomFloats(r, n, false), w[i*rb:(i+1)*rb]) != nil {
				b.Skip("no Q4_K")
			}
		}
		for i := 8; i < rows; i++ {
			copy(w[i*rb:(i+1)*rb], w[(i%8)*rb:])
		}
		a := make([]byte, ActivationBytes(t, n))
		if QuantizeActivations(t, simdRandomFloats(r, n, false), a) != nil {
			b.Skip("no Q8_K")
		}
		const chunk = 256 // rows per call, as a thread's share of a matrix
		out := make([]float32, chunk)
		for _, mode := range []string{"MatVec", "Dot"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, mode), func(b *testing.B) {
				b.SetBytes(int64(chunk * rb))
				for i := 0; i < b.N; i++ {
					r0 := (i * chunk) % (rows - chunk)
					ws := w[r0*rb : (r0+chunk)*rb]
					if mode == "MatVec" {
						MatVec(t, ws, a, n, out)
					} else {
						for j := range out {
							out[j] = Dot(t, ws[j*rb:(j+1)*rb], a, n)
						}
					}
				}
			})
		}
	}
}

// BenchmarkLlamaF32 compares LlamaKernel(F32, gemm) (llamaorder.go) with the
// AVX-512 ones (simdLlamaF32), on the 64 MiB F32 matrix.
func BenchmarkLlamaF32(b *testing.B) {
	for _, gemm := range []bool{false, true} {
		name := map[bool]string{false: "vec", true: "gemm"}[gemm]
		goK := LlamaKernel(F32, gemm)
		b.Run(name+"/go", func(b *testing.B) { simdBenchDot(b, F32, goK) })
		if f := simdLlamaF32(gemm); f != nil {
			b.Run(name+"/asm", func(b *testing.B) { simdBenchDot(b, F32, f) })
		}
	}
}

// BenchmarkLlamaQ4_K compares the llama-order Q4_K references (llamaorder_k.go, Go) with
// simdLlamaQ4_K, on the 64 MiB Q4_K matrix.
func BenchmarkLlamaQ4_K(b *testing.B) {
	gemv, gemm := dotQ4_KGemvRef, dotQ4_KGemmRef
	for _, g := range []bool{false, true} {
		name := map[bool]string{false: "gemv", true: "gemm"}[g]
		ref := map[bool]func(w, a []byte, n int) float32{false: gemv, true: gemm}[g]
		if ref != nil {
			b.Run(name+"/go", func(b *testing.B) { simdBenchDot(b, Q4_K, ref) })
		}
		if f := simdLlamaQ4_K(g); f != nil {
			b.Run(name+"/asm", func(b *testing.B) { simdBenchDot(b, Q4_K, f) })
		}
	}
}

// BenchmarkLlamaQ4_KRows4 compares simdLlamaQ4_KRows4 with 4 calls of the one-row kernel,
// in GEMM and GEMV order, per weight row of the 64 MiB matrix (SetBytes = weight row bytes).
func BenchmarkLlamaQ4_KRows4(b *testing.B) {
	if simdLlamaQ4_K(true) == nil {
		b.Skip("no AVX2")
	}
	w, rowBytes, a1 := simdBenchMatrix(b, Q4_K, simdBenchBytes)
	ab := len(a1)
	a := make([]byte, 4*ab)
	for r := 0; r < 4; r++ {
		copy(a[r*ab:], a1)
	}
	out := make([]float32, 4)
	rows := len(w) / rowBytes
	for _, gemm := range []bool{true, false} {
		f := simdLlamaQ4_K(gemm)
		order := map[bool]string{true: "gemm", false: "gemv"}[gemm]
		for _, mode := range []string{"rows4", "one-row"} {
			b.Run(order+"/"+mode, func(b *testing.B) {
				b.SetBytes(int64(rowBytes))
				for i := 0; i < b.N; i++ {
					wr := w[(i%rows)*rowBytes : (i%rows+1)*rowBytes]
					if mode == "rows4" {
						simdLlamaQ4_KRows4(gemm, wr, a, simdBenchN, out)
					} else {
						for r := 0; r < 4; r++ {
							out[r] = f(wr, a[r*ab:(r+1)*ab], simdBenchN)
						}
					}
				}
			})
		}
	}
}
