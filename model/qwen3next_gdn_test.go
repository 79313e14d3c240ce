package model

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

// fmaf rounds once, like the hardware instruction: equal to the exact rounding on random
// operands over many magnitudes (subnormal results included), on cancellations, and on a
// constructed case where rounding through float64 (float32(math.FMA(…))) lands on a float32
// tie and misses.
func TestFMA32(t *testing.T) {
	// a·b = 2^-24 − 2^-70; c = 1 + 2^-23 (odd): the exact sum lies just below the tie
	// 1 + 3·2^-24, float64 rounds it onto the tie, ties-to-even then goes up.
	a := float32(math.Ldexp(1+0x1p-23, -12))
	b := float32(math.Ldexp(1-0x1p-23, -12))
	c := float32(1 + 0x1p-23)
	if got, want := fmaf(a, b, c), fma32Exact(a, b, c); got != want || want != c {
		t.Fatalf("fmaf tie case: %g, exact %g", got, want)
	}
	if dbl := float32(math.FMA(float64(a), float64(b), float64(c))); dbl == c {
		t.Fatal("the tie case does not separate single from double rounding")
	}
	r := rand.New(rand.NewPCG(1, 2))
	f := func() float32 {
		return float32(math.Ldexp(r.Float64()*2-1, r.IntN(200)-100))
	}
	for i := 0; i < 200000; i++ {
		a, b, c := f(), f(), f()
		if i%4 == 0 { // cancellation: c ≈ −a·b
			c = -float32(float64(a)*float64(b)) * (1 + float32(r.IntN(3)-1)*0x1p-23)
		}
		if got, want := fmaf(a, b, c), fma32Exact(a, b, c); got != want && !(got != got && want != want) {
			t.Fatalf("fmaf(%g, %g, %g) = %g, exact %g", a, b, c, got, want)
		}
	}
}

// The AVX-512 row kernels equal the Go references bit for bit: the updated row and the
// returned dot, for the head sizes qwen3next uses (64, 128) and others, with rows that
// contain the double-rounding tie case; sizes that are not a multiple of 64 take the
// reference's path and still sum in ggml_vec_dot_f32's order.
func TestGDNRowKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{64, 128, 256, 48, 80, 1} {
		for trial := 0; trial < 50; trial++ {
			row := make([]float32, n)
			k := make([]float32, n)
			q := make([]float32, n)
			for i := range row {
				row[i] = float32(r.NormFloat64())
				k[i] = float32(r.NormFloat64() / 8)
				q[i] = float32(r.NormFloat64() / 8)
			}
			eg := float32(r.Float64())
			d := float32(r.NormFloat64())
			if trial%5 == 0 { // the fma32 tie case in the update of element 0
				k[0], d, row[0] = float32(math.Ldexp(1+0x1p-23, -12)), float32(math.Ldexp(1-0x1p-23, -12)), float32(1+0x1p-23)
				eg = 1
			}
			a, b := append([]float32(nil), row...), append([]float32(nil), row...)
			ga, wa := gdnDecayDot(a, k, eg), gdnDecayDotRef(b, k, eg)
			if math.Float32bits(ga) != math.Float32bits(wa) {
				t.Fatalf("n %d: decay dot %g, reference %g", n, ga, wa)
			}
			gu, wu := gdnUpdateDot(a, k, q, d), gdnUpdateDotRef(b, k, q, d)
			if math.Float32bits(gu) != math.Float32bits(wu) {
				t.Fatalf("n %d: update dot %g, reference %g", n, gu, wu)
			}
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("n %d: row[%d] %g, reference %g", n, i, a[i], b[i])
				}
			}
			if trial%5 == 0 && a[0] != fma32Exact(k[0], d, float32(1+0x1p-23)*eg) {
				t.Fatalf("n %d: the tie case rounded twice", n)
			}
		}
	}
}

func BenchmarkGDNRow128(b *testing.B) {
	row, k, q := make([]float32, 128), make([]float32, 128), make([]float32, 128)
	for i := range row {
		row[i], k[i], q[i] = 0.01*float32(i%7), 0.02*float32(i%5), 0.03*float32(i%3)
	}
	for b.Loop() {
		d := gdnDecayDot(row, k, 0.99)
		gdnUpdateDot(row, k, q, 0.001*d)
	}
}

// siluRow (the Gated DeltaNet's SiLU of the convolved qkv and of z) is ggml_vec_silu_f32:
// vsilu on the 16-lane blocks, libm's silu on the rest, bit for bit, including inputs where
// the vector exponential overflows or flushes to zero.
func TestSiluRow(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{16, 64, 100, 4096, 8192} {
		x := make([]float32, n)
		for i := range x {
			switch i % 11 {
			case 0:
				x[i] = float32(r.Float64()*400 - 200) // beyond ±134: the vector code's edges
			case 1:
				x[i] = float32(math.Ldexp(r.Float64()-0.5, -r.IntN(140)))
			default:
				x[i] = float32(r.NormFloat64() * 4)
			}
		}
		y := make([]float32, n)
		siluRow(y, x)
		for i, v := range x {
			want := silu(v)
			if i < n&^(simdWidth-1) {
				want = vsilu(v)
			}
			if math.Float32bits(y[i]) != math.Float32bits(want) {
				t.Fatalf("n %d: silu(%g) = %g, want %g", n, v, y[i], want)
			}
		}
		siluRow(x, x) // in place
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				t.Fatalf("n %d: in place %g, want %g", n, x[i], y[i])
			}
		}
	}
}

// The convolution's AVX-512 row kernel equals the fused multiply-add chain of the reference
// bit for bit, at qwen3next's widths and taps and at widths the kernel leaves to the
// reference.
func TestConvTaps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, cd := range []int{16, 512, 8192, 24, 1} {
		for _, k := range []int{4, 2, 1} {
			in, w := make([]float32, k*cd), make([]float32, k*cd)
			for i := range in {
				in[i], w[i] = float32(r.NormFloat64()), float32(r.NormFloat64()/2)
			}
			in[0], w[0] = float32(math.Ldexp(1+0x1p-23, -12)), float32(math.Ldexp(1-0x1p-23, -12))
			got, want := make([]float32, cd), make([]float32, cd)
			convTaps(got, in, w, cd, k)
			convTapsRef(want, in, w, cd, k)
			for ch := range got {
				if math.Float32bits(got[ch]) != math.Float32bits(want[ch]) {
					t.Fatalf("cd %d k %d: channel %d %g, reference %g", cd, k, ch, got[ch], want[ch])
				}
			}
		}
	}
}
