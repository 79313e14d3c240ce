package model

// Prefetcher is optionally implemented by an ExpertSource that can read experts ahead of
// demand (the expert store's prefetch shelf). When PrefetchWidth is above 0 when the
// session is made, a decode step (a chunk of one token) predicts, after each layer l's
// FFN, the PrefetchWidth experts layer l+1 is most likely to route to and passes them to
// Prefetch(l+1, experts), in descending order of predicted logit. The experts slice is
// valid only during the call.
//
// The prediction applies layer l+1's ffn_norm and router to the residual stream after
// layer l (its FFN output added). The router's real input is ffn_norm(l+1) of the residual
// after layer l+1's attention, which is not known yet; attention's update is small next to
// the residual, so its top experts mostly agree. Computing it costs one router matmul per
// layer and token, so sessions compute it only for a source that asks.
//
// Prefetch is a hint: it must not change what Acquire returns, nor what a Residency
// reports (cache-aware routing reads that, and must stay a function of demand only).
type Prefetcher interface {
	PrefetchWidth() int
	Prefetch(layer int, experts []int32)
}

// prefetchNext predicts layer l+1's experts for one token from the residual stream after
// layer l and hands them to the prefetcher. It uses s.h and s.router, free between
// layer l's FFN and layer l+1's attention.
func (s *Session) prefetchNext(l int) error {
	m, c := s.m, s.m.Cfg
	if l+1 >= len(m.Layers) {
		return nil
	}
	L := &m.Layers[l+1]
	D, E := c.NEmbd, c.NExpert
	rmsNorm(s.h[:D], s.x[:D], L.FFNNorm, c.Eps)
	if err := s.matmul(&L.Router, s.h, 1, false, s.router[:E]); err != nil {
		return err
	}
	n := min(s.prefetch.n, E)
	topK(s.router[:E], s.prefetch.predicted[:n])
	s.prefetch.to.Prefetch(l+1, s.prefetch.predicted[:n])
	return nil
}

// initPrefetch turns prediction on when the session's expert source asks for it.
func (s *Session) initPrefetch() {
	if p, ok := s.experts.(Prefetcher); ok && p.PrefetchWidth() > 0 {
		s.prefetch.to, s.prefetch.n = p, p.PrefetchWidth()
		s.prefetch.predicted = make([]int32, min(s.prefetch.n, s.m.Cfg.NExpert))
	}
}

// prefetchState is a session's prediction for a Prefetcher.
type prefetchState struct {
	to        Prefetcher // nil: off
	n         int        // experts predicted per layer
	predicted []int32
}
