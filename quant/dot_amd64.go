package quant

import (
	"encoding/binary"
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// SIMD dot kernels for amd64 (AVX2 and AVX-512), registered into dotKernels and
// dotRowsKernels by setSIMDLevel (simd.go) at init. Levels: simdAVX2 needs AVX2 + FMA + F16C;
// simdAVX512 also needs AVX-512 F/BW/VL/DQ and VNNI.
//
// Every kernel is "bounded": its integer sub-sums are exact and its float accumulation is
// deterministic, but in a different order from DotRef's, so the result equals the reference
// within float rounding (|fast-ref| <= 1e-5*sum|w_i*a_i| + tiny, checked by simd_test.go).
// The quantized kernels sum in llama.cpp's x86 vec_dot order, bit for bit (simdLlamaVecDot,
// TestSIMDLlamaOrder); simdLlamaQ4_K gives llama.cpp's repacked Q4_K GEMV/GEMM order and
// simdLlamaF32 its AVX-512 F32 orders. Activations are assumed in [-127, 127] (what
// QuantizeActivations writes): Q8_0, IQ4_NL, IQ4_XS and MXFP4 use VPSIGNB, as llama.cpp does.

// simdDetect returns the best level this CPU supports.
func simdDetect() int {
	x := cpu.X86
	if !x.HasAVX2 || !x.HasFMA || !x.HasF16C {
		return simdNone
	}
	if x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512DQ && x.HasAVX512VNNI {
		return simdAVX512
	}
	return simdAVX2
}

// simdTypes lists the kernels of one level.
func simdTypes(level int) map[Type]func(w, a []byte, n int) float32 {
	m := map[Type]func(w, a []byte, n int) float32{}
	switch level {
	case simdAVX2:
		m[Q8_0] = func(w, a []byte, n int) float32 { return dotQ8_0AVX2(&w[0], &a[0], n/32) }
		m[F32] = dotF32AVX2Go
		m[Q4_K] = func(w, a []byte, n int) float32 { return dotQ4_KAVX2(&w[0], &a[0], n/QK_K) }
		m[IQ4_NL] = func(w, a []byte, n int) float32 { return dotIQ4_NLAVX2(&w[0], &a[0], n/32) }
		m[Q2_0] = func(w, a []byte, n int) float32 { return dotQ2_0AVX2(&w[0], &a[0], n/64) }
		m[MXFP4] = func(w, a []byte, n int) float32 { return dotMXFP4AVX2(&w[0], &a[0], n/32) }
		m[IQ4_XS] = func(w, a []byte, n int) float32 { return dotIQ4_XSAVX2(&w[0], &a[0], n/QK_K) }
		m[Q5_K] = func(w, a []byte, n int) float32 { return dotQ5_KAVX2(&w[0], &a[0], n/QK_K) }
		m[Q3_K] = func(w, a []byte, n int) float32 { return dotQ3_KAVX2(&w[0], &a[0], n/QK_K) }
		m[Q2_K] = func(w, a []byte, n int) float32 { return dotQ2_KAVX2(&w[0], &a[0], n/QK_K) }
		m[Q4_0] = func(w, a []byte, n int) float32 { return dotQ4_0AVX2(&w[0], &a[0], n/32) }
		m[Q5_0] = func(w, a []byte, n int) float32 { return dotQ5_0AVX2(&w[0], &a[0], n/32) }
		m[Q4_1] = func(w, a []byte, n int) float32 { return dotQ4_1AVX2(&w[0], &a[0], n/32) }
		m[Q5_1] = func(w, a []byte, n int) float32 { return dotQ5_1AVX2(&w[0], &a[0], n/32) }
		m[Q6_K] = func(w, a []byte, n int) float32 { return dotQ6_KAVX2(&w[0], &a[0], n/QK_K) }
		m[F16] = dotF16AVX2Go
		m[BF16] = dotBF16AVX2Go
	case simdAVX512:
		m[Q8_0] = func(w, a []byte, n int) float32 { return dotQ8_0AVX2(&w[0], &a[0], n/32) }
		m[F32] = dotF32AVX512Go
		m[Q4_K] = func(w, a []byte, n int) float32 { return dotQ4_KAVX512(&w[0], &a[0], n/QK_K) }
		m[IQ4_NL] = func(w, a []byte, n int) float32 { return dotIQ4_NLAVX2(&w[0], &a[0], n/32) }
		m[Q2_0] = func(w, a []byte, n int) float32 { return dotQ2_0AVX2(&w[0], &a[0], n/64) }
		m[MXFP4] = func(w, a []byte, n int) float32 { return dotMXFP4AVX2(&w[0], &a[0], n/32) }
		m[IQ4_XS] = func(w, a []byte, n int) float32 { return dotIQ4_XSAVX2(&w[0], &a[0], n/QK_K) }
		m[Q5_K] = func(w, a []byte, n int) float32 { return dotQ5_KAVX2(&w[0], &a[0], n/QK_K) }
		m[Q3_K] = func(w, a []byte, n int) float32 { return dotQ3_KAVX2(&w[0], &a[0], n/QK_K) }
		m[Q2_K] = func(w, a []byte, n int) float32 { return dotQ2_KAVX2(&w[0], &a[0], n/QK_K) }
		m[Q4_0] = func(w, a []byte, n int) float32 { return dotQ4_0AVX2(&w[0], &a[0], n/32) }
		m[Q5_0] = func(w, a []byte, n int) float32 { return dotQ5_0AVX2(&w[0], &a[0], n/32) }
		m[Q4_1] = func(w, a []byte, n int) float32 { return dotQ4_1AVX2(&w[0], &a[0], n/32) }
		m[Q5_1] = func(w, a []byte, n int) float32 { return dotQ5_1AVX2(&w[0], &a[0], n/32) }
		m[Q6_K] = func(w, a []byte, n int) float32 { return dotQ6_KAVX512(&w[0], &a[0], n/QK_K) }
		m[F16] = dotF16AVX512Go
		m[BF16] = dotBF16AVX512Go
	}
	return m
}

// simdRowsTypes lists the 4-row kernels (DotRows) of one level; each matches the one-row
// kernel of the same level bit for bit.
func simdRowsTypes(level int) map[Type]func(w, a []byte, n int, out []float32) {
	m := map[Type]func(w, a []byte, n int, out []float32){}
	if level >= simdAVX2 {
		m[Q8_0] = func(w, a []byte, n int, out []float32) {
			dotQ8_0Rows4AVX2(&w[0], &a[0], len(a)/4, n/32, &out[0])
		}
		m[Q4_K] = func(w, a []byte, n int, out []float32) {
			dotQ4_KRows4AVX2(&w[0], &a[0], len(a)/4, n/QK_K, &out[0])
		}
		m[Q6_K] = func(w, a []byte, n int, out []float32) {
			dotQ6_KRows4AVX2(&w[0], &a[0], len(a)/4, n/QK_K, &out[0])
		}
		m[Q5_K] = func(w, a []byte, n int, out []float32) {
			dotQ5_KRows4AVX2(&w[0], &a[0], len(a)/4, n/QK_K, &out[0])
		}
		m[IQ4_XS] = func(w, a []byte, n int, out []float32) {
			dotIQ4_XSRows4AVX2(&w[0], &a[0], len(a)/4, n/QK_K, &out[0])
		}
		m[Q2_K] = func(w, a []byte, n int, out []float32) {
			dotQ2_KRows4AVX2(&w[0], &a[0], len(a)/4, n/QK_K, &out[0])
		}
		m[Q3_K] = func(w, a []byte, n int, out []float32) {
			dotQ3_KRows4AVX2(&w[0], &a[0], len(a)/4, n/QK_K, &out[0])
		}
	}
	return m
}

// Float rows: the assembly handles a multiple of 32 (AVX2) or 64 (AVX-512) elements; the
// tail is added here in float64, as the reference accumulates.

func dotF32AVX2Go(w, a []byte, n int) float32 {
	m := n &^ 31
	var s float32
	if m > 0 {
		s = dotF32AVX2((*float32)(unsafe.Pointer(&w[0])), (*float32)(unsafe.Pointer(&a[0])), m)
	}
	return s + f32Tail(w, a, m, n)
}

// dotF32AVX512Go sums in ggml_vec_dot_f32's AVX-512 order (four 16-lane accumulators over
// steps of 64, folded 0+2, 1+3, 0+1, reduced, then the rest fused one by one), so it is
// bit-identical to dotF32Vec (llamaorder.go).
func dotF32AVX512Go(w, a []byte, n int) float32 {
	m := n &^ 63
	var s float32
	if m > 0 {
		s = dotF32AVX512((*float32)(unsafe.Pointer(&w[0])), (*float32)(unsafe.Pointer(&a[0])), m)
	}
	for i := m; i < n; i++ {
		x := math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:]))
		s = float32(math.FMA(float64(x), float64(y), float64(s)))
	}
	return s
}

// dotF32GemmAVX512Go is bit-identical to dotF32Gemm (tinyBLAS order; dotF32Vec's order
// when n is not a multiple of 16, as llama.cpp falls back).
func dotF32GemmAVX512Go(w, a []byte, n int) float32 {
	if n%16 != 0 {
		return dotF32AVX512Go(w, a, n)
	}
	return dotF32GemmAVX512((*float32)(unsafe.Pointer(&w[0])), (*float32)(unsafe.Pointer(&a[0])), n)
}

// simdLlamaQ4_K returns Q4_K kernels in the order of llama.cpp's repacked q4_K_8x8_q8_K GEMV
// (gemm false) or GEMM kernels, bit-identical to llamaorder_k.go's dotQ4_KGemvRef and
// dotQ4_KGemmRef (TestSIMDLlamaQ4_K), or nil below the AVX2 level.
func simdLlamaQ4_K(gemm bool) func(w, a []byte, n int) float32 {
	if simdLevel < simdAVX2 {
		return nil
	}
	if gemm {
		return func(w, a []byte, n int) float32 { return dotQ4_KGemmAVX2(&w[0], &a[0], n/QK_K) }
	}
	return func(w, a []byte, n int) float32 { return dotQ4_KGemvAVX2(&w[0], &a[0], n/QK_K) }
}

// simdLlamaQ4_KRows4 computes out[r] = simdLlamaQ4_K(gemm)(w, a[r*ab:(r+1)*ab], n) for the 4
// Q8_K activation rows back to back in a (ab bytes each), bit for bit, unpacking the weights
// once (prefill). It returns false, doing nothing, below the AVX2 level or when the lengths
// do not match.
func simdLlamaQ4_KRows4(gemm bool, w, a []byte, n int, out []float32) bool {
	ab := ActivationBytes(Q4_K, n)
	if simdLevel < simdAVX2 || n <= 0 || n%QK_K != 0 || len(w) != n/QK_K*144 || len(a) != 4*ab || len(out) < 4 {
		return false
	}
	dotQ4_KRows4LlamaAVX2(&w[0], &a[0], ab, n/QK_K, &out[0], !gemm)
	return true
}

// simdLlamaF32 returns F32 kernels that sum in llama.cpp's AVX-512 order, bit-identical to
// dotF32Gemm (gemm) or dotF32Vec (!gemm), or nil below the AVX-512 level. LlamaKernel can
// return them instead of the plain-Go ones.
func simdLlamaF32(gemm bool) func(w, a []byte, n int) float32 {
	if simdLevel < simdAVX512 {
		return nil
	}
	if gemm {
		return dotF32GemmAVX512Go
	}
	return dotF32AVX512Go
}

func f32Tail(w, a []byte, from, n int) float32 {
	var s float64
	for i := from; i < n; i++ {
		x := math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:]))
		s += float64(x * y)
	}
	return float32(s)
}

func dotF16AVX2Go(w, a []byte, n int) float32 {
	m := n &^ 31
	var s float32
	if m > 0 {
		s = dotF16AVX2((*uint16)(unsafe.Pointer(&w[0])), (*uint16)(unsafe.Pointer(&a[0])), m)
	}
	return s + halfTail(w, a, m, n, FP16ToFP32)
}

// simdLlamaF16 returns the F16 kernel in ggml's AVX-512 order (dotF16LanesRef's bits), or
// nil below the AVX-512 level.
func simdLlamaF16() func(w, a []byte, n int) float32 {
	if simdLevel < simdAVX512 {
		return nil
	}
	return dotF16AVX512Go
}

// dotF16AVX512Go follows ggml_vec_dot_f16's AVX-512 order (without AVX512-FP16): four
// 16-lane accumulators over steps of 64, folded 0+2, 1+3, 0+1, reduced, then the rest added
// in float64 one product at a time, as read from llama.cpp's vec.cpp and simd-mappings.h.
func dotF16AVX512Go(w, a []byte, n int) float32 {
	m := n &^ 63
	var s float64
	if m > 0 {
		s = float64(dotF16AVX512((*uint16)(unsafe.Pointer(&w[0])), (*uint16)(unsafe.Pointer(&a[0])), m))
	}
	for i := m; i < n; i++ {
		s += float64(FP16ToFP32(binary.LittleEndian.Uint16(w[2*i:])) * FP16ToFP32(binary.LittleEndian.Uint16(a[2*i:])))
	}
	return float32(s)
}

func dotBF16AVX2Go(w, a []byte, n int) float32 {
	m := n &^ 31
	var s float32
	if m > 0 {
		s = dotBF16AVX2((*uint16)(unsafe.Pointer(&w[0])), (*uint16)(unsafe.Pointer(&a[0])), m)
	}
	return s + halfTail(w, a, m, n, BF16ToFP32)
}

func dotBF16AVX512Go(w, a []byte, n int) float32 {
	m := n &^ 63
	var s float32
	if m > 0 {
		s = dotBF16AVX512((*uint16)(unsafe.Pointer(&w[0])), (*uint16)(unsafe.Pointer(&a[0])), m)
	}
	return s + halfTail(w, a, m, n, BF16ToFP32)
}

func halfTail(w, a []byte, from, n int, conv func(uint16) float32) float32 {
	var s float64
	for i := from; i < n; i++ {
		x := conv(binary.LittleEndian.Uint16(w[2*i:]))
		y := conv(binary.LittleEndian.Uint16(a[2*i:]))
		s += float64(x * y)
	}
	return float32(s)
}

// Assembly kernels (dot_amd64.s). nb is a number of blocks, n a number of elements.

//go:noescape
func dotQ8_0AVX2(w, a *byte, nb int) float32

//go:noescape
func dotF32AVX2(x, y *float32, n int) float32

//go:noescape
func dotF32AVX512(x, y *float32, n int) float32

//go:noescape
func dotF32GemmAVX512(x, y *float32, n int) float32

//go:noescape
func dotF16AVX2(x, y *uint16, n int) float32

//go:noescape
func dotF16AVX512(x, y *uint16, n int) float32

//go:noescape
func dotBF16AVX2(x, y *uint16, n int) float32

//go:noescape
func dotBF16AVX512(x, y *uint16, n int) float32

//go:noescape
func dotQ4_KAVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ6_KAVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ4_0AVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ5_0AVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ4_1AVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ5_1AVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ5_KAVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ3_KAVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ2_KAVX2(w, a *byte, nb int) float32

//go:noescape
func dotIQ4_NLAVX2(w, a *byte, nb int) float32

//go:noescape
func dotMXFP4AVX2(w, a *byte, nb int) float32

//go:noescape
func dotIQ4_XSAVX2(w, a *byte, nb int) float32

// Four-row kernels: activation row r at a + r*stride; results to out[0..3].

//go:noescape
func dotQ4_KRows4AVX2(w, a *byte, stride, nb int, out *float32)

//go:noescape
func dotQ6_KRows4AVX2(w, a *byte, stride, nb int, out *float32)

//go:noescape
func dotQ2_0AVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ4_KAVX512(w, a *byte, nb int) float32

//go:noescape
func dotQ6_KAVX512(w, a *byte, nb int) float32

//go:noescape
func dotQ5_KRows4AVX2(w, a *byte, stride, nb int, out *float32)

//go:noescape
func dotIQ4_XSRows4AVX2(w, a *byte, stride, nb int, out *float32)

//go:noescape
func dotQ2_KRows4AVX2(w, a *byte, stride, nb int, out *float32)

//go:noescape
func dotQ3_KRows4AVX2(w, a *byte, stride, nb int, out *float32)

//go:noescape
func dotQ8_0Rows4AVX2(w, a *byte, stride, nb int, out *float32)

//go:noescape
func dotQ4_KGemvAVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ4_KGemmAVX2(w, a *byte, nb int) float32

//go:noescape
func dotQ4_KRows4LlamaAVX2(w, a *byte, stride, nb int, out *float32, gemv bool)
