package quant

import "encoding/binary"

// IQ4_NL and IQ4_XS: 4-bit indices into a fixed non-linear table of int8 values. IQ4_NL has
// 32-weight blocks with an fp16 scale; IQ4_XS has 256-weight super-blocks with eight 6-bit
// sub-block scales. Transcribed from ggml-quants.c (quantize_row_iq4_nl_impl and the
// dequantizers) and ggml-cpu's quants.c (ggml_vec_dot_iq4_*_generic).

var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// bestIndexInt8 is best_index_int8: the index of the table value nearest x (ties go up).
func bestIndexInt8(val []int8, x float32) int {
	n := len(val)
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[n-1]) {
		return n - 1
	}
	ml, mu := 0, n-1
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(val[mu-1]) < float32(val[mu])-x {
		return mu - 1
	}
	return mu
}

// iq4State is the scratch that quantize_row_iq4_nl_impl reads and writes. ggml keeps L on the
// caller's stack across blocks, so a block whose values are all ~0 (skipped by the fit) reuses
// the previous block's indices; keeping L here across the blocks of one row reproduces that
// (ggml's first block would read uninitialised stack, regolith's reads zeros).
type iq4State struct {
	L      [QK_K]uint8
	scales [QK_K / 32]float32
}

// quantIQ4 is quantize_row_iq4_nl_impl without importance weights (weight = x²) for a
// super-block of len(x) weights in 32-weight blocks. It returns the fp16 scale bits, fills
// q4 and, for more than one block, scalesH/scalesL.
func (s *iq4State) quantIQ4(x []float32, q4 []byte, scalesH *uint16, scalesL []byte, ntry int) uint16 {
	const bs = 32
	values := kvaluesIQ4NL[:]
	var weight [bs]float32
	clear(q4[:len(x)/2])
	dh := FP32ToFP16(0)
	var maxScale, amaxScale float32
	nb := len(x) / bs
	for ib := 0; ib < nb; ib++ {
		xb, Lb := x[ib*bs:ib*bs+bs], s.L[ib*bs:ib*bs+bs]
		for j, v := range xb {
			weight[j] = v * v
		}
		var amax, mx float32
		for _, v := range xb {
			if ax := abs32(v); ax > amax {
				amax, mx = ax, v
			}
		}
		if amax < groupMaxEps {
			s.scales[ib] = 0
			continue
		}
		var d float32
		if ntry > 0 {
			d = -mx / float32(values[0])
		} else {
			d = mx / float32(values[0])
		}
		id := 1 / d
		var sumqx, sumq2 float32
		for j, v := range xb {
			l := bestIndexInt8(values, id*v)
			Lb[j] = uint8(l)
			q := float32(values[l])
			w := weight[j]
			sumqx += float32(float32(w*q) * v)
			sumq2 += float32(float32(w*q) * q)
		}
		d = 0
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		best := d * sumqx
		for itry := -ntry; itry <= ntry; itry++ {
			id = float32(itry+int(values[0])) / mx
			sumqx, sumq2 = 0, 0
			for j, v := range xb {
				q := float32(values[bestIndexInt8(values, id*v)])
				w := weight[j]
				sumqx += float32(float32(w*q) * v)
				sumq2 += float32(float32(w*q) * q)
			}
			if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
				d = sumqx / sumq2
				best = d * sumqx
			}
		}
		s.scales[ib] = d
		if ad := abs32(d); ad > amaxScale {
			amaxScale, maxScale = ad, d
		}
	}
	if nb > 1 {
		*scalesH = 0
		d := -maxScale / 32
		dh = FP32ToFP16(d)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for ib := 0; ib < nb; ib++ {
			l := nearestInt(id * s.scales[ib])
			l = max(-32, min(31, l))
			dl := d * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			for j, v := range x[ib*bs : ib*bs+bs] {
				s.L[ib*bs+j] = uint8(bestIndexInt8(values, idl*v))
			}
			l += 32
			ll, lh := uint8(l&0xf), uint16(l>>4)
			if ib%2 == 0 {
				scalesL[ib/2] = ll
			} else {
				scalesL[ib/2] |= ll << 4
			}
			*scalesH |= lh << (2 * (ib % 8))
		}
	} else {
		dh = FP32ToFP16(s.scales[0])
		if ntry > 0 {
			var id float32
			if s.scales[0] != 0 {
				id = 1 / s.scales[0]
			}
			for j, v := range x {
				s.L[j] = uint8(bestIndexInt8(values, id*v))
			}
		}
	}
	for i := 0; i < len(x)/32; i++ {
		for j := 0; j < 16; j++ {
			q4[16*i+j] = s.L[32*i+j] | s.L[32*i+16+j]<<4
		}
	}
	return dh
}

// --- IQ4_NL: d (fp16), qs[16] ----------------------------------------------------------------

func dequantIQ4_NL(src []byte, dst []float32) {
	for i := 0; i*32 < len(dst); i++ {
		b := src[i*18:]
		d := f16At(b, 0)
		y := dst[i*32 : i*32+32]
		for j := 0; j < 16; j++ {
			y[j] = d * float32(kvaluesIQ4NL[b[2+j]&0xf])
			y[j+16] = d * float32(kvaluesIQ4NL[b[2+j]>>4])
		}
	}
}

// quantRefIQ4_NL is quantize_row_iq4_nl_ref: ntry = −1, i.e. one least-squares scale per block
// from the initial assignment, with no search.
func quantRefIQ4_NL(x []float32, dst []byte) {
	var s iq4State
	var unusedH uint16
	for i := 0; i*32 < len(x); i++ {
		b := dst[i*18:]
		dh := s.quantIQ4(x[i*32:i*32+32], b[2:18], &unusedH, nil, -1)
		binary.LittleEndian.PutUint16(b, dh)
	}
}

func dotIQ4_NL(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/32; i++ {
		x, y := w[i*18:], a[i*34:]
		d := f16At(y, 0) * f16At(x, 0)
		var sumi1, sumi2 int32
		for j := 0; j < 16; j++ {
			sumi1 += int32(int8(y[2+j])) * int32(kvaluesIQ4NL[x[2+j]&0xf])
			sumi2 += int32(int8(y[2+j+16])) * int32(kvaluesIQ4NL[x[2+j]>>4])
		}
		sumf += float32(d * float32(sumi1+sumi2))
	}
	return sumf
}

// --- IQ4_XS: d (fp16), scales_h (u16), scales_l[4], qs[128] ----------------------------------

func iq4xsScale(b []byte, ib int) int {
	h := binary.LittleEndian.Uint16(b[2:])
	return int((b[4+ib/2]>>(4*(ib%2)))&0xf) | int((h>>(2*ib))&3)<<4
}

func dequantIQ4_XS(src []byte, dst []float32) {
	for i := 0; i*QK_K < len(dst); i++ {
		b := src[i*136:]
		d := f16At(b, 0)
		qs := b[8:136]
		y := dst[i*QK_K:]
		for ib := 0; ib < QK_K/32; ib++ {
			dl := d * float32(iq4xsScale(b, ib)-32)
			for j := 0; j < 16; j++ {
				y[j] = dl * float32(kvaluesIQ4NL[qs[j]&0xf])
				y[j+16] = dl * float32(kvaluesIQ4NL[qs[j]>>4])
			}
			y, qs = y[32:], qs[16:]
		}
	}
}

// quantRefIQ4_XS is quantize_row_iq4_xs_ref (quantize_iq4_xs without an imatrix, ntry = 7).
func quantRefIQ4_XS(x []float32, dst []byte) {
	var s iq4State
	for i := 0; i*QK_K < len(x); i++ {
		b := dst[i*136:]
		var h uint16
		dh := s.quantIQ4(x[i*QK_K:i*QK_K+QK_K], b[8:136], &h, b[4:8], 7)
		binary.LittleEndian.PutUint16(b, dh)
		binary.LittleEndian.PutUint16(b[2:], h)
	}
}

func dotIQ4_XS(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*136:], a[i*q8kSize:]
		d4d8 := f16At(x, 0) * f32At(y, 0)
		qs, q8 := x[8:136], y[q8kQs:q8kQs+QK_K]
		for ib := 0; ib < QK_K/32; ib++ {
			dl := d4d8 * float32(iq4xsScale(x, ib)-32)
			var sumi1, sumi2 int32
			for j := 0; j < 16; j++ {
				sumi1 += int32(int8(q8[j])) * int32(kvaluesIQ4NL[qs[j]&0xf])
				sumi2 += int32(int8(q8[j+16])) * int32(kvaluesIQ4NL[qs[j]>>4])
			}
			sumf += float32(dl * float32(sumi1+sumi2))
			qs, q8 = qs[16:], q8[32:]
		}
	}
	return sumf
}

func init() {
	register(IQ4_NL, &format{vecDot: Q8_0, dequant: dequantIQ4_NL, quant: quantRefIQ4_NL, dot: dotIQ4_NL})
	register(IQ4_XS, &format{vecDot: Q8_K, dequant: dequantIQ4_XS, quant: quantRefIQ4_XS, dot: dotIQ4_XS})
}
