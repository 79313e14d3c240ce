package model

import "math"

// sinf and cosf are libm's sinf/cosf as glibc computes them on x86-64 with FMA (the
// fixtures' llama.cpp takes its RoPE angles' cos/sin from them, ggml_rope_cache_init): a
// range reduction to |r| ≤ π/4 with the quadrant n (one fused multiply-subtract below 120,
// a 4/π table above), then a polynomial in float64 with fused multiply-adds, rounded once
// to float32. glibc does not always round correctly (about 1 angle in 50 of a RoPE table
// differs from math.Cos by one ulp), so a correctly rounded cos/sin moves the rotated
// queries and keys, and with them the logits of long prompts.

type sincosPoly struct {
	c0, c1, c2, c3, c4 float64 // cosine polynomial
	s1, s2, s3         float64 // sine polynomial
}

// sincosTab[1] computes −cos, to negate for free in quadrants 2 and 3.
var sincosTab = [2]sincosPoly{
	{1, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
	{-1, 0x1.ffffffd0c621cp-2, -0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
}

var sincosSign = [4]float64{1, -1, -1, 1}

// invPio4 is 4/π to 192 bits, 8 new bits per entry.
var invPio4 = [24]uint32{
	0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e,
	0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
	0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1,
	0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
	0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599,
	0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
}

func abstop12(x float32) uint32 { return math.Float32bits(x) >> 20 & 0x7ff }

// sinfPoly is glibc's sinf_poly: sine polynomial for even n, cosine for odd.
func sinfPoly(x, x2 float64, p *sincosPoly, n int) float32 {
	if n&1 == 0 {
		x3 := x * x2
		s1 := math.FMA(x2, p.s3, p.s2)
		x7 := x3 * x2
		s := math.FMA(x3, p.s1, x)
		return float32(math.FMA(x7, s1, s))
	}
	x4 := x2 * x2
	c2 := math.FMA(x2, p.c4, p.c3)
	c1 := math.FMA(x2, p.c1, p.c0)
	x6 := x4 * x2
	c := math.FMA(x4, p.c2, c1)
	return float32(math.FMA(x6, c2, c))
}

// reduce returns y reduced to [−π/4, π/4] and its quadrant, for |y| ≥ π/4 (finite).
func reduce(y float32) (float64, int) {
	if abstop12(y) < abstop12(120) { // reduce_fast, hpi_inv prescaled by 2^24
		x := float64(y)
		r := x * 0x1.45F306DC9C883p+23
		n := (int32(r) + 0x800000) >> 24
		return math.FMA(-float64(n), 0x1.921FB54442D18p0, x), int(n)
	}
	// reduce_large: a 32×96 → 128-bit product with 4/π gives the 2.62 fixed-point modulo.
	xi := math.Float32bits(y)
	arr := invPio4[(xi>>26)&15:]
	shift := (xi >> 23) & 7
	xi = (xi&0xffffff | 0x800000) << shift
	res0 := uint64(xi * arr[0])
	res1 := uint64(xi) * uint64(arr[4])
	res2 := uint64(xi) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	n := (res0 + 1<<61) >> 62
	res0 -= n << 62
	return float64(int64(res0)) * 0x1.921FB54442D18p-62, int(n)
}

func sinf(y float32) float32 {
	p := &sincosTab[0]
	switch {
	case abstop12(y) < abstop12(0x1.921FB6p-1): // π/4
		if abstop12(y) < abstop12(0x1p-12) {
			return y
		}
		x := float64(y)
		return sinfPoly(x, x*x, p, 0)
	case abstop12(y) >= abstop12(float32(math.Inf(1))):
		return float32(math.NaN())
	}
	x, n := reduce(y)
	q := n // the large reduction ignores the sign: it goes into the quadrant of the signs
	if abstop12(y) >= abstop12(120) {
		q += int(math.Float32bits(y) >> 31)
	}
	s := sincosSign[q&3]
	if q&2 != 0 {
		p = &sincosTab[1]
	}
	return sinfPoly(x*s, x*x, p, n)
}

func cosf(y float32) float32 {
	p := &sincosTab[0]
	switch {
	case abstop12(y) < abstop12(0x1.921FB6p-1):
		if abstop12(y) < abstop12(0x1p-12) {
			return 1
		}
		x := float64(y)
		return sinfPoly(x, x*x, p, 1)
	case abstop12(y) >= abstop12(float32(math.Inf(1))):
		return float32(math.NaN())
	}
	x, n := reduce(y)
	q := n
	if abstop12(y) >= abstop12(120) {
		q += int(math.Float32bits(y) >> 31)
	}
	s := sincosSign[q&3]
	if q&2 != 0 {
		p = &sincosTab[1]
	}
	return sinfPoly(x*s, x*x, p, n^1)
}
