package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTileKernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, hd := range []int{8, 32, 64, 128} {
		q := make([]float32, hd)
		kt := make([]float32, hd*faTileKV)
		vf := make([]float32, faTileKV*hd)
		p := make([]float32, faTileKV)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		for i := range kt {
			kt[i], vf[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for i := range p {
			p[i] = float32(r.Float64())
		}
		a, b := make([]float32, faTileKV), make([]float32, faTileKV)
		tileScores(a, q, kt)
		tileScoresRef(b, q, kt)
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				t.Fatalf("hd=%d score %d: %v, reference %v", hd, j, a[j], b[j])
			}
		}
		for _, n := range []int{1, 17, faTileKV} {
			o1, o2 := make([]float32, hd), make([]float32, hd)
			for i := range o1 {
				o1[i] = float32(r.NormFloat64())
				o2[i] = o1[i]
			}
			tileAccum(o1, p, vf, n)
			tileAccumRef(o2, p, vf, n)
			for d := range o1 {
				if math.Float32bits(o1[d]) != math.Float32bits(o2[d]) {
					t.Fatalf("hd=%d n=%d out %d: %v, reference %v", hd, n, d, o1[d], o2[d])
				}
			}
		}
	}
}
