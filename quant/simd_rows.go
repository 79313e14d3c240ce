package quant

// DotRows dots one weight row w (n elements of type t) with len(out) activation rows stored
// back to back in a (each ActivationBytes(t, n) bytes, in VecDotType(t)):
//
//	out[r] = Dot(t, w, a[r*ab:(r+1)*ab], n)
//
// bit for bit. It is meant for prefill and batched decode: where a multi-row kernel exists
// (amd64 AVX2: Q4_K and Q6_K, 4 rows per pass) each weight block is loaded and unpacked once
// for 4 activation rows. Other types, other architectures and leftover rows use Dot. Bad
// lengths give NaN, as Dot does.
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
