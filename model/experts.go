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

	// Decode runs whole experts on different workers (one parallel loop per layer instead
	// of three per expert); each worker has its own buffers.
	workers []*expertWorker
	run     func(lo, hi int) // bound once
	s       *Session
	ws      []ExpertWeights
	T       int
}

type expertWorker struct {
	xg, g, u, y []float32
	act         []byte
	mm          mmJob
	err         error
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
	if _, observed := s.observer.(ExpertObserver); T == 1 && len(p.ids) > 1 && s.pool.Threads() > 1 && !observed {
		if err := p.parallel(s, ws, T); err != nil {
			return err
		}
		p.sumSlots(s, T)
		return nil
	}
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
		if err = s.matmulAct(&w.Up, p.xg, n, false, p.u, sameActs(&w.Gate, &w.Up)); err != nil {
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
	p.sumSlots(s, T)
	return nil
}

// sumSlots adds each token's weighted expert outputs in rank order, as llama.cpp does.
func (p *expertGroups) sumSlots(s *Session, T int) {
	c := s.m.Cfg
	D, K := c.NEmbd, c.NExpertUsed
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
}

// parallel runs the chunk's experts, whole experts per worker (round-robin by group).
func (p *expertGroups) parallel(s *Session, ws []ExpertWeights, T int) error {
	for len(p.workers) < s.pool.Threads() {
		p.workers = append(p.workers, &expertWorker{})
	}
	if p.run == nil {
		p.run = p.work
	}
	p.s, p.ws, p.T = s, ws, T
	s.pool.For(len(p.workers), 1, p.run)
	p.s, p.ws = nil, nil
	for _, w := range p.workers {
		if w.err != nil {
			err := w.err
			w.err = nil
			return err
		}
	}
	return nil
}

func (p *expertGroups) work(lo, hi int) {
	s := p.s
	c := s.m.Cfg
	D, F, K := c.NEmbd, c.NFFExp, c.NExpertUsed
	nw := len(p.workers)
	for wi := lo; wi < hi; wi++ {
		w := p.workers[wi]
		for gi := wi; gi < len(p.ids); gi += nw {
			mem := p.members[gi]
			n := len(mem)
			w.xg, w.g, w.u, w.y = grow(w.xg, n*D), grow(w.g, n*F), grow(w.u, n*F), grow(w.y, n*D)
			for i, j := range mem {
				t := int(j) / K
				copy(w.xg[i*D:(i+1)*D], s.h[t*D:(t+1)*D])
			}
			ew := &p.ws[gi]
			if w.act, w.err = w.mm.prepare(&ew.Gate, w.xg, n, false, w.g, w.act, false); w.err != nil {
				return
			}
			w.mm.do(0, w.mm.items())
			if w.act, w.err = w.mm.prepare(&ew.Up, w.xg, n, false, w.u, w.act, sameActs(&ew.Gate, &ew.Up)); w.err != nil {
				return
			}
			w.mm.do(0, w.mm.items())
			for i := 0; i < n; i++ {
				swiglu(w.g[i*F:(i+1)*F], w.g[i*F:(i+1)*F], w.u[i*F:(i+1)*F])
			}
			if w.act, w.err = w.mm.prepare(&ew.Down, w.g, n, false, w.y, w.act, false); w.err != nil {
				return
			}
			w.mm.do(0, w.mm.items())
			for i, j := range mem {
				wt := s.weights[j]
				dst := p.slotOut[int(j)*D : (int(j)+1)*D]
				for d, v := range w.y[i*D : (i+1)*D] {
					dst[d] = v * wt
				}
			}
		}
	}
}

// sameActs reports whether the up projection takes the activations quantized for the gate
// projection of the same input: same type and width, per-row products (mul_mat_id).
func sameActs(gate, up *Weight) bool { return gate.Type == up.Type && gate.Cols == up.Cols }
