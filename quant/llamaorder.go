package quant

import (
	"encoding/binary"
	"math"
)

// llama.cpp's x86 build sums the same products in an order of its own for each kernel, and
// in a model the last-bit differences grow: an activation that rounds to another int8 step
// moves a whole layer. The kernels here sum in exactly llama.cpp's order (AVX2/AVX-512
// build, as the fixtures were made), so regolith's logits are bit-identical to its logits.
//
// Order is a property of the product, not of the format, so a kernel is chosen by weight
// type and by how llama.cpp computes the product: as a batched GEMM (its llamafile sgemm
// path, for a dense weight times more than one row) or one dot product per row.

// LlamaKernel returns the dot product that sums in llama.cpp's order for weight type t,
// or nil when regolith has none for t (the caller then uses Kernel). These are the
// references (plain Go, or assembly checked bit for bit against it); LlamaMatMul.Kernels
// gives the fastest kernels with the same bits, and covers Q4_K, whose rows differ.
func LlamaKernel(t Type, gemm bool) func(w, a []byte, n int) float32 {
	switch t {
	case Q8_0:
		return dotQ8_0Lanes
	case F32:
		if gemm {
			return dotF32Gemm
		}
		return dotF32Vec
	case Q6_K:
		return dotQ6_KLanesRef
	case Q5_K:
		return dotQ5_KLanesRef
	case F16:
		if f := simdLlamaF16(); f != nil {
			return f
		}
		return dotF16LanesRef
	}
	return nil
}

// dotF16LanesRef is ggml_vec_dot_f16 (AVX-512 without AVX512-FP16): four 16-lane float
// accumulators over steps of 64 with fused multiply-adds, folded 0+2, 1+3, 0+1, reduced by
// halves, then the rest added in float64 one product at a time.
func dotF16LanesRef(w, a []byte, n int) float32 {
	np := n &^ 63
	var sum [4][16]float32
	for i := 0; i < np; i += 64 {
		for j := 0; j < 4; j++ {
			for l := 0; l < 16; l++ {
				k := i + 16*j + l
				sum[j][l] = fma32(f16At(w, 2*k), f16At(a, 2*k), sum[j][l])
			}
		}
	}
	for l := 0; l < 16; l++ {
		sum[0][l] += sum[2][l]
		sum[1][l] += sum[3][l]
	}
	for l := 0; l < 16; l++ {
		sum[0][l] += sum[1][l]
	}
	s := float64(reduce16(&sum[0]))
	for i := np; i < n; i++ {
		s += float64(f16At(w, 2*i) * f16At(a, 2*i))
	}
	return float32(s)
}

// LlamaMatMul is one matrix product as llama.cpp's CPU backend computes it: a weight of
// type Type with Rows rows times T activation rows. Gemm is as for LlamaKernel: a dense
// weight (mul_mat) times more than one row, false for routed experts (mul_mat_id).
type LlamaMatMul struct {
	Type Type
	Rows int
	T    int
	Gemm bool
}

// LlamaRows is how llama.cpp computes some activation rows of a product: Act converts a
// row into VecDotType(t)'s layout (what QuantizeActivations writes, possibly with other
// values) and Dot sums it with a weight row. Dot is nil where regolith has no llama-order
// kernel for the type (the caller then uses Kernel).
type LlamaRows struct {
	Act func(x []float32, dst []byte)
	Dot func(w, a []byte, n int) float32
	// Rows, when not nil, dots one weight row with LlamaRowsWidth activation rows stored
	// back to back (out[i] = Dot(w, a_i, n) bit for bit): prefill loads each weight row once
	// for several tokens.
	Rows func(w, a []byte, n int, out []float32)
}

// LlamaRowsWidth is the number of activation rows LlamaRows.Rows takes.
const LlamaRowsWidth = dotRowsWidth

// Row returns the reference kernels (plain Go: llamaorder*.go) for activation row i:
// i < split of Kernels takes its head, the rest its tail. act and dot are nil when Type
// has no dot product; dot alone is nil when regolith has no llama-order kernel for it.
//
// Rows differ only for Q4_K weights with a multiple of 8 rows, which llama.cpp repacks
// (see llamaorder_k.go): in a mul_mat the rows of the full groups of four take
// ggml_quantize_mat_q8_K_4x8 and the GEMM kernel, the T%4 rows left over quantize_row_q8_K
// and the GEMV kernel; mul_mat_id (Gemm false) takes the latter for every row.
func (m LlamaMatMul) Row(i int) (act func(x []float32, dst []byte), dot func(w, a []byte, n int) float32) {
	f := formats[m.Type]
	if f == nil || f.dot == nil {
		return nil, nil
	}
	act = formats[f.vecDot].act
	if m.Type == Q4_K && m.Rows%8 == 0 {
		if m.Gemm && i < m.T-m.T%4 {
			return quantQ8K4x8, dotQ4_KGemmRef
		}
		return act, dotQ4_KGemvRef
	}
	return act, LlamaKernel(m.Type, m.Gemm)
}

// Kernels returns how llama.cpp computes the T activation rows, with the fastest kernels
// that give Row's bits (quant's SIMD kernels in llama.cpp's order where the CPU has them,
// each tested bit for bit against Row's): rows [0, split) by head, rows [split, T) by tail.
// ok is false when Type has no dot product.
func (m LlamaMatMul) Kernels() (split int, head, tail LlamaRows, ok bool) {
	split = m.T
	if m.Type == Q4_K && m.Rows%8 == 0 && m.Gemm {
		split = m.T - m.T%4
	}
	head.Act, head.Dot = m.Row(0)
	tail.Act, tail.Dot = m.Row(m.T - 1)
	if head.Act == nil {
		return 0, head, tail, false
	}
	head.Dot, tail.Dot = fastLlama(m, head.Dot, 0 < split), fastLlama(m, tail.Dot, m.T-1 < split)
	switch {
	case m.Type == Q8_0 || m.Type == Q6_K: // their multi-row kernels sum in the one-row kernels' (llama.cpp's) order
		head.Rows = dotRowsKernels[m.Type]
		tail.Rows = head.Rows
	case m.Type == Q4_K && m.Rows%8 == 0 && split >= LlamaRowsWidth:
		// Repacked: the rows before split (the GEMM group of a mul_mat, or every row of a
		// mul_mat_id, which takes the GEMV) unpack each weight row once for 4 rows. (Only
		// from 4 rows on: the closure would be an allocation per product in decode.)
		dot, gemm := head.Dot, m.Gemm
		head.Rows = func(w, a []byte, n int, out []float32) {
			if !simdLlamaQ4_KRows4(gemm, w, a, n, out) {
				ab := len(a) / LlamaRowsWidth
				for i := range out[:LlamaRowsWidth] {
					out[i] = dot(w, a[i*ab:(i+1)*ab], n)
				}
			}
		}
	}
	return split, head, tail, true
}

// fastLlama returns a SIMD kernel with the bits of ref (Row's kernel for a row of m that is
// in the GEMM group when inGemm), or ref.
func fastLlama(m LlamaMatMul, ref func(w, a []byte, n int) float32, inGemm bool) func(w, a []byte, n int) float32 {
	var k func(w, a []byte, n int) float32
	switch m.Type {
	case Q4_K:
		if m.Rows%8 == 0 {
			k = simdLlamaQ4_K(m.Gemm && inGemm)
		}
	case Q5_K, Q6_K:
		k = simdLlamaVecDot(m.Type)
	case F32:
		k = simdLlamaF32(m.Gemm)
	case F16:
		k = simdLlamaF16()
	}
	if k == nil {
		return ref
	}
	return k
}

// hsum8 is ggml's hsum_float_8 (and tinyBLAS's hsum of a __m256): (hi+lo), then pairs.
func hsum8(v *[8]float32) float32 {
	r0, r1, r2, r3 := v[4]+v[0], v[5]+v[1], v[6]+v[2], v[7]+v[3]
	return (r0 + r2) + (r1 + r3)
}

// reduce16 is _mm512_reduce_add_ps: halves folded 8, 4, 2, 1.
func reduce16(v *[16]float32) float32 {
	t := *v
	for w := 8; w >= 1; w /= 2 {
		for l := 0; l < w; l++ {
			t[l] += t[l+w]
		}
	}
	return t[0]
}

// fma32 is a float32 FMA rounded once (see FMA32).
func fma32(a, b, c float32) float32 { return FMA32(a, b, c) }

// dotQ8_0LanesRef is ggml_vec_dot_q8_0_q8_0 (AVX2 path) and tinyBLAS_Q0_AVX: eight float
// lanes, lane l accumulating fma(d, Σ of bytes 4l..4l+3 products, acc) over the blocks,
// d = d_w·d_a in float32, then hsum_float_8.
func dotQ8_0LanesRef(w, a []byte, n int) float32 {
	var acc [8]float32
	for b := 0; b < n/32; b++ {
		wb, ab := w[b*34:b*34+34], a[b*34:b*34+34]
		d := float32(FP16ToFP32(binary.LittleEndian.Uint16(wb)) * FP16ToFP32(binary.LittleEndian.Uint16(ab)))
		for l := 0; l < 8; l++ {
			var s int32
			for j := 2 + 4*l; j < 6+4*l; j++ {
				s += int32(int8(wb[j])) * int32(int8(ab[j]))
			}
			acc[l] = fma32(d, float32(s), acc[l])
		}
	}
	return hsum8(&acc)
}

func f32le(b []byte, i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) }

// dotF32Vec is ggml_vec_dot_f32 (AVX-512: four 16-lane accumulators over steps of 64,
// folded 0+2, 1+3, 0+1, then reduced; the rest added one by one).
func dotF32Vec(w, a []byte, n int) float32 {
	var sum [4][16]float32
	np := n &^ 63
	for i := 0; i < np; i += 64 {
		for j := 0; j < 4; j++ {
			for l := 0; l < 16; l++ {
				k := i + 16*j + l
				sum[j][l] = fma32(f32le(w, k), f32le(a, k), sum[j][l])
			}
		}
	}
	for l := 0; l < 16; l++ {
		sum[0][l] += sum[2][l]
		sum[1][l] += sum[3][l]
	}
	for l := 0; l < 16; l++ {
		sum[0][l] += sum[1][l]
	}
	s := reduce16(&sum[0])
	for i := np; i < n; i++ {
		s = fma32(f32le(w, i), f32le(a, i), s)
	}
	return s
}

// dotF32Gemm is tinyBLAS's F32 kernel (AVX-512): one 16-lane accumulator over the row,
// then reduced. It needs n to be a multiple of 16 (llama.cpp falls back to dotF32Vec
// otherwise, and so does this).
func dotF32Gemm(w, a []byte, n int) float32 {
	if n%16 != 0 {
		return dotF32Vec(w, a, n)
	}
	var acc [16]float32
	for i := 0; i < n; i += 16 {
		for l := 0; l < 16; l++ {
			acc[l] = fma32(f32le(w, i+l), f32le(a, i+l), acc[l])
		}
	}
	return reduce16(&acc)
}
