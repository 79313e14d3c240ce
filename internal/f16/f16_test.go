package f16

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/regolith/regolith/quant"
)

// randHalves draws halves over the whole finite range, with zeros and subnormals mixed in.
func randHalves(r *rand.Rand, n int) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		switch r.IntN(8) {
		case 0:
			h[i] = uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15 // subnormal or zero
		case 1:
			h[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
		default:
			h[i] = uint16(r.IntN(0x7c00)) | uint16(r.IntN(2))<<15
		}
	}
	return h
}

func TestKernelsMatchReference(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2/F16C/FMA: the reference is the only path")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 80; n++ {
		for trial := 0; trial < 50; trial++ {
			x, y := randHalves(r, n), randHalves(r, n)
			v := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(20)-10)))
			for _, k := range []struct {
				name      string
				fast, ref func(y, x []uint16, v float32)
			}{{"Mad", Mad, madRef}, {"MadFMA", MadFMA, madFMARef}} {
				a, b := append([]uint16(nil), y...), append([]uint16(nil), y...)
				k.fast(a, x, v)
				k.ref(b, x, v)
				for i := range a {
					if a[i] != b[i] {
						t.Fatalf("%s n=%d: element %d is %#04x, reference %#04x", k.name, n, i, a[i], b[i])
					}
				}
			}
			a, b := append([]uint16(nil), y...), append([]uint16(nil), y...)
			Scale(a, v)
			scaleRef(b, v)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("Scale n=%d: element %d is %#04x, reference %#04x", n, i, a[i], b[i])
				}
			}
			f := make([]float32, n)
			for i := range f {
				f[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
			}
			h := make([]uint16, n)
			ToF16(h, f)
			back := make([]float32, n)
			ToF32(back, h)
			for i := range f {
				if h[i] != quant.FP32ToFP16(f[i]) || back[i] != quant.FP16ToFP32(h[i]) {
					t.Fatalf("conversion n=%d element %d: %v -> %#04x -> %v", n, i, f[i], h[i], back[i])
				}
			}
			// Dot of vectors of moderate range: the float64 sums are exact, so the bits agree.
			da, db := make([]uint16, n), make([]uint16, n)
			for i := range db {
				da[i] = quant.FP32ToFP16(float32(r.NormFloat64() * 8))
				db[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
			}
			if got, want := Dot(da, db), dotRef(da, db); got != want {
				t.Fatalf("Dot n=%d: %v, reference %v", n, got, want)
			}
		}
	}
}

func BenchmarkMad64(b *testing.B) {
	x, y := make([]uint16, 64), make([]uint16, 64)
	for i := 0; i < b.N; i++ {
		Mad(y, x, 0.5)
	}
}
