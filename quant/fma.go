package quant

import "math"

// FMA32 is a float32 fused multiply-add rounded once, as VFMADD231SS computes it.
// float32(math.FMA(…)) rounds twice and misses by one ulp when the float64 result lands on
// a float32 tie; FMA32 takes that result when it is not such a midpoint (then both
// roundings agree: the float32 rounding boundaries are float64 numbers) and otherwise
// rounds to odd in float64 first (TwoSum gives the error of the rounded sum; a nonzero
// error on an even result moves it one ulp toward the exact value), which makes the
// float32 rounding correct (Boldo and Melquiond, "Emulation of FMA and correctly rounded
// sums: proved algorithms using rounding to odd", 2008: 53 ≥ 24+2).
func FMA32(a, b, c float32) float32 {
	s := math.FMA(float64(a), float64(b), float64(c))
	if u := math.Float64bits(s); u&(1<<29-1) != 1<<28 && math.Abs(s) >= 0x1p-126 {
		return float32(s) // not a float32 midpoint, and float32's grid is the normal one
	}
	return fma32Odd(a, b, c)
}

// fma32Odd is FMA32's general path.
func fma32Odd(a, b, c float32) float32 {
	p, cc := float64(a)*float64(b), float64(c)
	s := p + cc
	bb := s - p
	e := (p - (s - bb)) + (cc - bb)
	if e != 0 && !math.IsInf(s, 0) && !math.IsNaN(e) {
		u := math.Float64bits(s)
		if u&1 == 0 {
			if (e > 0) == (s > 0) {
				u++
			} else {
				u--
			}
			s = math.Float64frombits(u)
		}
	}
	return float32(s)
}
