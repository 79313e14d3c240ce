package quant

// SIMD feature levels of the optimized dot kernels (dot_amd64.go; other architectures have
// none and use the plain-Go reference).
const (
	simdNone   = 0 // no kernels: Dot runs the reference
	simdAVX2   = 1 // amd64 AVX2 + FMA + F16C
	simdAVX512 = 2 // amd64 AVX-512 F/BW/VL/DQ + VNNI, on top of AVX2
)

// simdMaxLevel is the best level this CPU supports; simdLevel is the one registered.
var simdMaxLevel, simdLevel int

func init() {
	simdMaxLevel = simdDetect()
	setSIMDLevel(simdMaxLevel)
}

// setSIMDLevel registers the kernels of the given level (capped at what the CPU supports)
// into dotKernels and dotRowsKernels, replacing or removing those of another level, and
// returns the level set. Tests use it to run every kernel path on the best machine.
func setSIMDLevel(level int) int {
	level = max(simdNone, min(level, simdMaxLevel))
	for t := range simdTypes(simdMaxLevel) {
		delete(dotKernels, t)
	}
	for t := range simdRowsTypes(simdMaxLevel) {
		delete(dotRowsKernels, t)
	}
	for t, f := range simdTypes(level) {
		dotKernels[t] = f
	}
	for t, f := range simdRowsTypes(level) {
		dotRowsKernels[t] = f
	}
	simdLevel = level
	return level
}

// simdLlamaVecDot returns the registered SIMD kernel for t when it sums in the order of
// llama.cpp's x86 ggml_vec_dot_* for t (bit-identical, checked by TestSIMDLlamaOrder against
// llama.cpp's own output), else nil. That is every quantized kernel here; note that llama.cpp
// itself does not use vec_dot for weights it repacks on x86 (Q4_0, Q4_K, IQ4_NL with AVX2,
// Q2_K with AVX-512). For F32 see simdLlamaF32.
func simdLlamaVecDot(t Type) func(w, a []byte, n int) float32 {
	if simdLevel < simdAVX2 {
		return nil
	}
	switch t {
	case Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4:
		return dotKernels[t]
	}
	return nil
}
