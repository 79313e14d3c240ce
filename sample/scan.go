package sample

import (
	"math"
	"unsafe"
)

// Fast rejection for the vocabulary scans (top-k, greedy, top logprobs).
//
// A scan keeps a threshold thr and wants to visit only elements v with
// v >= thr. Comparing IEEE-754 bit patterns as integers lets a 16-element
// chunk be rejected with branch-free integer max/min:
//
//   - thr > 0: for non-NaN v, v >= thr ⇔ int32(bits(v)) >= int32(bits(thr))
//     (negative floats have negative int32 patterns);
//   - thr <= 0 (0 normalized to -0): v >= thr ⇔ uint32(bits(v)) <=
//     uint32(bits(thr)) (non-negative floats have patterns below 1<<31,
//     negative ones grow with magnitude).
//
// NaNs land on either side; those that are let through are rejected by the
// exact float comparison in the per-element slow path, so the filter is
// conservative: it never rejects a chunk holding an element >= thr.

const chunk = 16

type gate struct {
	pos bool
	i   int32
	u   uint32
}

func newGate(thr float32) gate {
	if thr == 0 {
		thr = float32(math.Copysign(0, -1))
	}
	b := math.Float32bits(thr)
	return gate{pos: thr > 0, i: int32(b), u: b}
}

// advance returns the start of the first chunk at or after i that may
// hold an element >= thr, or the first index of the final partial chunk
// (fewer than 16 elements left), which the caller checks element by element.
func (g *gate) advance(b []uint32, i int) int {
	n := len(b)
	if g.pos {
		t := g.i
		for ; i+chunk <= n; i += chunk {
			c := (*[chunk]uint32)(b[i : i+chunk])
			m := max(int32(c[0]), int32(c[1]), int32(c[2]), int32(c[3]),
				int32(c[4]), int32(c[5]), int32(c[6]), int32(c[7]),
				int32(c[8]), int32(c[9]), int32(c[10]), int32(c[11]),
				int32(c[12]), int32(c[13]), int32(c[14]), int32(c[15]))
			if m >= t {
				return i
			}
		}
		return i
	}
	t := g.u
	for ; i+chunk <= n; i += chunk {
		c := (*[chunk]uint32)(b[i : i+chunk])
		m := min(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
			c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15])
		if m <= t {
			return i
		}
	}
	return i
}

// bitsOf views logits as their bit patterns (no copy).
func bitsOf(l []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(l))), len(l))
}
