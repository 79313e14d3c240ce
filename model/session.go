package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/regolith/regolith/internal/f16"
	"github.com/regolith/regolith/internal/parallel"
	"github.com/regolith/regolith/kvcache"
	"github.com/regolith/regolith/moce"
	"github.com/regolith/regolith/quant"
)

// Options configure a Session.
type Options struct {
	Ctx      int           // context length (positions in the KV cache); 0: min(4096, training context)
	Threads  int           // worker threads; 0: all CPUs
	Experts  ExpertSource  // nil: the resident memory map
	Observer RouteObserver // nil: none
	// MoCE is cache-aware routing (DESIGN §4; lossy for Lambda > 0). It needs an expert
	// source that reports residency (the expert store); Lambda = 0 is the exact model.
	MoCE MoCE
}

// MoCE configures cache-aware routing: the Protect experts with the largest router logits
// are always chosen; the other k − Protect slots go to the largest z + Lambda·Δ·resident.
type MoCE struct {
	Lambda  float32
	Protect int
}

// Residency is implemented by expert sources that hold some experts resident (the expert
// store). Resident returns layer's residency as a bitset over expert ids (bit e%64 of word
// e/64), reusing dst. It must depend only on the requests made so far, never on I/O timing,
// so that cache-aware routing is deterministic.
type Residency interface {
	Resident(layer int, dst []uint64) []uint64
}

// Session is one sequence's state: the KV cache and scratch buffers, reused across calls.
type Session struct {
	m        *Model
	pool     *parallel.Pool
	kv       *kvcache.Cache
	experts  ExpertSource
	observer RouteObserver
	moce     MoCE
	resident Residency
	prefetch prefetchState
	resBits  []uint64 // the layer's residency, read once per chunk and layer
	zIDs     []int32  // experts sorted by logit (cache-aware routing)
	zSorted  []float32
	rope     *rope

	x, h, q, k, v, att, o []float32 // [T × dim] activations of the current chunk
	router                []float32 // [T × NExpert]
	chosen                []int32   // [T × NExpertUsed]
	weights               []float32 // [T × NExpertUsed]
	moe                   []float32 // [T × NEmbd] routed-expert output
	logits                []float32
	act                   []byte
	scratch               []*attnScratch
	eg                    expertGroups
	mm                    mmJob   // the running matmul (bound once: loops allocate nothing)
	aj                    attnJob // the running attention

	rs   *kvcache.Recurrent // qwen3next: the cache's Gated DeltaNet state (deltanet.go)
	next nextScratch        // qwen3next: activations
}

// NewSession allocates a session's KV cache and scratch.
func NewSession(m *Model, o Options) (*Session, error) {
	c := m.Cfg
	if o.Ctx <= 0 {
		o.Ctx = 4096
		if c.CtxTrain > 0 && c.CtxTrain < o.Ctx {
			o.Ctx = c.CtxTrain
		}
	}
	kv, err := kvcache.New(kvLayers(&c), o.Ctx, c.NHeadKV*c.HeadDim, 0)
	if err != nil {
		return nil, err
	}
	s := &Session{m: m, pool: parallel.New(o.Threads), kv: kv, experts: o.Experts, observer: o.Observer,
		rope: newRope(c.RopeDims, c.RopeBase)}
	if s.experts == nil {
		s.experts = NewResident(m)
	}
	if err := s.attachRecurrent(); err != nil {
		return nil, err
	}
	if o.MoCE.Lambda < 0 || o.MoCE.Protect < 0 {
		return nil, fmt.Errorf("model: cache-aware routing needs lambda >= 0 and protect >= 0")
	}
	if o.MoCE.Lambda > 0 {
		r, ok := s.experts.(Residency)
		if !ok {
			return nil, fmt.Errorf("model: cache-aware routing needs an expert source that holds experts resident (the expert store, --mem)")
		}
		s.moce, s.resident = o.MoCE, r
		s.zIDs, s.zSorted = make([]int32, c.NExpert), make([]float32, c.NExpert)
	}
	s.initPrefetch()
	s.mm.run, s.aj.run = s.mm.do, s.aj.do
	for i := 0; i < s.pool.Threads(); i++ {
		s.scratch = append(s.scratch, newAttnScratch(c.HeadDim, o.Ctx))
	}
	return s, nil
}

// Close stops the session's workers.
func (s *Session) Close() { s.pool.Close() }

// Pos is the number of positions in the cache.
func (s *Session) Pos() int { return s.kv.N }

// Ctx is the context length.
func (s *Session) Ctx() int { return s.kv.Ctx }

// Truncate drops cached positions from n on and returns the new position: n, or less for
// a model with a recurrent state (qwen3next), whose state goes back to its latest
// checkpoint at or before n.
func (s *Session) Truncate(n int) int {
	s.kv.Truncate(n)
	return s.kv.N
}

// Cache exposes the KV cache (for saving and restoring state).
func (s *Session) Cache() *kvcache.Cache { return s.kv }

func grow[E any](b []E, n int) []E {
	if cap(b) < n {
		return make([]E, n)
	}
	return b[:n]
}

// Forward runs the tokens (one chunk, at positions Pos()…Pos()+len-1) through the model,
// appends them to the cache and returns logits: for every token when all is true
// ([len × NVocab]), else for the last token only. The slice is reused by the next call.
func (s *Session) Forward(tokens []int32, all bool) ([]float32, error) {
	m, c := s.m, s.m.Cfg
	T := len(tokens)
	p0 := s.kv.N
	if T == 0 {
		return nil, fmt.Errorf("model: no tokens")
	}
	if p0+T > s.kv.Ctx {
		return nil, fmt.Errorf("model: context full: %d cached + %d new positions exceed the context of %d", p0, T, s.kv.Ctx)
	}
	D, qd, kvd := c.NEmbd, c.NHead*c.HeadDim, c.NHeadKV*c.HeadDim
	s.x, s.h = grow(s.x, T*D), grow(s.h, T*D)
	s.q, s.att = grow(s.q, T*qd), grow(s.att, T*qd)
	s.k, s.v = grow(s.k, T*kvd), grow(s.v, T*kvd)
	s.o, s.moe = grow(s.o, T*D), grow(s.moe, T*D)
	s.router = grow(s.router, T*c.NExpert)
	s.weights = grow(s.weights, T*c.NExpertUsed)
	if cap(s.chosen) < T*c.NExpertUsed {
		s.chosen = make([]int32, T*c.NExpertUsed)
	}
	s.chosen = s.chosen[:T*c.NExpertUsed]

	for t, id := range tokens {
		if id < 0 || int(id) >= c.NVocab {
			return nil, fmt.Errorf("model: token id %d is outside the vocabulary of %d", id, c.NVocab)
		}
		if err := dequantRow(&m.TokEmbd, int(id), s.x[t*D:(t+1)*D]); err != nil {
			return nil, err
		}
	}
	if cs, ok := s.experts.(ChunkSizer); ok {
		cs.BeginChunk(T)
	}
	var err error
	if err = s.beginRecurrent(p0); err != nil {
		return nil, err
	}
	for l := range m.Layers {
		if m.Layers[l].Next != nil {
			err = s.nextMixer(l, T, p0)
		} else {
			err = s.attention(l, T, p0)
		}
		if err != nil {
			return nil, err
		}
		if err = s.ffn(l, T, p0); err != nil {
			return nil, err
		}
		if T == 1 && s.prefetch.to != nil {
			if err = s.prefetchNext(l); err != nil {
				return nil, err
			}
		}
	}
	s.kv.N = p0 + T
	if s.rs != nil {
		s.rs.Advanced(s.kv.N, T)
	}

	rows := s.x
	nOut := T
	if !all {
		rows, nOut = s.x[(T-1)*D:], 1
	}
	for t := 0; t < nOut; t++ {
		rmsNorm(s.h[t*D:(t+1)*D], rows[t*D:(t+1)*D], m.OutNorm, c.Eps)
	}
	s.logits = grow(s.logits, nOut*c.NVocab)
	if err = s.matmul(&m.Output, s.h, nOut, nOut > 1, s.logits); err != nil {
		return nil, err
	}
	return s.logits, nil
}

func (s *Session) attention(l, T, p0 int) error {
	m, c := s.m, s.m.Cfg
	L := &m.Layers[l]
	D, hd, qd := c.NEmbd, c.HeadDim, c.NHead*c.HeadDim
	for t := 0; t < T; t++ {
		rmsNorm(s.h[t*D:(t+1)*D], s.x[t*D:(t+1)*D], L.AttnNorm, c.Eps)
	}
	var err error
	if err = s.matmul(&L.Wq, s.h, T, T > 1, s.q); err != nil {
		return err
	}
	if err = s.matmul(&L.Wk, s.h, T, T > 1, s.k); err != nil {
		return err
	}
	if err = s.matmul(&L.Wv, s.h, T, T > 1, s.v); err != nil {
		return err
	}
	for t := 0; t < T; t++ {
		s.rope.at(p0 + t)
		for h := 0; h < c.NHead; h++ {
			x := s.q[t*qd+h*hd : t*qd+(h+1)*hd]
			rmsNorm(x, x, L.QNorm, c.Eps)
			s.rope.apply(x)
		}
		s.storeKV(L, l, t, p0)
	}
	s.attendChunk(l, T, p0)
	if err = s.matmul(&L.Wo, s.att, T, T > 1, s.o); err != nil {
		return err
	}
	for i := range s.x[:T*D] {
		s.x[i] += s.o[i]
	}
	return nil
}

func (s *Session) ffn(l, T, p0 int) error {
	m, c := s.m, s.m.Cfg
	L := &m.Layers[l]
	D, E, K := c.NEmbd, c.NExpert, c.NExpertUsed
	for t := 0; t < T; t++ {
		rmsNorm(s.h[t*D:(t+1)*D], s.x[t*D:(t+1)*D], L.FFNNorm, c.Eps)
	}
	var err error
	if err = s.matmul(&L.Router, s.h, T, T > 1, s.router); err != nil {
		return err
	}
	if s.resident != nil {
		// Every token of the chunk routes against the residency before the chunk's loads.
		s.resBits = s.resident.Resident(l, s.resBits)
	}
	for t := 0; t < T; t++ {
		logits := s.router[t*E : (t+1)*E]
		chosen := s.chosen[t*K : (t+1)*K]
		w := s.weights[t*K : (t+1)*K]
		if s.observer != nil || s.resident != nil {
			// Observers and cache-aware routing get the raw logits; the weights are the
			// probabilities.
			copy(s.o[:E], logits)
		}
		softmax(logits)
		if s.resident != nil {
			s.routeMoCE(s.o[:E], chosen)
		} else {
			topK(logits, chosen)
		}
		var sum float64 // ggml_sum_rows accumulates in double
		for i, e := range chosen {
			w[i] = logits[e]
			sum += float64(w[i])
		}
		for i := range w {
			w[i] /= float32(sum)
		}
		if s.observer != nil {
			s.observer.Routed(l, p0+t, s.o[:E], chosen, w)
		}
	}
	if err := s.runExperts(l, T); err != nil {
		return err
	}
	if L.Shared != nil {
		if err := s.sharedExpert(l, T); err != nil {
			return err
		}
	}
	for i := range s.x[:T*D] {
		s.x[i] += s.moe[i]
	}
	return nil
}

func dequantRow(w *Weight, r int, dst []float32) error {
	return quant.DequantizeRow(w.Type, w.Row(r), dst)
}

// attnJob is one layer's attention over a chunk, split by (token, head) across workers.
type attnJob struct {
	s     *Session
	K, V  []uint16
	T, p0 int
	nKV   int
	scale float32
	run   func(lo, hi int)
}

func (j *attnJob) do(lo, hi int) {
	if j.T >= faTileQ {
		j.doTiled(lo, hi)
		return
	}
	s, c := j.s, j.s.m.Cfg
	hd, qd, kvd := c.HeadDim, c.NHead*c.HeadDim, c.NHeadKV*c.HeadDim
	group := c.NHead / c.NHeadKV
	// Items are dealt round-robin: later tokens attend over more cells, and a contiguous
	// split would leave the first worker idle.
	nWork, nw := j.T*c.NHead, len(s.scratch)
	for w := lo; w < hi; w++ {
		sc := s.scratch[w]
		for i := w; i < nWork; i += nw {
			t, h := i/c.NHead, i%c.NHead
			kv := kvView{K: j.K, V: j.V, off: (h / group) * hd, stride: kvd, hd: hd}
			attendRow(s.att[t*qd+h*hd:t*qd+(h+1)*hd], s.q[t*qd+h*hd:t*qd+(h+1)*hd],
				&kv, j.p0+t+1, j.nKV, j.T, j.scale, sc)
		}
	}
}

// doTiled deals (KV head, query tile of faTileQ rows) items round-robin across workers.
func (j *attnJob) doTiled(lo, hi int) {
	c := j.s.m.Cfg
	tiles := (j.T + faTileQ - 1) / faTileQ
	nWork, nw := c.NHeadKV*tiles, len(j.s.scratch)
	for w := lo; w < hi; w++ {
		sc := j.s.scratch[w]
		sc.tiledScratch(c.HeadDim, c.NHead/c.NHeadKV)
		for i := w; i < nWork; i += nw {
			g, qt := i%c.NHeadKV, i/c.NHeadKV
			j.attendTiled(g, qt*faTileQ, min((qt+1)*faTileQ, j.T), sc)
		}
	}
}

// routeMoCE chooses a token's experts by cache-aware routing from its raw router logits z
// (package moce, the same code the trace replay runs).
func (s *Session) routeMoCE(z []float32, chosen []int32) {
	ids := s.zIDs
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int {
		switch {
		case z[a] > z[b]:
			return -1
		case z[a] < z[b]:
			return 1
		}
		return int(a - b)
	})
	for i, e := range ids {
		s.zSorted[i] = z[e]
	}
	moce.Select(chosen[:0], ids, s.zSorted, s.resBits, len(chosen), s.moce.Protect, s.moce.Lambda)
}

// storeKV normalizes and rotates token t's keys (s.rope must be at its position) and stores
// its keys and values in cache layer kl.
func (s *Session) storeKV(L *Layer, kl, t, p0 int) {
	c := s.m.Cfg
	hd, kvd := c.HeadDim, c.NHeadKV*c.HeadDim
	for h := 0; h < c.NHeadKV; h++ {
		x := s.k[t*kvd+h*hd : t*kvd+(h+1)*hd]
		rmsNorm(x, x, L.KNorm, c.Eps)
		s.rope.apply(x)
	}
	f16.ToF16(s.kv.KRow(kl, p0+t), s.k[t*kvd:(t+1)*kvd])
	f16.ToF16(s.kv.VRow(kl, p0+t), s.v[t*kvd:(t+1)*kvd])
}

// attendChunk runs the chunk's queries (s.q) over cache layer kl into s.att: one work item
// per (token, head), each worker with its own scratch.
func (s *Session) attendChunk(kl, T, p0 int) {
	s.aj = attnJob{s: s, K: s.kv.K[kl], V: s.kv.V[kl], T: T, p0: p0,
		nKV: max(kvPad, (p0+T+kvPad-1)/kvPad*kvPad), scale: float32(1 / math.Sqrt(float64(s.m.Cfg.HeadDim))), run: s.aj.run}
	s.pool.For(len(s.scratch), 1, s.aj.run)
	s.aj.K, s.aj.V = nil, nil
}
