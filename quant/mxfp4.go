package quant

import "math"

// MXFP4 (OCP microscaling FP4): 32 weights per 17-byte block, an E8M0 exponent e, then 16 bytes
// of E2M1 codes (weight j in the low nibble of byte j, weight j+16 in the high nibble). ggml
// stores the E2M1 values doubled as int8 (kvalues_mxfp4) and halves the scale to compensate.

var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// e8m0Half is ggml_e8m0_to_fp32_half: 2^(e−128), with e < 2 built as a denormal.
func e8m0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

func dequantMXFP4(src []byte, dst []float32) {
	for i := 0; i*32 < len(dst); i++ {
		b := src[i*17:]
		d := e8m0Half(b[0])
		y := dst[i*32 : i*32+32]
		for j := 0; j < 16; j++ {
			y[j] = float32(kvaluesMXFP4[b[1+j]&0x0F]) * d
			y[j+16] = float32(kvaluesMXFP4[b[1+j]>>4]) * d
		}
	}
}

// bestIndexMXFP4 is best_index_mxfp4: the first code whose value times e is nearest x.
func bestIndexMXFP4(x, e float32) uint8 {
	best := 0
	bestErr := abs32(float32(float32(kvaluesMXFP4[0])*e) - x)
	for i := 1; i < 16; i++ {
		if err := abs32(float32(float32(kvaluesMXFP4[i])*e) - x); err < bestErr {
			best, bestErr = i, err
		}
	}
	return uint8(best)
}

// quantRefMXFP4 is quantize_row_mxfp4_ref: e = floor(log2(amax)) − 2 + 127, which puts amax in
// the top binade of E2M1 (4 ≤ amax/2^(e−127) < 8, so ±6 is the largest code), then nearest code.
func quantRefMXFP4(x []float32, dst []byte) {
	for i := 0; i*32 < len(x); i++ {
		xb, b := x[i*32:i*32+32], dst[i*17:]
		var amax float32
		for _, v := range xb {
			if amax < abs32(v) {
				amax = abs32(v)
			}
		}
		var e uint8
		if amax > 0 {
			// log2f rounds to float32 before the floor: an amax just below a power of two
			// rounds up to the integer, so do the same.
			l := float32(math.Log2(float64(amax)))
			e = uint8(int32(float32(float32(math.Floor(float64(l)))-2) + 127))
		}
		d := e8m0Half(e)
		b[0] = e
		for j := 0; j < 16; j++ {
			b[1+j] = bestIndexMXFP4(xb[j], d) | bestIndexMXFP4(xb[j+16], d)<<4
		}
	}
}

func dotMXFP4(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/32; i++ {
		x, y := w[i*17:], a[i*34:]
		d := f16At(y, 0) * e8m0Half(x[0])
		var sumi1, sumi2 int32
		for j := 0; j < 16; j++ {
			sumi1 += int32(int8(y[2+j])) * int32(kvaluesMXFP4[x[1+j]&0xf])
			sumi2 += int32(int8(y[2+j+16])) * int32(kvaluesMXFP4[x[1+j]>>4])
		}
		sumf += float32(d * float32(sumi1+sumi2))
	}
	return sumf
}

func init() {
	register(MXFP4, &format{vecDot: Q8_0, dequant: dequantMXFP4, quant: quantRefMXFP4, dot: dotMXFP4})
}
