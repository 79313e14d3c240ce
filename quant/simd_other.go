//go:build !amd64

package quant

// No SIMD kernels on this architecture: Dot and DotRows use the plain-Go reference.

func simdDetect() int { return simdNone }

func simdTypes(int) map[Type]func(w, a []byte, n int) float32 { return nil }

func simdRowsTypes(int) map[Type]func(w, a []byte, n int, out []float32) { return nil }

func simdLlamaF32(bool) func(w, a []byte, n int) float32 { return nil }

func simdLlamaQ4_K(bool) func(w, a []byte, n int) float32 { return nil }

func simdLlamaQ4_KRows4(gemm bool, w, a []byte, n int, out []float32) bool { return false }

func simdLlamaF16() func(w, a []byte, n int) float32 { return nil }
