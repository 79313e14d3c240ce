package quant

import (
	"encoding/binary"
	"math"
)

// The K-quants: 256-weight super-blocks with 6- or 8-bit sub-block scales (Q2_K … Q6_K), and
// their activation format Q8_K. Transcribed from ggml-quants.c (dequantize_row_*,
// quantize_row_*_ref and its helpers make_qkx2_quants, make_qx_quants, make_q3_quants) and
// ggml-cpu's quants.c (ggml_vec_dot_*_q8_K_generic). As in legacy.go, float32() around a
// product keeps Go from fusing it into an FMA that ggml does not perform.

// Q8_K block: d float32, qs[256] int8, bsums[16] int16 (sums of 16 consecutive quants).
const (
	q8kQs    = 4
	q8kBsums = 4 + QK_K
	q8kSize  = 292
)

func q8kBsum(y []byte, j int) int32 {
	return int32(int16(binary.LittleEndian.Uint16(y[q8kBsums+2*j:])))
}

func dequantQ8_K(src []byte, dst []float32) {
	for i := 0; i*QK_K < len(dst); i++ {
		b := src[i*q8kSize:]
		d := f32At(b, 0)
		for j := 0; j < QK_K; j++ {
			dst[i*QK_K+j] = d * float32(int8(b[q8kQs+j]))
		}
	}
}

// quantRefQ8_K is quantize_row_q8_K_ref; ggml-cpu's quantize_row_q8_K (x86 too) calls it.
func quantRefQ8_K(x []float32, dst []byte) {
	for i := 0; i*QK_K < len(x); i++ {
		xb, b := x[i*QK_K:i*QK_K+QK_K], dst[i*q8kSize:i*q8kSize+q8kSize]
		var mx, amax float32
		for _, v := range xb {
			if ax := abs32(v); ax > amax {
				amax, mx = ax, v
			}
		}
		if amax == 0 {
			clear(b)
			continue
		}
		iscale := -127 / mx
		for j, v := range xb {
			b[q8kQs+j] = byte(int8(min(127, nearestInt(iscale*v))))
		}
		for j := 0; j < QK_K/16; j++ {
			sum := 0
			for ii := 0; ii < 16; ii++ {
				sum += int(int8(b[q8kQs+16*j+ii]))
			}
			binary.LittleEndian.PutUint16(b[q8kBsums+2*j:], uint16(int16(sum)))
		}
		putF32(b, 0, 1/iscale)
	}
}

// getScaleMinK4 unpacks the j-th 6-bit scale and min of Q4_K/Q5_K (get_scale_min_k4).
func getScaleMinK4(j int, q []byte) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xF | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// makeQKX2Quants is make_qkx2_quants: an asymmetric (scale, min) fit of x to 0..nmax that
// tries nstep+1 scales around the range and keeps the one with the least weighted error.
func makeQKX2Quants(nmax int, x, weights []float32, L, Laux []uint8, rmin, rdelta float32, nstep int, useMad bool) (scale, theMin float32) {
	n := len(x)
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		for i := range L[:n] {
			L[i] = 0
		}
		return 0, -lo
	}
	errOf := func(diff float32) float32 {
		if useMad {
			return abs32(diff)
		}
		return float32(diff * diff)
	}
	iscale := float32(nmax) / (hi - lo)
	scale = 1 / iscale
	var bestError float32
	for i := 0; i < n; i++ {
		l := nearestInt(float32(iscale * (x[i] - lo)))
		L[i] = uint8(max(0, min(nmax, l)))
		diff := float32(float32(scale*float32(L[i]))+lo) - x[i]
		bestError += float32(weights[i] * errOf(diff))
	}
	if nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= nstep; is++ {
		iscale = (float32(rmin+float32(rdelta*float32(is))) + float32(nmax)) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i := 0; i < n; i++ {
			l := nearestInt(float32(iscale * (x[i] - lo)))
			l = max(0, min(nmax, l))
			Laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := 0; i < n; i++ {
				diff := float32(float32(thisScale*float32(Laux[i]))+thisMin) - x[i]
				curError += float32(weights[i] * errOf(diff))
			}
			if curError < bestError {
				copy(L[:n], Laux[:n])
				bestError = curError
				scale, lo = thisScale, thisMin
			}
		}
	}
	return scale, -lo
}

const groupMaxEps = 1e-15

// makeQxQuants is make_qx_quants for qw == NULL: a symmetric scale for values in
// −nmax..nmax−1, refined over 18 trial scales by weighted least squares.
func makeQxQuants(nmax int, x []float32, L []int8, rmseType int) float32 {
	var mx, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, mx = ax, v
		}
	}
	if amax < groupMaxEps {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	weight := func(v float32) float32 {
		switch rmseType {
		case 1:
			return v * v
		case 2:
			return 1
		case 3:
			return abs32(v)
		}
		return float32(math.Sqrt(float64(abs32(v))))
	}
	iscale := float32(-nmax) / mx
	if rmseType == 0 {
		for i, v := range x {
			l := nearestInt(iscale * v)
			L[i] = int8(nmax + max(-nmax, min(nmax-1, l)))
		}
		return 1 / iscale
	}
	returnEarly := false
	if rmseType < 0 {
		rmseType, returnEarly = -rmseType, true
	}
	var sumlx, suml2 float32
	for i, v := range x {
		l := nearestInt(iscale * v)
		l = max(-nmax, min(nmax-1, l))
		L[i] = int8(l + nmax)
		w := weight(v)
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	if returnEarly {
		if suml2 > 0 {
			return 0.5 * (scale + 1/iscale)
		}
		return 1 / iscale
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / mx
		sumlx, suml2 = 0, 0
		for _, v := range x {
			l := nearestInt(iscale * v)
			l = max(-nmax, min(nmax-1, l))
			w := weight(v)
			sumlx += float32(float32(w*v) * float32(l))
			suml2 += float32(float32(w*float32(l)) * float32(l))
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				l := nearestInt(iscale * v)
				L[i] = int8(nmax + max(-nmax, min(nmax-1, l)))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is make_q3_quants with do_rmse: a symmetric fit to −nmax..nmax−1 improved by
// up to five passes of coordinate descent on the x²-weighted error.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	var mx, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, mx = ax, v
		}
	}
	if amax < groupMaxEps {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	iscale := float32(-nmax) / mx
	var sumlx, suml2 float32
	for i, v := range x {
		l := nearestInt(iscale * v)
		l = max(-nmax, min(nmax-1, l))
		L[i] = int8(l)
		w := float32(v * v)
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w := float32(v * v)
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*li)*li)
				newL := nearestInt(float32(v*sl2) / slx)
				newL = max(-nmax, min(nmax-1, newL))
				if newL != int(L[i]) {
					fl := float32(newL)
					slx += float32(float32(w*v) * fl)
					sl2 += float32(float32(w*fl) * fl)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = int8(newL)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// --- Q2_K: scales[16] (4-bit scale | 4-bit min << 4), qs[64], d, dmin (fp16) --------------

func dequantQ2_K(src []byte, dst []float32) {
	for i := 0; i*QK_K < len(dst); i++ {
		b := src[i*84:]
		d, dmin := f16At(b, 80), f16At(b, 82)
		y := dst[i*QK_K:]
		q := b[16:80]
		is := 0
		for n := 0; n < QK_K; n += 128 {
			shift := 0
			for j := 0; j < 4; j++ {
				for half := 0; half < 2; half++ {
					sc := b[is]
					is++
					dl, ml := d*float32(sc&0xF), dmin*float32(sc>>4)
					for l := 0; l < 16; l++ {
						y[l] = float32(dl*float32((q[l+16*half]>>shift)&3)) - ml
					}
					y = y[16:]
				}
				shift += 2
			}
			q = q[32:]
		}
	}
}

func quantRefQ2_K(x []float32, dst []byte) {
	var (
		L       [QK_K]uint8
		Laux    [16]uint8
		weights [16]float32
		mins    [QK_K / 16]float32
		scales  [QK_K / 16]float32
	)
	const q4scale = 15
	for i := 0; i*QK_K < len(x); i++ {
		xb, b := x[i*QK_K:i*QK_K+QK_K], dst[i*84:i*84+84]
		var maxScale, maxMin float32
		for j := 0; j < QK_K/16; j++ {
			for l := 0; l < 16; l++ {
				weights[l] = abs32(xb[16*j+l])
			}
			scales[j], mins[j] = makeQKX2Quants(3, xb[16*j:16*j+16], weights[:], L[16*j:], Laux[:], -0.5, 0.1, 15, true)
			maxScale = max32(scales[j], maxScale)
			maxMin = max32(mins[j], maxMin)
		}
		sc := b[:16]
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range sc {
				sc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putF16(b, 80, maxScale/q4scale)
		} else {
			clear(sc)
			putF16(b, 80, 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range sc {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putF16(b, 82, maxMin/q4scale)
		} else {
			putF16(b, 82, 0)
		}
		for j := 0; j < QK_K/16; j++ {
			d := f16At(b, 80) * float32(sc[j]&0xF)
			if d == 0 {
				continue
			}
			dm := f16At(b, 82) * float32(sc[j]>>4)
			for ii := 0; ii < 16; ii++ {
				l := nearestInt((xb[16*j+ii] + dm) / d)
				L[16*j+ii] = uint8(max(0, min(3, l)))
			}
		}
		packQ2(b[16:80], L[:])
	}
}

// packQ2 stores 2-bit values: byte j/4+l of each 128-group holds L[j+l], L[j+l+32], L[j+l+64],
// L[j+l+96] in bits 0-1, 2-3, 4-5, 6-7 (Q2_K and the low bits of Q3_K).
func packQ2(qs []byte, L []uint8) {
	for j := 0; j < QK_K; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

func dotQ2_K(w, a []byte, n int) float32 {
	var sumf float32
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*84:], a[i*q8kSize:]
		sc, q2, q8 := x[:16], x[16:80], y[q8kQs:q8kQs+QK_K]
		summs := int32(0)
		for j := 0; j < 16; j++ {
			summs += q8kBsum(y, j) * int32(sc[j]>>4)
		}
		yd := f32At(y, 0)
		dall := yd * f16At(x, 80)
		dmin := yd * f16At(x, 82)
		isum := int32(0)
		is := 0
		for k := 0; k < QK_K/128; k++ {
			shift := 0
			for j := 0; j < 4; j++ {
				for half := 0; half < 2; half++ {
					d := int32(sc[is] & 0xF)
					is++
					isuml := int32(0)
					for l := 16 * half; l < 16*half+16; l++ {
						isuml += int32(int8(q8[l])) * int32((q2[l]>>shift)&3)
					}
					isum += d * isuml
				}
				shift += 2
				q8 = q8[32:]
			}
			q2 = q2[32:]
		}
		sumf += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sumf
}

// --- Q3_K: hmask[32], qs[64], scales[12] (sixteen 6-bit scales), d (fp16) ------------------

// q3kScales unpacks the sixteen 6-bit scales of a Q3_K block, biased by −32.
func q3kScales(s []byte) (out [16]int32) {
	for j := 0; j < 16; j++ {
		var lo byte
		if j < 8 {
			lo = s[j] & 0xF
		} else {
			lo = s[j-8] >> 4
		}
		hi := (s[8+j%4] >> (2 * (j / 4))) & 3
		out[j] = int32(int8(lo|hi<<4)) - 32
	}
	return out
}

func dequantQ3_K(src []byte, dst []float32) {
	for i := 0; i*QK_K < len(dst); i++ {
		b := src[i*110:]
		dAll := f16At(b, 108)
		hm, q := b[0:32], b[32:96]
		scales := q3kScales(b[96:108])
		y := dst[i*QK_K:]
		m := byte(1)
		is := 0
		for n := 0; n < QK_K; n += 128 {
			shift := 0
			for j := 0; j < 4; j++ {
				for half := 0; half < 2; half++ {
					dl := dAll * float32(scales[is])
					is++
					for l := 16 * half; l < 16*half+16; l++ {
						v := int32((q[l] >> shift) & 3)
						if hm[l]&m == 0 {
							v -= 4
						}
						y[l-16*half] = dl * float32(v)
					}
					y = y[16:]
				}
				shift += 2
				m <<= 1
			}
			q = q[32:]
		}
	}
}

func quantRefQ3_K(x []float32, dst []byte) {
	var (
		L      [QK_K]int8
		scales [QK_K / 16]float32
	)
	for i := 0; i*QK_K < len(x); i++ {
		xb, b := x[i*QK_K:i*QK_K+QK_K], dst[i*110:i*110+110]
		var maxScale, amax float32
		for j := 0; j < QK_K/16; j++ {
			scales[j] = makeQ3Quants(4, xb[16*j:16*j+16], L[16*j:])
			if s := abs32(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		sc := b[96:108]
		clear(sc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < QK_K/16; j++ {
				l := int8(nearestInt(iscale * scales[j]))
				l = max(-32, min(31, l)) + 32
				if j < 8 {
					sc[j] = byte(l & 0xF)
				} else {
					sc[j-8] |= byte(l&0xF) << 4
				}
				l >>= 4
				sc[j%4+8] |= byte(l) << (2 * (j / 4))
			}
			putF16(b, 108, 1/iscale)
		} else {
			putF16(b, 108, 0)
		}
		s := q3kScales(sc)
		for j := 0; j < QK_K/16; j++ {
			d := f16At(b, 108) * float32(s[j])
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(xb[16*j+ii] / d)
				L[16*j+ii] = int8(max(-4, min(3, l)) + 4)
			}
		}
		hmask := b[0:32]
		clear(hmask)
		m, hm := 0, byte(1)
		for j := 0; j < QK_K; j++ {
			if L[j] > 3 {
				hmask[m] |= hm
				L[j] -= 4
			}
			if m++; m == QK_K/8 {
				m, hm = 0, hm<<1
			}
		}
		var Lu [QK_K]uint8
		for j := range L {
			Lu[j] = uint8(L[j])
		}
		packQ2(b[32:96], Lu[:])
	}
}

// dot8Lanes adds scale·q8[l]·a[l] over a 16-weight group into eight integer lanes, as the
// generic K-quant dot products do (aux32[l % 8]); the lanes are summed in float later.
func dot8Lanes(aux *[8]int32, scale int32, q8 []byte, a []int8) {
	for l := 0; l < 16; l++ {
		aux[l%8] += scale * int32(int16(int32(int8(q8[l]))*int32(a[l])))
	}
}

func dotQ3_K(w, a []byte, n int) float32 {
	var sums [8]float32
	var aux8 [QK_K]int8
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*110:], a[i*q8kSize:]
		hm, q3 := x[0:32], x[32:96]
		for j, m := 0, byte(1); j < QK_K; j += 32 {
			shift := (j / 32 % 4) * 2
			for l := 0; l < 32; l++ {
				v := int8((q3[l] >> shift) & 3)
				if hm[l]&m == 0 {
					v -= 4
				}
				aux8[j+l] = v
			}
			m <<= 1
			if shift == 6 {
				q3 = q3[32:]
			}
		}
		scales := q3kScales(x[96:108])
		var aux32 [8]int32
		q8 := y[q8kQs:]
		for j := 0; j < QK_K/16; j++ {
			dot8Lanes(&aux32, scales[j], q8[16*j:], aux8[16*j:])
		}
		d := f16At(x, 108) * f32At(y, 0)
		for l := range sums {
			sums[l] += float32(d * float32(aux32[l]))
		}
	}
	var sumf float32
	for _, s := range sums {
		sumf += s
	}
	return sumf
}

// --- Q4_K: d, dmin (fp16), scales[12] (eight 6-bit scales and mins), qs[128] -----------------

func dequantQ4_K(src []byte, dst []float32) {
	for i := 0; i*QK_K < len(dst); i++ {
		b := src[i*144:]
		d, dmin := f16At(b, 0), f16At(b, 2)
		q := b[16:144]
		y := dst[i*QK_K:]
		for j, is := 0, 0; j < QK_K; j, is = j+64, is+2 {
			sc, m := getScaleMinK4(is, b[4:16])
			d1, m1 := d*float32(sc), dmin*float32(m)
			sc, m = getScaleMinK4(is+1, b[4:16])
			d2, m2 := d*float32(sc), dmin*float32(m)
			for l := 0; l < 32; l++ {
				y[l] = float32(d1*float32(q[l]&0xF)) - m1
				y[l+32] = float32(d2*float32(q[l]>>4)) - m2
			}
			q, y = q[32:], y[64:]
		}
	}
}

// quantKScalesMins fits each 32-weight sub-block with make_qkx2_quants, then stores the
// 6-bit scales and mins and the fp16 d/dmin of a Q4_K/Q5_K block into b[0:16], and returns
// the final quants (0..nmax) recomputed from the stored scales, as quantize_row_q{4,5}_K_ref.
func quantKScalesMins(xb []float32, b []byte, nmax int, rmin, rdelta float32, nstep int, L *[QK_K]uint8) {
	var (
		Laux    [32]uint8
		weights [32]float32
		mins    [QK_K / 32]float32
		scales  [QK_K / 32]float32
	)
	var maxScale, maxMin float32
	for j := 0; j < QK_K/32; j++ {
		xs := xb[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:], Laux[:], rmin, rdelta, nstep, false)
		maxScale = max32(scales[j], maxScale)
		maxMin = max32(mins[j], maxMin)
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	s := b[4:16]
	for j := 0; j < QK_K/32; j++ {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		if j < 4 {
			s[j] = ls
			s[j+4] = lm
		} else {
			s[j+4] = ls&0xF | (lm&0xF)<<4
			s[j-4] |= (ls >> 4) << 6
			s[j] |= (lm >> 4) << 6
		}
	}
	putF16(b, 0, maxScale/63)
	putF16(b, 2, maxMin/63)
	for j := 0; j < QK_K/32; j++ {
		sc, m := getScaleMinK4(j, s)
		d := f16At(b, 0) * float32(sc)
		if d == 0 {
			continue
		}
		dm := f16At(b, 2) * float32(m)
		for ii := 0; ii < 32; ii++ {
			l := nearestInt((xb[32*j+ii] + dm) / d)
			L[32*j+ii] = uint8(max(0, min(nmax, l)))
		}
	}
}

func quantRefQ4_K(x []float32, dst []byte) {
	var L [QK_K]uint8
	for i := 0; i*QK_K < len(x); i++ {
		xb, b := x[i*QK_K:i*QK_K+QK_K], dst[i*144:i*144+144]
		quantKScalesMins(xb, b, 15, -1, 0.1, 20, &L)
		q := b[16:]
		for j := 0; j < QK_K; j += 64 {
			for l := 0; l < 32; l++ {
				q[l] = L[j+l] | L[j+l+32]<<4
			}
			q = q[32:]
		}
	}
}

// kScalesMins decodes the eight scales and mins of a Q4_K/Q5_K block.
func kScalesMins(s []byte) (sc, m [8]int32) {
	for j := 0; j < 8; j++ {
		a, b := getScaleMinK4(j, s)
		sc[j], m[j] = int32(a), int32(b)
	}
	return sc, m
}

// dotKLanes finishes a Q4_K/Q5_K block of the generic dot product: aux8 holds the 256
// unsigned quants; the min term is subtracted from sumf and the scaled lanes are added to sums.
func dotKLanes(x, y []byte, aux8 *[QK_K]int8, sums *[8]float32, sumf *float32) {
	scales, mins := kScalesMins(x[4:16])
	sumi := int32(0)
	for j := 0; j < QK_K/16; j++ {
		sumi += q8kBsum(y, j) * mins[j/2]
	}
	var aux32 [8]int32
	q8 := y[q8kQs:]
	for j := 0; j < QK_K/16; j++ {
		dot8Lanes(&aux32, scales[j/2], q8[16*j:], aux8[16*j:])
	}
	yd := f32At(y, 0)
	d := f16At(x, 0) * yd
	for l := range sums {
		sums[l] += float32(d * float32(aux32[l]))
	}
	dmin := f16At(x, 2) * yd
	*sumf -= float32(dmin * float32(sumi))
}

func dotQ4_K(w, a []byte, n int) float32 {
	var sums [8]float32
	var aux8 [QK_K]int8
	var sumf float32
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*144:], a[i*q8kSize:]
		q4 := x[16:144]
		for j := 0; j < QK_K/64; j++ {
			for l := 0; l < 32; l++ {
				aux8[64*j+l] = int8(q4[32*j+l] & 0xF)
				aux8[64*j+32+l] = int8(q4[32*j+l] >> 4)
			}
		}
		dotKLanes(x, y, &aux8, &sums, &sumf)
	}
	for _, s := range sums {
		sumf += s
	}
	return sumf
}

// --- Q5_K: d, dmin (fp16), scales[12], qh[32] (fifth bits), qs[128] -------------------------

func dequantQ5_K(src []byte, dst []float32) {
	for i := 0; i*QK_K < len(dst); i++ {
		b := src[i*176:]
		d, dmin := f16At(b, 0), f16At(b, 2)
		qh, ql := b[16:48], b[48:176]
		y := dst[i*QK_K:]
		u1, u2 := byte(1), byte(2)
		for j, is := 0, 0; j < QK_K; j, is = j+64, is+2 {
			sc, m := getScaleMinK4(is, b[4:16])
			d1, m1 := d*float32(sc), dmin*float32(m)
			sc, m = getScaleMinK4(is+1, b[4:16])
			d2, m2 := d*float32(sc), dmin*float32(m)
			for l := 0; l < 32; l++ {
				h1, h2 := 0, 0
				if qh[l]&u1 != 0 {
					h1 = 16
				}
				if qh[l]&u2 != 0 {
					h2 = 16
				}
				y[l] = float32(d1*float32(int(ql[l]&0xF)+h1)) - m1
				y[l+32] = float32(d2*float32(int(ql[l]>>4)+h2)) - m2
			}
			ql, y = ql[32:], y[64:]
			u1, u2 = u1<<2, u2<<2
		}
	}
}

func quantRefQ5_K(x []float32, dst []byte) {
	var L [QK_K]uint8
	for i := 0; i*QK_K < len(x); i++ {
		xb, b := x[i*QK_K:i*QK_K+QK_K], dst[i*176:i*176+176]
		quantKScalesMins(xb, b, 31, -0.5, 0.1, 15, &L)
		qh, ql := b[16:48], b[48:176]
		clear(qh)
		m1, m2 := byte(1), byte(2)
		for n := 0; n < QK_K; n += 64 {
			for j := 0; j < 32; j++ {
				l1, l2 := L[n+j], L[n+j+32]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				ql[j] = l1 | l2<<4
			}
			m1, m2 = m1<<2, m2<<2
			ql = ql[32:]
		}
	}
}

func dotQ5_K(w, a []byte, n int) float32 {
	var sums [8]float32
	var aux8 [QK_K]int8
	var sumf float32
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*176:], a[i*q8kSize:]
		hm, q4 := x[16:48], x[48:176]
		m := byte(1)
		for j := 0; j < QK_K/64; j++ {
			for l := 0; l < 32; l++ {
				v := int8(q4[32*j+l] & 0xF)
				if hm[l]&m != 0 {
					v += 16
				}
				aux8[64*j+l] = v
			}
			m <<= 1
			for l := 0; l < 32; l++ {
				v := int8(q4[32*j+l] >> 4)
				if hm[l]&m != 0 {
					v += 16
				}
				aux8[64*j+32+l] = v
			}
			m <<= 1
		}
		dotKLanes(x, y, &aux8, &sums, &sumf)
	}
	for _, s := range sums {
		sumf += s
	}
	return sumf
}

// --- Q6_K: ql[128] (low 4 bits), qh[64] (high 2 bits), scales[16] int8, d (fp16) -----------

// q6kUnpack writes the 256 signed 6-bit quants (−32..31) of a Q6_K block.
func q6kUnpack(b []byte, a *[QK_K]int8) {
	ql, qh := b[0:128], b[128:192]
	for j := 0; j < QK_K; j += 128 {
		for l := 0; l < 32; l++ {
			a[j+l] = int8(ql[l]&0xF|((qh[l]>>0)&3)<<4) - 32
			a[j+l+32] = int8(ql[l+32]&0xF|((qh[l]>>2)&3)<<4) - 32
			a[j+l+64] = int8(ql[l]>>4|((qh[l]>>4)&3)<<4) - 32
			a[j+l+96] = int8(ql[l+32]>>4|((qh[l]>>6)&3)<<4) - 32
		}
		ql, qh = ql[64:], qh[32:]
	}
}

func dequantQ6_K(src []byte, dst []float32) {
	var q [QK_K]int8
	for i := 0; i*QK_K < len(dst); i++ {
		b := src[i*210:]
		d := f16At(b, 208)
		sc := b[192:208]
		q6kUnpack(b, &q)
		y := dst[i*QK_K : i*QK_K+QK_K]
		// Element j of each 128-half uses scale 8·half + j/16 (ggml's is + 0/2/4/6 with is = l/16).
		for j := range y {
			s := float32(int8(sc[j/16]))
			y[j] = float32(d*s) * float32(q[j])
		}
	}
}

func quantRefQ6_K(x []float32, dst []byte) {
	var (
		L      [QK_K]int8
		scales [QK_K / 16]float32
	)
	for i := 0; i*QK_K < len(x); i++ {
		xb, b := x[i*QK_K:i*QK_K+QK_K], dst[i*210:i*210+210]
		var maxScale, maxAbsScale float32
		for ib := 0; ib < QK_K/16; ib++ {
			scale := makeQxQuants(32, xb[16*ib:16*ib+16], L[16*ib:], 1)
			scales[ib] = scale
			if as := abs32(scale); as > maxAbsScale {
				maxAbsScale, maxScale = as, scale
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(b)
			continue
		}
		iscale := -128 / maxScale
		putF16(b, 208, 1/iscale)
		sc := b[192:208]
		for ib := range sc {
			sc[ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
		}
		for j := 0; j < QK_K/16; j++ {
			d := f16At(b, 208) * float32(int8(sc[j]))
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(xb[16*j+ii] / d)
				L[16*j+ii] = int8(max(-32, min(31, l)) + 32)
			}
		}
		ql, qh := b[0:128], b[128:192]
		for j := 0; j < QK_K; j += 128 {
			for l := 0; l < 32; l++ {
				q1 := byte(L[j+l]) & 0xF
				q2 := byte(L[j+l+32]) & 0xF
				q3 := byte(L[j+l+64]) & 0xF
				q4 := byte(L[j+l+96]) & 0xF
				ql[l] = q1 | q3<<4
				ql[l+32] = q2 | q4<<4
				qh[l] = byte(L[j+l])>>4 | (byte(L[j+l+32])>>4)<<2 | (byte(L[j+l+64])>>4)<<4 | (byte(L[j+l+96])>>4)<<6
			}
			ql, qh = ql[64:], qh[32:]
		}
	}
}

func dotQ6_K(w, a []byte, n int) float32 {
	var sums [8]float32
	var aux8 [QK_K]int8
	for i := 0; i < n/QK_K; i++ {
		x, y := w[i*210:], a[i*q8kSize:]
		q6kUnpack(x, &aux8)
		var aux32 [8]int32
		q8 := y[q8kQs:]
		for j := 0; j < QK_K/16; j++ {
			dot8Lanes(&aux32, int32(int8(x[192+j])), q8[16*j:], aux8[16*j:])
		}
		d := f16At(x, 208) * f32At(y, 0)
		for l := range sums {
			sums[l] += float32(d * float32(aux32[l]))
		}
	}
	var sumf float32
	for _, s := range sums {
		sumf += s
	}
	return sumf
}

func init() {
	register(Q8_K, &format{dequant: dequantQ8_K, quant: quantRefQ8_K, act: quantRefQ8_K})
	register(Q2_K, &format{vecDot: Q8_K, dequant: dequantQ2_K, quant: quantRefQ2_K, dot: dotQ2_K})
	register(Q3_K, &format{vecDot: Q8_K, dequant: dequantQ3_K, quant: quantRefQ3_K, dot: dotQ3_K})
	register(Q4_K, &format{vecDot: Q8_K, dequant: dequantQ4_K, quant: quantRefQ4_K, dot: dotQ4_K})
	register(Q5_K, &format{vecDot: Q8_K, dequant: dequantQ5_K, quant: quantRefQ5_K, dot: dotQ5_K})
	register(Q6_K, &format{vecDot: Q8_K, dequant: dequantQ6_K, quant: quantRefQ6_K, dot: dotQ6_K})
}
