package model

import "fmt"

// ExpertWeights are one routed expert's three matrices.
type ExpertWeights struct {
	Gate, Up, Down Weight
}

// ExpertSource supplies routed experts' weights. The model asks for every expert a layer's
// chunk needs at once; the views stay valid until Release(layer). The resident source
// views the memory map; the expert store streams them through an arena.
type ExpertSource interface {
	Acquire(layer int, experts []int32) ([]ExpertWeights, error)
	Release(layer int)
}

// ChunkSizer is optionally implemented by an ExpertSource: Forward tells it each chunk's
// token count before the chunk's first Acquire (the expert store splits its statistics
// between prefill and decode with it).
type ChunkSizer interface {
	BeginChunk(tokens int)
}

// RouteObserver sees every routing decision: router logits (NExpert floats, valid only
// during the call), the chosen experts in rank order and their normalized weights.
type RouteObserver interface {
	Routed(layer, pos int, logits []float32, chosen []int32, weights []float32)
}

// Resident is the ExpertSource over the model's memory-mapped tensors.
type Resident struct {
	m   *Model
	buf []ExpertWeights // reused: the views are valid until the next Acquire
}

// NewResident returns the source that reads experts straight from the memory map.
func NewResident(m *Model) *Resident { return &Resident{m: m} }

func (r *Resident) Acquire(layer int, experts []int32) ([]ExpertWeights, error) {
	L := &r.m.Layers[layer]
	if cap(r.buf) < len(experts) {
		r.buf = make([]ExpertWeights, len(experts))
	}
	out := r.buf[:len(experts)]
	for i, e := range experts {
		if e < 0 || int(e) >= L.Gate.N {
			return nil, fmt.Errorf("model: layer %d has no expert %d", layer, e)
		}
		out[i] = ExpertWeights{L.Gate.Expert(int(e)), L.Up.Expert(int(e)), L.Down.Expert(int(e))}
	}
	return out, nil
}

func (r *Resident) Release(int) {}

// topK writes the indices of the k largest values of p into idx, in descending order,
// ties going to the lowest index.
func topK(p []float32, idx []int32) {
	k := len(idx)
	n := 0
	for i, v := range p {
		if n < k {
			n++
		} else if v <= p[idx[k-1]] {
			continue
		}
		j := n - 1
		for j > 0 && v > p[idx[j-1]] {
			idx[j] = idx[j-1]
			j--
		}
		idx[j] = int32(i)
	}
}
