package quant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32Exact rounds the exact a·b+c to float32 (nearest, ties to even) with big floats.
func fma32Exact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(2000).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(2000).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(2000).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// FMA32 rounds once, like the hardware instruction: equal to the exact rounding on random
// operands over many magnitudes (subnormal results included), on cancellations, on exact
// midpoints, and on a constructed case where float32(math.FMA(…)) rounds twice to a
// different value.
func TestFMA32(t *testing.T) {
	// a·b = 2^-24 − 2^-70; c = 1 + 2^-23 (odd): the exact sum lies just below the tie
	// 1 + 3·2^-24, float64 rounds it onto the tie, ties-to-even then goes up.
	a := float32(math.Ldexp(1+0x1p-23, -12))
	b := float32(math.Ldexp(1-0x1p-23, -12))
	c := float32(1 + 0x1p-23)
	if got, want := FMA32(a, b, c), fma32Exact(a, b, c); got != want || want != c {
		t.Fatalf("FMA32 tie case: %g, exact %g", got, want)
	}
	if dbl := float32(math.FMA(float64(a), float64(b), float64(c))); dbl == c {
		t.Fatal("the tie case does not separate single from double rounding")
	}
	r := rand.New(rand.NewPCG(1, 2))
	f := func() float32 {
		if r.IntN(50) == 0 { // near and below float32's smallest normal
			return float32(math.Ldexp(r.Float64()*2-1, r.IntN(30)-140))
		}
		return float32(math.Ldexp(r.Float64()*2-1, r.IntN(60)-30))
	}
	for i := 0; i < 200000; i++ {
		a, b, c := f(), f(), f()
		switch i % 8 {
		case 0: // cancellation: c ≈ −a·b
			c = -float32(float64(a)*float64(b)) * (1 + float32(r.IntN(3)-1)*0x1p-23)
		case 1: // exact float32 midpoints: a·b + c = c + half an ulp of c (or a quarter, three quarters)
			c = float32(math.Ldexp(1+float64(r.IntN(1<<23))*0x1p-23, r.IntN(40)-20))
			a = float32(math.Ldexp(float64(1+2*r.IntN(3)), -2)) // 1/4, 3/4, 5/4
			b = float32(math.Ldexp(1, math.Ilogb(float64(c))-23))
		}
		if got, want := FMA32(a, b, c), fma32Exact(a, b, c); got != want && !(got != got && want != want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g, exact %g", a, b, c, got, want)
		}
	}
}

func BenchmarkFMA32(b *testing.B) {
	x := make([]float32, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	var s float32
	for b.Loop() {
		for i := 0; i+2 < len(x); i++ {
			s = FMA32(x[i], x[i+1], s*0.5)
		}
	}
	sink = s
}

var sink float32
