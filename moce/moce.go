// Package moce is cache-aware routing: the Cache-Prior form of MoCE (arXiv 2412.00099), as
// DESIGN §4 states it. The engine's router and the trace replayer (package trace) call the
// same function, so a replay's closed-loop routing is the engine's routing.
//
// Exactness class: lossy for lambda > 0 (it changes which experts the model uses); lambda = 0
// chooses the plain top-k of the logits (ties: lowest id), the exact model's choice.
package moce

// Select chooses k experts for one token of one layer and appends them to dst in rank
// order: first the protect candidates with the largest logits, then the k − protect
// largest of z_i + lambda·Δ·resident(i) among the rest, ties going to the lowest expert id.
//
// ids and z are the router's candidates and their logits, sorted by logit descending with
// ties by ascending id (the order a trace stores; the engine sorts all n experts). Δ is
// max z − min z over the candidates given, so with only the top-N of n experts the bonus is
// computed over the top-N's spread (smaller than or equal to the full spread: replaying a
// top-N trace is exact when N = n). resident is a bitset over expert ids (bit i%64 of word
// i/64); an id past its end is not resident. If fewer than k candidates are given, all of
// them are chosen. lambda = 0 or protect >= k gives the plain top-k.
//
// Select allocates nothing when dst has room for k more ids.
func Select[ID ~int32 | ~uint16 | ~uint8](dst []ID, ids []ID, z []float32, resident []uint64, k, protect int, lambda float32) []ID {
	n := min(len(ids), len(z))
	if k > n {
		k = n
	}
	if k <= 0 {
		return dst
	}
	protect = max(0, min(protect, k))
	if lambda == 0 || protect == k {
		return append(dst, ids[:k]...)
	}
	dst = append(dst, ids[:protect]...)
	bonus := lambda * (z[0] - z[n-1])
	isRes := func(id ID) bool {
		w := int(id) >> 6
		return w < len(resident) && resident[w]>>(uint(id)&63)&1 != 0
	}
	// The rest, ranked by z + bonus·resident, is the merge of two lists each already in
	// that order: the resident candidates (all shifted by the same bonus) and the others.
	r, o := protect, protect // next resident / other candidate
	next := func(i int, res bool) int {
		for i < n && isRes(ids[i]) != res {
			i++
		}
		return i
	}
	r, o = next(r, true), next(o, false)
	for need := k - protect; need > 0; need-- {
		var take int
		switch {
		case r >= n:
			take = o
		case o >= n:
			take = r
		default:
			vr, vo := z[r]+bonus, z[o]
			if vr > vo || (vr == vo && ids[r] < ids[o]) {
				take = r
			} else {
				take = o
			}
		}
		dst = append(dst, ids[take])
		if take == r {
			r = next(r+1, true)
		} else {
			o = next(o+1, false)
		}
	}
	return dst
}
