package quant

// Q2_0 (type 42): 64 weights per 18-byte block, an fp16 scale d then 16 bytes of 2-bit codes,
// four consecutive weights per byte: q_j = (qs[j/4] >> (2·(j%4))) & 3, value (q_j − 1)·d, i.e.
// {−d, 0, d, 2d}. A negative d mirrors the grid to {−2|d|, −|d|, 0, |d|}; dequantization and
// the dot product handle either sign. llama.cpp's reference quantizer always stores d = amax ≥ 0.

const qk2_0 = 64

func dequantQ2_0(src []byte, dst []float32) {
	for i := 0; i*qk2_0 < len(dst); i++ {
		b := src[i*18:]
		d := f16At(b, 0)
		y := dst[i*qk2_0 : i*qk2_0+qk2_0]
		for j := range y {
			q := (b[2+j/4] >> (2 * (j % 4))) & 3
			y[j] = float32(int(q)-1) * d
		}
	}
}

// quantRefQ2_0 is quantize_row_q2_0_ref: d = amax, q = clamp(round(w/d), −1, 2) + 1.
func quantRefQ2_0(x []float32, dst []byte) {
	for i := 0; i*qk2_0 < len(x); i++ {
		xb, b := x[i*qk2_0:i*qk2_0+qk2_0], dst[i*18:i*18+18]
		var amax float32
		for _, v := range xb {
			if a := abs32(v); a > amax {
				amax = a
			}
		}
		d := amax
		var id float32
		if d > 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		clear(b[2:])
		for j, w := range xb {
			q := int(int32(roundHalfAway(w*id))) + 1
			q = max(0, min(3, q))
			b[2+j/4] |= uint8(q) << (2 * (j % 4))
		}
	}
}

// dotQ2_0 is ggml_vec_dot_q2_0_q8_0_generic: one Q2_0 block spans two Q8_0 blocks; each half's
// integer sum is scaled by its activation scale, and the block total by d.
func dotQ2_0(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/qk2_0; i++ {
		x := w[i*18:]
		var sumi float32
		for k := 0; k < 2; k++ {
			y := a[(2*i+k)*34:]
			d1 := f16At(y, 0)
			var block int32
			qs := x[2+8*k : 2+8*k+8]
			for bi, c := range qs {
				for s := 0; s < 4; s++ {
					block += (int32((c>>(2*s))&3) - 1) * int32(int8(y[2+4*bi+s]))
				}
			}
			sumi += float32(d1 * float32(block))
		}
		sumf += float32(f16At(x, 0) * sumi)
	}
	return sumf
}

func init() {
	register(Q2_0, &format{vecDot: Q8_0, dequant: dequantQ2_0, quant: quantRefQ2_0, dot: dotQ2_0})
}
