package quant

// DotRows dots one weight row w (n elements of type t) with len(out) activation rows stored
// back to back in a (each ActivationBytes(t, n) bytes, in VecDotType(t)):
//
//	out[r] = Dot(t, w, a[r*ab:(r+1)*ab], n)
//
// bit for bit. It is meant for prefill and batched decode: where a multi-row kernel exists
// (amd64: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS with AVX2, Q8_0 with AVX-512; 4 rows per
// pass) each weight block is loaded and unpacked once for 4 activation rows. Other types,
// other architectures and leftover rows use Dot. Bad lengths give NaN, as Dot does.
func DotRows(t Type, w, a []byte, n int, out []float32) {
	ab := ActivationBytes(t, n)
	if ab < 0 || len(a) != len(out)*ab {
		for r := range out {
			out[r] = nan32
		}
		return
	}
	r := 0
	if f := dotRowsKernels[t]; f != nil && n > 0 && len(out) >= dotRowsWidth && checkDot(t, w, a[:ab], n) == nil {
		for ; r+dotRowsWidth <= len(out); r += dotRowsWidth {
			f(w, a[r*ab:(r+dotRowsWidth)*ab], n, out[r:r+dotRowsWidth])
		}
	}
	for ; r < len(out); r++ {
		out[r] = Dot(t, w, a[r*ab:(r+1)*ab], n)
	}
}

// dotRowsWidth is the number of activation rows a dotRowsKernels entry handles per call.
const dotRowsWidth = 4

// dotRowsKernels holds multi-row kernels by weight type, registered by the architecture
// files (dot_amd64.go). A kernel takes w, a of exactly dotRowsWidth activation rows, n, and
// out of dotRowsWidth results, already checked, and must match dotKernels[t] bit for bit.
var dotRowsKernels = map[Type]func(w, a []byte, n int, out []float32){}

// MatVec dots each of the len(out) weight rows stored back to back in w (n elements of type t
// each) with one activation row a in VecDotType(t):
//
//	out[r] = Dot(t, w[r*rb:(r+1)*rb], a, n), rb = the row's byte size,
//
// bit for bit, but checking the arguments and picking the kernel once per call instead of
// once per row (Dot's checks and map lookups cost ~40 ns, as much as the kernel on a short
// row). Callers split a matrix across threads by calling it on row ranges. Bad lengths give
// NaN in every out[r].
func MatVec(t Type, w, a []byte, n int, out []float32) {
	rb, err := t.RowBytes(int64(n))
	if err != nil || int64(len(w)) != int64(len(out))*rb || len(out) == 0 || checkDot(t, w[:rb], a, n) != nil {
		for r := range out {
			out[r] = nan32
		}
		return
	}
	if n == 0 {
		clear(out)
		return
	}
	f := dotKernels[t]
	if f == nil {
		f = formats[t].dot
	}
	b := int(rb)
	for r := range out {
		out[r] = f(w[r*b:(r+1)*b], a, n)
	}
}
