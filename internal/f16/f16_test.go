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

func TestRowsMatchSingleCalls(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, hd := range []int{8, 32, 64, 12} {
		for _, rows := range []int{1, 2, 7, 40} {
			stride := hd + 8*r.IntN(3)
			k := make([]uint16, rows*stride+hd)
			for i := range k {
				k[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
			}
			q := make([]uint16, hd)
			y1 := make([]uint16, hd)
			for i := range q {
				q[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
				y1[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
			}
			scores := make([]float32, rows)
			DotRows(scores, q, k, stride)
			ms, vs := make([]float32, rows), make([]float32, rows)
			for j := range ms {
				ms[j], vs[j] = 1, float32(r.Float64())
				if j%3 == 0 {
					ms[j] = float32(r.Float64())
				}
				if got, want := scores[j], dotRef(q, k[j*stride:j*stride+hd]); got != want {
					t.Fatalf("hd=%d row %d: score %v, want %v", hd, j, got, want)
				}
			}
			y2 := append([]uint16(nil), y1...)
			MadRows(y1, k, stride, ms, vs)
			for j := range ms {
				scaleRef(y2, ms[j])
				madFMARef(y2, k[j*stride:j*stride+hd], vs[j])
			}
			for i := range y1 {
				if y1[i] != y2[i] {
					t.Fatalf("hd=%d rows=%d: element %d is %#04x, want %#04x", hd, rows, i, y1[i], y2[i])
				}
			}
		}
	}
}
