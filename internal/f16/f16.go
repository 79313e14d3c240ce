// Package f16 converts and combines IEEE half-float vectors the way ggml's CPU backend does
// (round to nearest even on every store), with F16C/AVX2 kernels where the CPU has them.
// Every function gives the same bits as its plain-Go form in ref.go (exact class).
package f16

import (
	"unsafe"

	"github.com/regolith/regolith/quant"
)

// ToF16 rounds src into dst (len(dst) >= len(src)).
func ToF16(dst []uint16, src []float32) {
	n := len(src)
	k := 0
	if useAsm && n >= 8 {
		k = n &^ 7
		toF16AVX2(&dst[0], &src[0], k)
	}
	for i := k; i < n; i++ {
		dst[i] = quant.FP32ToFP16(src[i])
	}
}

// ToF32 widens src into dst (exact).
func ToF32(dst []float32, src []uint16) {
	n := len(src)
	k := 0
	if useAsm && n >= 8 {
		k = n &^ 7
		toF32AVX2(&dst[0], &src[0], k)
	}
	for i := k; i < n; i++ {
		dst[i] = quant.FP16ToFP32(src[i])
	}
}

// Mad is y += x·v with the product rounded to float32, the sum rounded to float32 and
// then to F16 (ggml_vec_mad_f16's scalar loop).
func Mad(y, x []uint16, v float32) {
	n := len(y)
	k := 0
	if useAsm && n >= 8 {
		k = n &^ 7
		madAVX2(&y[0], &x[0], k, v)
	}
	madRef(y[k:], x[k:n], v)
}

// MadFMA is y += x·v with one fused multiply-add, then rounded to F16 (ggml_vec_mad_f16's
// vector loop).
func MadFMA(y, x []uint16, v float32) {
	n := len(y)
	k := 0
	if useAsm && n >= 8 {
		k = n &^ 7
		madFMAAVX2(&y[0], &x[0], k, v)
	}
	madFMARef(y[k:], x[k:n], v)
}

// Scale is y *= v, rounded to F16.
func Scale(y []uint16, v float32) {
	n := len(y)
	k := 0
	if useAsm && n >= 8 {
		k = n &^ 7
		scaleAVX2(&y[0], k, v)
	}
	scaleRef(y[k:], v)
}

// Dot is ggml_vec_dot_f16 (AVX-512 build without FP16 arithmetic). Below 64 elements it
// is the scalar loop: products of halves (exact in float32) summed in float64, where for
// vectors whose products span less than 2^26 in magnitude the sums are exact and the order
// cannot matter. From 64 elements on, the first n&^63 go through ggml's vector loop: four
// 16-lane float32 fused-multiply-add accumulators, folded 0+2, 1+3, 0+1 and reduced as
// _mm512_reduce_add_ps, which rounds (dotLanes); the rest are added in float64.
func Dot(a, b []uint16) float32 {
	n := len(a)
	if n >= 64 {
		return dotLanes(a, b)
	}
	k := 0
	var s float64
	if useAsm && n >= 8 {
		k = n &^ 7
		s = dotAVX2(&a[0], &b[0], k)
	}
	for i := k; i < n; i++ {
		s += float64(quant.FP16ToFP32(a[i]) * quant.FP16ToFP32(b[i]))
	}
	return float32(s)
}

// DotRows sets out[j] = Dot(q, k[j*stride:j*stride+len(q)]) for every j < len(out): the
// scores of one query against consecutive cached keys.
func DotRows(out []float32, q, k []uint16, stride int) {
	n := len(q)
	if len(out) == 0 {
		return
	}
	_ = k[(len(out)-1)*stride+n-1] // one bounds check for all rows
	if useAsm && n >= 8 && n < 64 && n%8 == 0 {
		for j := range out {
			out[j] = float32(dotAVX2(&q[0], &k[j*stride], n))
		}
		return
	}
	for j := range out {
		out[j] = Dot(q, k[j*stride:j*stride+n])
	}
}

// MadRows runs, for each j < len(ms), Scale(y, ms[j]) then MadFMA(y, v_j, vs[j]) with
// v_j = v[j*stride:j*stride+len(y)]: the value side of ggml's F16 online softmax, where a
// row that raises the running max rescales the accumulator (by 1 otherwise, which is exact).
func MadRows(y, v []uint16, stride int, ms, vs []float32) {
	n := len(y)
	if len(ms) == 0 || n == 0 {
		return
	}
	_ = v[(len(ms)-1)*stride+n-1]
	_ = vs[len(ms)-1]
	if useAsm && n%8 == 0 {
		madRowsAVX2(&y[0], &v[0], stride*2, n, &ms[0], &vs[0], len(ms))
		return
	}
	for j := range ms {
		scaleRef(y, ms[j])
		madFMARef(y, v[j*stride:j*stride+n], vs[j])
	}
}

// dotLanes is ggml_vec_dot_f16's vector form for n >= 64 (see Dot): quant's kernel in
// llama.cpp's order.
func dotLanes(a, b []uint16) float32 {
	return dotF16Llama(halves(a), halves(b), len(a))
}

var dotF16Llama = quant.LlamaKernel(quant.F16, false)

// halves views a half-float vector as its little-endian bytes.
func halves(h []uint16) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(h))), 2*len(h))
}
