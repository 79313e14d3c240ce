package quant

// dotKernels holds optimized dot products by weight type. It is filled at init time by the
// architecture-specific files (quant/*_amd64.go); a type without an entry falls back to the
// plain-Go reference DotRef. A kernel takes the same arguments as DotRef and may assume they
// are valid: Dot checks them first.
var dotKernels = map[Type]func(w, a []byte, n int) float32{}

// Dot is the dot product of one weight row (n elements of type t) with one activation row in
// VecDotType(t) (as QuantizeActivations produces it). It returns NaN for an unsupported type or
// buffers whose lengths do not match n, instead of panicking.
func Dot(t Type, w, a []byte, n int) float32 {
	if checkDot(t, w, a, n) != nil {
		return nan32
	}
	if n == 0 { // kernels may assume at least one block
		return 0
	}
	if f := dotKernels[t]; f != nil {
		return f(w, a, n)
	}
	return formats[t].dot(w, a, n)
}
