package quant

import "math"

// FMA32 is a float32 fused multiply-add rounded once, as VFMADD231SS computes it: a·b is
// exact in float64, the sum is rounded to odd in float64 (TwoSum gives the error of the
// rounded sum; a nonzero error on an even result moves it one ulp toward the exact value),
// and rounding that to float32 is then the correctly rounded a·b+c (Boldo and Melquiond,
// "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd",
// 2008: 53 ≥ 24+2). float32(math.FMA(…)) rounds twice and misses by one ulp when the
// float64 result lands on a float32 tie. The plain-Go references of kernels that llama.cpp
// runs with FMA instructions use it.
func FMA32(a, b, c float32) float32 {
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
