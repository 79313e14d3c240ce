package quant

// Kernel returns the dot product for weight type t (the fast kernel when one is registered,
// else the reference) without Dot's per-call length checks, for loops that validated their
// buffers once. It is nil when t has no dot product.
func Kernel(t Type) func(w, a []byte, n int) float32 {
	if f := dotKernels[t]; f != nil {
		return f
	}
	if f := formats[t]; f != nil && f.dot != nil {
		return f.dot
	}
	return nil
}
