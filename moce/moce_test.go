package moce

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func bits(ids ...int) []uint64 {
	b := make([]uint64, 2)
	for _, i := range ids {
		b[i/64] |= 1 << (i % 64)
	}
	return b
}

func TestSelectHand(t *testing.T) {
	// Candidates sorted by logit: 5 (4.0), 2 (3.0), 9 (2.5), 1 (2.0), 7 (1.0), 3 (0.0). Δ = 4.
	ids := []int32{5, 2, 9, 1, 7, 3}
	z := []float32{4, 3, 2.5, 2, 1, 0}
	cases := []struct {
		name       string
		res        []uint64
		k, protect int
		lambda     float32
		want       []int32
	}{
		{"lambda 0 is top-k", bits(7, 3), 3, 1, 0, []int32{5, 2, 9}},
		{"protect k is top-k", bits(7, 3), 3, 3, 1, []int32{5, 2, 9}},
		// bonus 0.25·4 = 1: 7 → 2.0 ties 1 (2.0) and 9 (2.5) stays ahead; 2 (3.0) first.
		{"bonus ties go to lowest id", bits(7), 3, 1, 0.25, []int32{5, 2, 9}},
		{"bonus ties lowest id 2", bits(7), 4, 1, 0.25, []int32{5, 2, 9, 1}},
		// bonus 0.5·4 = 2: 7 → 3.0 ties 2 (3.0): id 2 wins, then 7 (3.0) over 9 (2.5).
		{"resident promoted", bits(7), 3, 1, 0.5, []int32{5, 2, 7}},
		// protect 2 keeps 5 and 2 even when not resident; 3 (0+2=2) ties 1 (2.0): 1 wins.
		{"protected stay", bits(3, 7), 4, 2, 0.5, []int32{5, 2, 7, 9}},
		{"all resident keeps order", bits(5, 2, 9, 1, 7, 3), 3, 0, 1, []int32{5, 2, 9}},
		{"k above candidates", bits(), 9, 1, 1, []int32{5, 2, 9, 1, 7, 3}},
		{"id past bitset is not resident", []uint64{}, 2, 0, 1, []int32{5, 2}},
	}
	for _, c := range cases {
		got := Select(nil, ids, z, c.res, c.k, c.protect, c.lambda)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// brute is the definition: protect top by z, then the best of z + λΔ·resident, ties lowest id.
func brute(ids []int32, z []float32, res []uint64, k, protect int, lambda float32) []int32 {
	n := len(ids)
	k = min(k, n)
	protect = min(protect, k)
	out := slices.Clone(ids[:protect])
	d := z[0] - z[n-1]
	type c struct {
		id int32
		v  float32
	}
	var rest []c
	for i := protect; i < n; i++ {
		v := z[i]
		if res[ids[i]/64]>>(ids[i]%64)&1 != 0 {
			v += lambda * d
		}
		rest = append(rest, c{ids[i], v})
	}
	sort.Slice(rest, func(a, b int) bool {
		if rest[a].v != rest[b].v {
			return rest[a].v > rest[b].v
		}
		return rest[a].id < rest[b].id
	})
	for i := 0; i < k-protect; i++ {
		out = append(out, rest[i].id)
	}
	return out
}

func TestSelectMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 20000; it++ {
		n := 1 + r.IntN(40)
		perm := r.Perm(128)[:n]
		ids := make([]int32, n)
		z := make([]float32, n)
		for i := range ids {
			ids[i] = int32(perm[i])
			z[i] = float32(r.IntN(16)) / 4 // many ties, exact sums
		}
		// Sort by z descending, ties by id.
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool {
			if z[idx[a]] != z[idx[b]] {
				return z[idx[a]] > z[idx[b]]
			}
			return ids[idx[a]] < ids[idx[b]]
		})
		sid, sz := make([]int32, n), make([]float32, n)
		for i, j := range idx {
			sid[i], sz[i] = ids[j], z[j]
		}
		res := []uint64{r.Uint64(), r.Uint64()}
		k, protect := 1+r.IntN(10), r.IntN(5)
		lambda := float32(r.IntN(5)) / 8
		got := Select(make([]int32, 0, 16), sid, sz, res, k, protect, lambda)
		want := brute(sid, sz, res, k, protect, lambda)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d k=%d protect=%d λ=%v: got %v, want %v (ids %v z %v)", n, k, protect, lambda, got, want, sid, sz)
		}
		if lambda == 0 && !slices.Equal(got, sid[:min(k, n)]) {
			t.Fatalf("λ=0 is not the top-k")
		}
	}
}

func TestSelectNoAlloc(t *testing.T) {
	ids := []uint16{3, 1, 2, 0}
	z := []float32{3, 2, 1, 0}
	res := []uint64{1}
	dst := make([]uint16, 0, 8)
	if a := testing.AllocsPerRun(100, func() { Select(dst, ids, z, res, 3, 1, 0.5) }); a != 0 {
		t.Fatalf("%v allocations", a)
	}
	if got := Select(dst, ids, z, res, 3, 1, 0.5); !slices.Equal(got, []uint16{3, 1, 0}) {
		t.Fatalf("got %v", got)
	}
}
