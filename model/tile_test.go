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

// vexpf's shortcuts give the bits of its general path (which uses math.Ldexp).
func TestVexpfShortcuts(t *testing.T) {
	slow := func(x float32) float32 {
		const r = 0x1.8p23
		z := fmaf(x, 0x1.715476p+0, r)
		n := z - r
		b := fmaf(-n, 0x1.7f7d1cp-20, fmaf(-n, 0x1.62e4p-1, x))
		u := b * b
		j := fmaf(fmaf(fmaf(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fmaf(0x1.555e66p-3, b, 0x1.fffdb6p-2)),
			u, fmaf(0x1.ffffecp-1, b, 1))
		if abs32(n) > 192 {
			if n <= 0 {
				return 0
			}
			return float32(math.Inf(1))
		}
		return float32(math.Ldexp(float64(j), int(n)))
	}
	for bits := uint32(0); bits < 1<<32-1000003; bits += 1000003 {
		x := math.Float32frombits(bits)
		if x != x {
			continue
		}
		if a, b := vexpf(x), slow(x); math.Float32bits(a) != math.Float32bits(b) {
			t.Fatalf("vexpf(%v) = %v, general path %v", x, a, b)
		}
	}
}

// The 8-lane exponential gives vexpf's bits everywhere, its fallback lanes included.
func TestVexpRowMatchesScalar(t *testing.T) {
	src := make([]float32, 0, 1<<20)
	for bits := uint32(0); bits < 1<<32-70001; bits += 70001 {
		src = append(src, math.Float32frombits(bits))
	}
	src = append(src, float32(math.Inf(-1)), float32(math.Inf(1)), -134, -133.9, -87.5, 88.7, 0, -0.0)
	dst := make([]float32, len(src))
	vexpRow(dst, src)
	inPlace := append([]float32(nil), src...) // as softmaxTile calls it
	vexpRow(inPlace, inPlace)
	for i, x := range src {
		want := vexpf(x)
		if math.Float32bits(dst[i]) != math.Float32bits(want) && !(x != x && dst[i] != dst[i]) {
			t.Fatalf("vexp(%v) = %v, scalar %v", x, dst[i], want)
		}
		if math.Float32bits(inPlace[i]) != math.Float32bits(want) && !(x != x && inPlace[i] != inPlace[i]) {
			t.Fatalf("in place: vexp(%v) = %v, scalar %v", x, inPlace[i], want)
		}
	}
}

// scaleMaskMax and the vector softmax loop give the plain-Go bits: scores, masks, maxima,
// exponentials and the float64 sum, also when some lanes need vexpf's scalar fallback.
func TestSoftmaxTileKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 200; trial++ {
		kq := make([]float32, faTileKV)
		for i := range kq {
			kq[i] = float32(r.NormFloat64() * 8)
		}
		if trial%4 == 3 { // lanes whose exponentials are subnormal: the scalar fallback
			kq[r.IntN(faTileKV)] = -95 / 0.125
		}
		valid := []int{0, 1, 7, 8, 33, faTileKV, faTileKV + 5}[trial%7]
		a, b := append([]float32(nil), kq...), append([]float32(nil), kq...)
		ma, mb := scaleMaskMax(a, 0.125, valid), scaleMaskMaxRef(b, 0.125, valid)
		if math.Float32bits(ma) != math.Float32bits(mb) {
			t.Fatalf("trial %d valid %d: max %v, reference %v", trial, valid, ma, mb)
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("trial %d valid %d: score %d = %v, reference %v", trial, valid, i, a[i], b[i])
			}
		}
		if valid == 0 {
			continue
		}
		sa := softmaxTile(a, ma)
		var sb float64 // softmaxTile's plain-Go loop
		var lanes [simdWidth]float32
		for i := 0; i < len(b); i += simdWidth {
			for l := range lanes {
				lanes[l] = b[i+l] - mb
			}
			for l, x := range lanes {
				lanes[l] = vexpf(x)
			}
			copy(b[i:], lanes[:])
			sb += float64(reduceLanes(&lanes))
		}
		if math.Float64bits(sa) != math.Float64bits(sb) {
			t.Fatalf("trial %d: sum %v, reference %v", trial, sa, sb)
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("trial %d: exp %d = %v, reference %v", trial, i, a[i], b[i])
			}
		}
	}
}
