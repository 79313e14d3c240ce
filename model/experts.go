package model

import "slices"

// expertGroups is the plan of one layer's chunk: the experts it needs, in ascending id,
// and for each the (token·k + slot) entries routed to it.
type expertGroups struct {
	ids         []int32
	members     [][]int32
	byID        []int32 // expert id → index in ids, or -1
	xg, g, u, y []float32
	slotOut     []float32 // [T × K × D] each slot's weighted expert output
}

func (p *expertGroups) plan(chosen []int32, nExpert int) {
	if len(p.byID) != nExpert {
		p.byID = make([]int32, nExpert)
	}
	for i := range p.byID {
		p.byID[i] = -1
	}
	p.ids = p.ids[:0]
	for _, e := range chosen {
		if p.byID[e] < 0 {
			p.byID[e] = 0
			p.ids = append(p.ids, e)
		}
	}
	slices.Sort(p.ids)
	for len(p.members) < len(p.ids) {
		p.members = append(p.members, nil)
	}
	for i, e := range p.ids {
		p.byID[e] = int32(i)
		p.members[i] = p.members[i][:0]
	}
	for j, e := range chosen {
		g := p.byID[e]
		p.members[g] = append(p.members[g], int32(j))
	}
}

// ExpertObserver is optionally implemented by the session's RouteObserver: it then sees
// every routed expert's output for every token routed to it (layer, expert id, the token's
// index in the chunk, its normalized router weight, and the expert's unweighted output of
// NEmbd floats, valid only during the call). Pruning's saliency (REAP) is computed from it.
type ExpertObserver interface {
	ExpertOutput(layer, expert, token int, weight float32, out []float32)
}

// runExperts computes every routed expert once over all the tokens routed to it, then
// sums each token's weighted expert outputs in rank order, as llama.cpp adds them.
func (s *Session) runExperts(l, T int) error {
	c := s.m.Cfg
	D, F, K := c.NEmbd, c.NFFExp, c.NExpertUsed
	p := &s.eg
	p.plan(s.chosen[:T*K], c.NExpert)
	ws, err := s.experts.Acquire(l, p.ids)
	if err != nil {
		return err
	}
	defer s.experts.Release(l)
	p.slotOut = grow(p.slotOut, T*K*D)
	for gi := range p.ids {
		mem := p.members[gi]
		n := len(mem)
		p.xg, p.g, p.u, p.y = grow(p.xg, n*D), grow(p.g, n*F), grow(p.u, n*F), grow(p.y, n*D)
		for i, j := range mem {
			t := int(j) / K
			copy(p.xg[i*D:(i+1)*D], s.h[t*D:(t+1)*D])
		}
		w := &ws[gi]
		if err = s.matmul(&w.Gate, p.xg, n, false, p.g); err != nil {
			return err
		}
		if err = s.matmul(&w.Up, p.xg, n, false, p.u); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			swiglu(p.g[i*F:(i+1)*F], p.g[i*F:(i+1)*F], p.u[i*F:(i+1)*F])
		}
		if err = s.matmul(&w.Down, p.g, n, false, p.y); err != nil {
			return err
		}
		if eo, ok := s.observer.(ExpertObserver); ok {
			for i, j := range mem {
				eo.ExpertOutput(l, int(p.ids[gi]), int(j)/K, s.weights[j], p.y[i*D:(i+1)*D])
			}
		}
		for i, j := range mem {
			wt := s.weights[j]
			dst := p.slotOut[int(j)*D : (int(j)+1)*D]
			for d, v := range p.y[i*D : (i+1)*D] {
				dst[d] = v * wt
			}
		}
	}
	for t := 0; t < T; t++ {
		out := s.moe[t*D : (t+1)*D]
		copy(out, p.slotOut[t*K*D:(t*K+1)*D])
		for k := 1; k < K; k++ {
			src := p.slotOut[(t*K+k)*D : (t*K+k+1)*D]
			for d := range out {
				out[d] += src[d]
			}
		}
	}
	return nil
}
