package expert

import "github.com/regolith/regolith/model"

var _ model.Residency = (*Store)(nil)

// Resident returns the layer's residency as a bitset over expert ids (bit e%64 of word
// e/64), reusing dst, for cache-aware routing. Only demand loads (Acquire) change it, so it
// is a function of the requests so far and never of I/O timing.
func (s *Store) Resident(layer int, dst []uint64) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	where := s.where[layer]
	words := (len(where) + 63) / 64
	if cap(dst) < words {
		dst = make([]uint64, words)
	}
	dst = dst[:words]
	clear(dst)
	for e, slot := range where {
		if slot >= 0 {
			dst[e>>6] |= 1 << (uint(e) & 63)
		}
	}
	return dst
}
