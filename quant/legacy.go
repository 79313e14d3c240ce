package quant

import (
	"encoding/binary"
	"math"
)

// The "legacy" 32-weight formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and the activation format Q8_1.
// Every function is a transcription of ggml's (ggml-quants.c for dequantize/_ref, ggml-cpu's
// quants.c for the *_generic dot products). Products that feed an addition are wrapped in
// float32() because Go may otherwise fuse them into an FMA (GOAMD64=v3, arm64), which would
// change the rounding relative to ggml's separately rounded operations.

const qk = 32 // block size of every legacy format

// roundHalfAway is C's roundf on a float32 value.
func roundHalfAway(f float32) float32 { return float32(math.Round(float64(f))) }

// --- Q8_0: d (fp16), qs[32] int8 -----------------------------------------------------------

func dequantQ8_0(src []byte, dst []float32) {
	for i := 0; i*qk < len(dst); i++ {
		b := src[i*34:]
		d := f16At(b, 0)
		y := dst[i*qk : i*qk+qk]
		for j := range y {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
}

// quantRefQ8_0 is quantize_row_q8_0_ref: scale amax/127, round half away from zero.
func quantRefQ8_0(x []float32, dst []byte) {
	for i := 0; i*qk < len(x); i++ {
		xb, b := x[i*qk:i*qk+qk], dst[i*34:]
		var amax float32
		for _, v := range xb {
			amax = max32(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		for j, v := range xb {
			b[2+j] = byte(int8(roundHalfAway(v * id)))
		}
	}
}

// max32 is ggml's MAX(a, b) macro: a > b ? a : b.
func max32(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

// amax32 is the largest |x| of a block, as the AVX code's max_ps reduction computes it.
func amax32(x []float32) float32 {
	var m float32
	for _, v := range x {
		m = max32(m, abs32(v))
	}
	return m
}

// quantActQ8_0 is ggml-cpu's quantize_row_q8_0 on x86 (AVX/AVX2): unlike the _ref version it
// multiplies by 127/amax (not 1/d) and rounds half to even (_mm256_round_ps nearest).
// llama.cpp quantizes every activation row this way, so this is what matches its logits.
func quantActQ8_0(x []float32, dst []byte) {
	for i := 0; i*qk < len(x); i++ {
		quantActBlock(x[i*qk:i*qk+qk], dst[i*34:], dst[i*34+2:i*34+34])
	}
}

// quantActBlock quantizes 32 values into qs as the AVX path does and stores d; it returns the
// scale and the sum of the quants (for Q8_1's s).
func quantActBlock(xb []float32, hdr []byte, qs []byte) (float32, int) {
	m := amax32(xb)
	d := m / 127
	putF16(hdr, 0, d)
	var id float32
	if m != 0 {
		id = 127 / m
	}
	sum := 0
	for j, v := range xb {
		q := int(math.RoundToEven(float64(v * id)))
		q = min(127, max(-128, q)) // packs_epi32/packs_epi16 saturate
		qs[j] = byte(int8(q))
		sum += q
	}
	return d, sum
}

func dotQ8_0(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/qk; i++ {
		x, y := w[i*34:], a[i*34:]
		sumi := int32(0)
		for j := 0; j < qk; j++ {
			sumi += int32(int8(x[2+j])) * int32(int8(y[2+j]))
		}
		sumf += float32(float32(sumi) * float32(f16At(x, 0)*f16At(y, 0)))
	}
	return sumf
}

// --- Q8_1: d (fp16), s = d·Σqs (fp16), qs[32] int8 (activations for Q4_1/Q5_1) ----------------

func quantRefQ8_1(x []float32, dst []byte) {
	for i := 0; i*qk < len(x); i++ {
		xb, b := x[i*qk:i*qk+qk], dst[i*36:]
		amax := amax32(xb)
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		sum := 0
		for j, v := range xb {
			q := int8(roundHalfAway(v * id))
			b[4+j] = byte(q)
			sum += int(q)
		}
		putF16(b, 2, float32(sum)*d)
	}
}

// quantActQ8_1 is ggml-cpu's x86 quantize_row_q8_1 (see quantActQ8_0), with s = fp16(d·Σq).
func quantActQ8_1(x []float32, dst []byte) {
	for i := 0; i*qk < len(x); i++ {
		b := dst[i*36:]
		d, sum := quantActBlock(x[i*qk:i*qk+qk], b, b[4:36])
		putF16(b, 2, d*float32(sum))
	}
}

// --- Q4_0: d (fp16), qs[16]: weight j in the low nibble of byte j, weight j+16 in the high --

func dequantQ4_0(src []byte, dst []float32) {
	for i := 0; i*qk < len(dst); i++ {
		b := src[i*18:]
		d := f16At(b, 0)
		y := dst[i*qk : i*qk+qk]
		for j := 0; j < qk/2; j++ {
			y[j] = float32(int(b[2+j]&0x0F)-8) * d
			y[j+qk/2] = float32(int(b[2+j]>>4)-8) * d
		}
	}
}

func quantRefQ4_0(x []float32, dst []byte) {
	for i := 0; i*qk < len(x); i++ {
		xb, b := x[i*qk:i*qk+qk], dst[i*18:]
		var amax, mx float32
		for _, v := range xb {
			if amax < abs32(v) {
				amax, mx = abs32(v), v
			}
		}
		d := mx / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		for j := 0; j < qk/2; j++ {
			xi0 := min(15, int8(int32(float32(xb[j]*id)+8.5)))
			xi1 := min(15, int8(int32(float32(xb[j+qk/2]*id)+8.5)))
			b[2+j] = byte(xi0) | byte(xi1)<<4
		}
	}
}

func dotQ4_0(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/qk; i++ {
		x, y := w[i*18:], a[i*34:]
		var sumi0, sumi1 int32
		for j := 0; j < qk/2; j++ {
			v0 := int32(x[2+j]&0x0F) - 8
			v1 := int32(x[2+j]>>4) - 8
			sumi0 += v0 * int32(int8(y[2+j]))
			sumi1 += v1 * int32(int8(y[2+j+qk/2]))
		}
		sumf += float32(float32(float32(sumi0+sumi1)*f16At(x, 0)) * f16At(y, 0))
	}
	return sumf
}

// --- Q4_1: d, m (fp16), qs[16]; value q·d + m ------------------------------------------------

func dequantQ4_1(src []byte, dst []float32) {
	for i := 0; i*qk < len(dst); i++ {
		b := src[i*20:]
		d, m := f16At(b, 0), f16At(b, 2)
		y := dst[i*qk : i*qk+qk]
		for j := 0; j < qk/2; j++ {
			y[j] = float32(float32(b[4+j]&0x0F)*d) + m
			y[j+qk/2] = float32(float32(b[4+j]>>4)*d) + m
		}
	}
}

// minMax is the min and max of a block as ggml's loops find them (starting from ±FLT_MAX).
func minMax(xb []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range xb {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

func quantRefQ4_1(x []float32, dst []byte) {
	for i := 0; i*qk < len(x); i++ {
		xb, b := x[i*qk:i*qk+qk], dst[i*20:]
		lo, hi := minMax(xb)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		putF16(b, 2, lo)
		for j := 0; j < qk/2; j++ {
			x0 := float32((xb[j] - lo) * id)
			x1 := float32((xb[j+qk/2] - lo) * id)
			xi0 := min(15, int8(int32(x0+0.5)))
			xi1 := min(15, int8(int32(x1+0.5)))
			b[4+j] = byte(xi0) | byte(xi1)<<4
		}
	}
}

func dotQ4_1(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/qk; i++ {
		x, y := w[i*20:], a[i*36:]
		var sumi0, sumi1 int32
		for j := 0; j < qk/2; j++ {
			sumi0 += int32(x[4+j]&0x0F) * int32(int8(y[4+j]))
			sumi1 += int32(x[4+j]>>4) * int32(int8(y[4+j+qk/2]))
		}
		t := float32(float32(f16At(x, 0)*f16At(y, 0)) * float32(sumi0+sumi1))
		sumf += t + float32(f16At(x, 2)*f16At(y, 2))
	}
	return sumf
}

// --- Q5_0: d (fp16), qh (32 fifth bits, little-endian u32), qs[16]; value (q−16)·d ----------

func dequantQ5_0(src []byte, dst []float32) {
	for i := 0; i*qk < len(dst); i++ {
		b := src[i*22:]
		d := f16At(b, 0)
		qh := binary.LittleEndian.Uint32(b[2:])
		y := dst[i*qk : i*qk+qk]
		for j := 0; j < qk/2; j++ {
			xh0 := byte((qh>>j)<<4) & 0x10
			xh1 := byte(qh>>(j+12)) & 0x10
			y[j] = float32(int32(b[6+j]&0x0F|xh0)-16) * d
			y[j+qk/2] = float32(int32(b[6+j]>>4|xh1)-16) * d
		}
	}
}

func quantRefQ5_0(x []float32, dst []byte) {
	for i := 0; i*qk < len(x); i++ {
		xb, b := x[i*qk:i*qk+qk], dst[i*22:]
		var amax, mx float32
		for _, v := range xb {
			if amax < abs32(v) {
				amax, mx = abs32(v), v
			}
		}
		d := mx / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		var qh uint32
		for j := 0; j < qk/2; j++ {
			xi0 := byte(min(31, int8(int32(float32(xb[j]*id)+16.5))))
			xi1 := byte(min(31, int8(int32(float32(xb[j+qk/2]*id)+16.5))))
			b[6+j] = xi0&0x0F | (xi1&0x0F)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + qk/2)
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
	}
}

func dotQ5_0(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/qk; i++ {
		x, y := w[i*22:], a[i*34:]
		qh := binary.LittleEndian.Uint32(x[2:])
		var sumi0, sumi1 int32
		for j := 0; j < qk/2; j++ {
			xh0 := byte((qh&(1<<j))>>j) << 4
			xh1 := byte((qh & (1 << (j + 16))) >> (j + 12))
			x0 := int32(int8((x[6+j]&0x0F | xh0) - 16))
			x1 := int32(int8((x[6+j]>>4 | xh1) - 16))
			sumi0 += x0 * int32(int8(y[2+j]))
			sumi1 += x1 * int32(int8(y[2+j+qk/2]))
		}
		sumf += float32(float32(f16At(x, 0)*f16At(y, 0)) * float32(sumi0+sumi1))
	}
	return sumf
}

// --- Q5_1: d, m (fp16), qh (u32), qs[16]; value q·d + m --------------------------------------

func dequantQ5_1(src []byte, dst []float32) {
	for i := 0; i*qk < len(dst); i++ {
		b := src[i*24:]
		d, m := f16At(b, 0), f16At(b, 2)
		qh := binary.LittleEndian.Uint32(b[4:])
		y := dst[i*qk : i*qk+qk]
		for j := 0; j < qk/2; j++ {
			xh0 := byte((qh>>j)<<4) & 0x10
			xh1 := byte(qh>>(j+12)) & 0x10
			y[j] = float32(float32(b[8+j]&0x0F|xh0)*d) + m
			y[j+qk/2] = float32(float32(b[8+j]>>4|xh1)*d) + m
		}
	}
}

func quantRefQ5_1(x []float32, dst []byte) {
	for i := 0; i*qk < len(x); i++ {
		xb, b := x[i*qk:i*qk+qk], dst[i*24:]
		lo, hi := minMax(xb)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		putF16(b, 2, lo)
		var qh uint32
		for j := 0; j < qk/2; j++ {
			x0 := float32((xb[j] - lo) * id)
			x1 := float32((xb[j+qk/2] - lo) * id)
			xi0 := byte(int32(x0 + 0.5))
			xi1 := byte(int32(x1 + 0.5))
			b[8+j] = xi0&0x0F | (xi1&0x0F)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + qk/2)
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
	}
}

func dotQ5_1(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/qk; i++ {
		x, y := w[i*24:], a[i*36:]
		qh := binary.LittleEndian.Uint32(x[4:])
		var sumi0, sumi1 int32
		for j := 0; j < qk/2; j++ {
			xh0 := byte((qh>>j)<<4) & 0x10
			xh1 := byte(qh>>(j+12)) & 0x10
			sumi0 += int32(x[8+j]&0x0F|xh0) * int32(int8(y[4+j]))
			sumi1 += int32(x[8+j]>>4|xh1) * int32(int8(y[4+j+qk/2]))
		}
		t := float32(float32(f16At(x, 0)*f16At(y, 0)) * float32(sumi0+sumi1))
		sumf += t + float32(f16At(x, 2)*f16At(y, 2))
	}
	return sumf
}

func init() {
	register(Q8_0, &format{vecDot: Q8_0, dequant: dequantQ8_0, quant: quantRefQ8_0, act: quantActQ8_0, dot: dotQ8_0})
	register(Q8_1, &format{quant: quantRefQ8_1, act: quantActQ8_1})
	register(Q4_0, &format{vecDot: Q8_0, dequant: dequantQ4_0, quant: quantRefQ4_0, dot: dotQ4_0})
	register(Q4_1, &format{vecDot: Q8_1, dequant: dequantQ4_1, quant: quantRefQ4_1, dot: dotQ4_1})
	register(Q5_0, &format{vecDot: Q8_0, dequant: dequantQ5_0, quant: quantRefQ5_0, dot: dotQ5_0})
	register(Q5_1, &format{vecDot: Q8_1, dequant: dequantQ5_1, quant: quantRefQ5_1, dot: dotQ5_1})
}
