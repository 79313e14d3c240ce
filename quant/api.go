package quant

import (
	"fmt"
	"math"
)

// format is what regolith implements for one type. Every function works on whole blocks
// and trusts its arguments: the exported entry points below check lengths first.
type format struct {
	vecDot  Type                             // activation type of the dot product (ggml-cpu's vec_dot_type)
	dequant func(src []byte, dst []float32)  // ggml's dequantize_row_* (to_float)
	quant   func(src []float32, dst []byte)  // ggml's quantize_row_*_ref (from_float_ref)
	act     func(src []float32, dst []byte)  // ggml-cpu's from_float, for activation types
	dot     func(w, a []byte, n int) float32 // ggml-cpu's scalar ggml_vec_dot_*_generic
}

var formats = map[Type]*format{}

func register(t Type, f *format) { formats[t] = f }

var nan32 = float32(math.NaN())

// checkRow verifies that b holds exactly n elements of type t.
func checkRow(t Type, b []byte, n int, what string) error {
	want, err := t.RowBytes(int64(n))
	if err != nil {
		return err
	}
	if int64(len(b)) != want {
		return fmt.Errorf("%s: %s of %d elements needs %d bytes, got %d", t, what, n, want, len(b))
	}
	return nil
}

// DequantizeRow expands src, a row of len(dst) elements of type t, into dst, bit-identical to
// llama.cpp's dequantize_row_*.
func DequantizeRow(t Type, src []byte, dst []float32) error {
	f := formats[t]
	if f == nil || f.dequant == nil {
		return fmt.Errorf("quant: dequantizing %s is not supported", t)
	}
	if err := checkRow(t, src, len(dst), "row"); err != nil {
		return err
	}
	f.dequant(src, dst)
	return nil
}

// QuantizeRow encodes src into dst (len(src) elements of type t) with llama.cpp's reference
// quantizer (quantize_row_*_ref), bit-identical to it.
func QuantizeRow(t Type, src []float32, dst []byte) error {
	f := formats[t]
	if f == nil || f.quant == nil {
		return fmt.Errorf("quant: quantizing to %s is not supported", t)
	}
	if err := checkRow(t, dst, len(src), "row"); err != nil {
		return err
	}
	f.quant(src, dst)
	return nil
}

// VecDotType is the activation type ggml's CPU backend pairs with weight type t in a matrix
// product (type_traits_cpu[t].vec_dot_type). For a type without a dot product it returns F32,
// as ggml's zero-initialized table does; DotRef and Dot reject such types.
func VecDotType(t Type) Type {
	if f := formats[t]; f != nil && f.dot != nil {
		return f.vecDot
	}
	return F32
}

// ActivationBytes is the byte size of an n-element activation row in VecDotType(t), or -1 when
// n is not a whole number of its blocks.
func ActivationBytes(t Type, n int) int {
	b, err := VecDotType(t).RowBytes(int64(n))
	if err != nil {
		return -1
	}
	return int(b)
}

// QuantizeActivations converts an activation row x into VecDotType(t), as ggml-cpu does before
// a matrix product with weights of type t (from_float of the vec_dot type). For Q8_0 and Q8_1
// this is the x86 AVX2 path, which rounds half to even (the _ref quantizers round half away
// from zero); for Q8_K it is the reference quantizer.
func QuantizeActivations(t Type, x []float32, dst []byte) error {
	f := formats[t]
	if f == nil || f.dot == nil {
		return fmt.Errorf("quant: %s has no dot product", t)
	}
	vt := f.vecDot
	if err := checkRow(vt, dst, len(x), "activation row"); err != nil {
		return err
	}
	formats[vt].act(x, dst)
	return nil
}

func checkDot(t Type, w, a []byte, n int) error {
	f := formats[t]
	if f == nil || f.dot == nil {
		return fmt.Errorf("quant: %s has no dot product", t)
	}
	if err := checkRow(t, w, n, "weight row"); err != nil {
		return err
	}
	return checkRow(f.vecDot, a, n, "activation row")
}

// DotRef is the plain-Go reference dot product of a weight row w (n elements of type t) with an
// activation row a in VecDotType(t). It computes what llama.cpp's scalar ggml_vec_dot_*_generic
// computes: exact integer sums per block, scaled and accumulated in the same order. It returns
// NaN when t has no dot product or a buffer length does not match n.
func DotRef(t Type, w []byte, a []byte, n int) float32 {
	if checkDot(t, w, a, n) != nil {
		return nan32
	}
	return formats[t].dot(w, a, n)
}

// nearestInt is ggml's nearest_int: adding 1.5·2^23 makes the float adder round to nearest
// even, and the integer is read from the mantissa. Valid for |f| ≤ 4194303, like ggml's.
func nearestInt(f float32) int {
	val := float32(f + 12582912)
	i := int32(math.Float32bits(val))
	return int(i&0x007fffff) - 0x00400000
}
