package trace

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/regolith/regolith/moce"
)

// sim is one configuration's state. Experts are keys layer·n_expert + id; arrays are flat
// and indexed by key, residency is a bitset per layer, and the inner loop has no maps.
type sim struct {
	t   *Trace
	cfg Config
	nE  int
	w   int // bitset words per layer

	classOf  []int     // layer → class
	slots    [][]int32 // class → slot → key (-1: free)
	filled   []int     // class → slots filled so far (free slots are taken in order)
	slotOf   []int32   // key → slot, -1: not resident
	res      []uint64  // [layer·w] residency bits
	last     []int64   // key → LRU clock of its last touch
	cnt      []int64   // key → tokens that chose it (LFU)
	score    []float64 // key → decayed score (EMA policies)
	next     []int64   // key → next acquire that needs it (Belady)
	need     []int64   // key → the acquire that needs it (pinning)
	keys     []int32   // the current acquire's keys
	clock    int64
	dpow     []float64 // Decay^j
	closed   bool
	rerank   bool
	prob     [][]float32
	needBits []uint64 // the current acquire's experts, one layer's bitset
	chosen   []uint16
	ids      []uint16
	z        []float32
	tokMark  []int32 // expert → token serial that chose it (near-pick)
	tokSer   int32

	// Belady: the open-loop acquires' expert lists and each entry's next use.
	bNeed []int32 // keys, acquire after acquire
	bOff  []int64 // acquire → start in bNeed
	bNext []int64 // next acquire needing bNeed[i]'s key
	bForc []int32 // forced misses per acquire

	pre, dec Phase
	layers   []LayerCounts
	slotsPer []int
}

const never = math.MaxInt64

func newSim(t *Trace, cfg Config) (*sim, error) {
	n := 0
	for _, v := range []bool{cfg.Cache > 0, cfg.Slots > 0, cfg.CacheBytes > 0} {
		if v {
			n++
		}
	}
	if n != 1 {
		return nil, errSize
	}
	if cfg.Policy < 0 || cfg.Policy >= nPolicies {
		return nil, fmt.Errorf("trace: unknown policy %d", cfg.Policy)
	}
	if cfg.Lambda < 0 || math.IsNaN(float64(cfg.Lambda)) || cfg.Protect < 0 {
		return nil, fmt.Errorf("trace: MoCE λ = %v, protect = %d", cfg.Lambda, cfg.Protect)
	}
	if cfg.Policy == Belady && (cfg.Lambda > 0 || cfg.closed) {
		return nil, fmt.Errorf("trace: belady is the bound for the trace's own routing; it does not combine with MoCE")
	}
	if cfg.Decay == 0 {
		cfg.Decay = DefaultDecay
	}
	if cfg.NearCredit == 0 {
		cfg.NearCredit = DefaultNearCredit
	}
	if !(cfg.Decay > 0 && cfg.Decay <= 1) || cfg.NearCredit < 0 {
		return nil, fmt.Errorf("trace: decay %v (want (0, 1]) and near credit %v (want ≥ 0)", cfg.Decay, cfg.NearCredit)
	}
	if cfg.Keep != nil && len(cfg.Keep.bits) != t.NLayer {
		return nil, fmt.Errorf("trace: keep-map of %d layers for a trace of %d", len(cfg.Keep.bits), t.NLayer)
	}
	L, nE := t.NLayer, t.NExpert
	s := &sim{t: t, cfg: cfg, nE: nE, w: (nE + 63) / 64}
	s.closed = cfg.Lambda > 0 || cfg.closed
	s.rerank = s.closed || cfg.Keep != nil
	// Classes: per layer, or the layers of one expert size.
	s.classOf = make([]int, L)
	var classBytes []int64
	var classLayers []int
	for l := 0; l < L; l++ {
		c := l
		if cfg.Cache == 0 {
			c = -1
			for i, b := range classBytes {
				if b == t.ExpertBytes[l] {
					c = i
				}
			}
		} else {
			c = len(classBytes)
		}
		if c < 0 || c == len(classBytes) {
			c = len(classBytes)
			classBytes = append(classBytes, t.ExpertBytes[l])
			classLayers = append(classLayers, 0)
		}
		classLayers[c]++
		s.classOf[l] = c
	}
	s.slotsPer = make([]int, len(classBytes))
	var all float64
	for c, b := range classBytes {
		all += float64(b) * float64(classLayers[c]*nE)
	}
	for c := range classBytes {
		experts := classLayers[c] * nE
		switch {
		case cfg.Cache > 0:
			s.slotsPer[c] = min(cfg.Cache, experts)
		case cfg.Slots > 0:
			s.slotsPer[c] = min(cfg.Slots, experts)
		default:
			budget := min(float64(cfg.CacheBytes), all)
			share := budget * float64(classBytes[c]) * float64(experts) / all
			s.slotsPer[c] = min(experts, int(share/float64(classBytes[c])))
		}
		if s.slotsPer[c] < 1 {
			return nil, fmt.Errorf("trace: a budget of %d bytes holds no expert of %d bytes", cfg.CacheBytes, classBytes[c])
		}
	}
	s.slots = make([][]int32, len(classBytes))
	for c, n := range s.slotsPer {
		s.slots[c] = make([]int32, n)
		for i := range s.slots[c] {
			s.slots[c][i] = -1
		}
	}
	s.filled = make([]int, len(classBytes))
	K := L * nE
	s.slotOf = make([]int32, K)
	for i := range s.slotOf {
		s.slotOf[i] = -1
	}
	s.res = make([]uint64, L*s.w)
	s.last = make([]int64, K)
	s.need = make([]int64, K)
	for i := range s.need {
		s.need[i] = -1
	}
	switch cfg.Policy {
	case LFU:
		s.cnt = make([]int64, K)
	case EMA, NearPickEMA, InverseRouterEMA:
		s.score = make([]float64, K)
		maxT := 1
		for _, c := range t.Chunks {
			maxT = max(maxT, c.Tokens)
		}
		s.dpow = make([]float64, maxT+1)
		s.dpow[0] = 1
		for j := 1; j <= maxT; j++ {
			s.dpow[j] = s.dpow[j-1] * cfg.Decay
		}
		if cfg.Policy == InverseRouterEMA {
			s.prob = t.probs()
		}
		s.tokMark = make([]int32, nE)
	case Belady:
		s.next = make([]int64, K)
	}
	s.needBits = make([]uint64, s.w)
	s.chosen = make([]uint16, 0, t.K)
	s.ids = make([]uint16, 0, t.TopN)
	s.z = make([]float32, 0, t.TopN)
	s.layers = make([]LayerCounts, L)
	if cfg.Policy == Belady {
		s.planBelady()
	}
	return s, nil
}

// choose returns the experts token tok uses at layer l, and the forced misses (keep-map).
func (s *sim) choose(l, tok int) ([]uint16, int) {
	t := s.t
	K, N := t.K, t.TopN
	if !s.rerank {
		return t.Chosen[l][tok*K : (tok+1)*K], 0
	}
	cand, z := t.Cand[l][tok*N:(tok+1)*N], t.Logit[l][tok*N:(tok+1)*N]
	forced := 0
	if k := s.cfg.Keep; k != nil {
		s.ids, s.z = s.ids[:0], s.z[:0]
		for i, e := range cand {
			if k.kept(l, e) {
				s.ids = append(s.ids, e)
				s.z = append(s.z, z[i])
			}
		}
		cand, z = s.ids, s.z
		forced = max(0, K-len(cand))
	}
	lambda := s.cfg.Lambda
	if !s.closed {
		lambda = 0
	}
	s.chosen = moce.Select(s.chosen[:0], cand, z, s.res[l*s.w:(l+1)*s.w], K, s.cfg.Protect, lambda)
	return s.chosen, forced
}

// credit adds token tok's score credit (scaled by f) at layer l.
func (s *sim) credit(l, tok int, chosen []uint16, f float64) {
	base := l * s.nE
	switch s.cfg.Policy {
	case LFU:
		for _, e := range chosen {
			s.cnt[base+int(e)]++
		}
	case EMA:
		for _, e := range chosen {
			s.score[base+int(e)] += f
		}
	case NearPickEMA:
		s.tokSer++
		for _, e := range chosen {
			s.score[base+int(e)] += f
			s.tokMark[e] = s.tokSer
		}
		// The next k candidates behind the chosen ones (skipping pruned ones).
		t, N := s.t, s.t.TopN
		nf := f * s.cfg.NearCredit
		left := t.K
		for _, e := range t.Cand[l][tok*N : (tok+1)*N] {
			if left == 0 {
				break
			}
			if s.tokMark[e] == s.tokSer || (s.cfg.Keep != nil && !s.cfg.Keep.kept(l, e)) {
				continue
			}
			s.score[base+int(e)] += nf
			left--
		}
	case InverseRouterEMA:
		N := s.t.TopN
		p := s.prob[l][tok*N : (tok+1)*N]
		for i, e := range s.t.Cand[l][tok*N : (tok+1)*N] {
			s.score[base+int(e)] += f * float64(p[i])
		}
	}
}

func (s *sim) run() {
	t := s.t
	L := t.NLayer
	phase := func(c Chunk) *Phase {
		if c.Tokens > 1 {
			return &s.pre
		}
		return &s.dec
	}
	for _, c := range t.Chunks {
		phase(c).Tokens += int64(c.Tokens)
	}
	if s.cfg.Cache > 0 {
		// Layers have their own arenas and do not interact: one layer at a time keeps its
		// state and its part of the trace in cache.
		for l := 0; l < L; l++ {
			for ci, c := range t.Chunks {
				s.step(l, int64(ci)*int64(L)+int64(l), c, phase(c))
			}
		}
		return
	}
	for ci, c := range t.Chunks {
		for l := 0; l < L; l++ {
			s.step(l, int64(ci)*int64(L)+int64(l), c, phase(c))
		}
	}
}

// step routes one chunk's tokens at one layer, updates the scores and makes the experts the
// chunk needs resident.
func (s *sim) step(l int, acq int64, c Chunk, ph *Phase) {
	base := l * s.nE
	forced := 0
	nb := s.needBits
	if s.cfg.Policy == Belady {
		i := int64(l)*int64(len(s.t.Chunks)) + acq/int64(s.t.NLayer)
		lo, hi := s.bOff[i], s.bOff[i+1]
		forced = int(s.bForc[i])
		s.acquire(l, acq, s.bNeed[lo:hi], s.bNext[lo:hi], forced, ph)
		return
	}
	ema := s.score != nil
	if ema {
		// Every expert of the layer decays every token step, resident or not.
		d := s.dpow[c.Tokens]
		sc := s.score[base : base+s.nE]
		for i := range sc {
			sc[i] *= d
		}
	}
	for j := 0; j < c.Tokens; j++ {
		tok := c.Start + j
		chosen, f := s.choose(l, tok)
		forced += f
		for _, e := range chosen {
			nb[e>>6] |= 1 << (e & 63)
		}
		if s.cfg.Policy != LRU {
			w := 1.0
			if ema {
				w = s.dpow[c.Tokens-1-j]
			}
			s.credit(l, tok, chosen, w)
		}
	}
	keys := s.keys[:0]
	for wi, w := range nb {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			w &= w - 1
			keys = append(keys, int32(base+wi*64+b))
		}
		nb[wi] = 0
	}
	s.keys = keys
	s.acquire(l, acq, keys, nil, forced, ph)
}

// acquire makes keys (ascending) resident at once: hits are touched first, then each miss
// takes a free slot or evicts the policy's victim among the experts the acquire does not
// need. A miss that finds every slot held by the acquire is an overflow: read, not kept.
func (s *sim) acquire(l int, acq int64, keys []int32, next []int64, forced int, ph *Phase) {
	c := s.classOf[l]
	slots := s.slots[c]
	a := acq
	for _, k := range keys {
		s.need[k] = a
	}
	var hits, misses, overflow int64
	for i, k := range keys {
		if s.slotOf[k] >= 0 {
			hits++
			s.clock++
			s.last[k] = s.clock
		}
		if next != nil {
			s.next[k] = next[i]
		}
	}
	rw := s.res
	for _, k := range keys {
		if s.slotOf[k] >= 0 {
			continue
		}
		misses++
		var j int
		if s.filled[c] < len(slots) {
			j = s.filled[c]
			s.filled[c]++
		} else {
			j = s.victim(slots, a)
			if j < 0 {
				overflow++
				continue
			}
			old := slots[j]
			s.slotOf[old] = -1
			ol, oe := int(old)/s.nE, int(old)%s.nE
			rw[ol*s.w+oe>>6] &^= 1 << (oe & 63)
		}
		slots[j] = k
		s.slotOf[k] = int32(j)
		e := int(k) - l*s.nE
		rw[l*s.w+e>>6] |= 1 << (e & 63)
		s.clock++
		s.last[k] = s.clock
	}
	if misses > 0 {
		ph.Stalls++
	}
	misses += int64(forced)
	ph.Lookups += int64(len(keys)) + int64(forced)
	ph.Hits += hits
	ph.Misses += misses
	ph.Forced += int64(forced)
	ph.Overflow += overflow
	ph.Bytes += misses * s.t.ExpertBytes[l]
	s.layers[l].Hits += hits
	s.layers[l].Misses += misses
}

// victim is the slot to evict: the policy's choice among slots whose expert the current
// acquire a does not need; -1 when there is none.
func (s *sim) victim(slots []int32, a int64) int {
	best := -1
	var bk int32
	switch s.cfg.Policy {
	case LRU:
		var bl int64 = never
		for j, k := range slots {
			if s.need[k] != a && s.last[k] < bl {
				best, bl = j, s.last[k]
			}
		}
	case LFU:
		var bc, bl int64 = never, never
		for j, k := range slots {
			if s.need[k] == a {
				continue
			}
			if c := s.cnt[k]; c < bc || (c == bc && s.last[k] < bl) {
				best, bc, bl = j, c, s.last[k]
			}
		}
	case EMA, NearPickEMA, InverseRouterEMA:
		bs, bl := math.Inf(1), int64(never)
		for j, k := range slots {
			if s.need[k] == a {
				continue
			}
			if v := s.score[k]; v < bs || (v == bs && s.last[k] < bl) {
				best, bs, bl = j, v, s.last[k]
			}
		}
	case Belady:
		var bn int64 = -1
		for j, k := range slots {
			if s.need[k] == a {
				continue
			}
			if n := s.next[k]; n > bn || (n == bn && k < bk) {
				best, bn, bk = j, n, k
			}
		}
	}
	return best
}

// planBelady lists, layer after layer and in chunk order, the experts every acquire needs
// under the trace's own routing (with the keep-map, the top-k survivors), and for each the
// next acquire (numbered chunk·n_layer + layer, the order of the replay) that needs it.
func (s *sim) planBelady() {
	t := s.t
	L, nC := t.NLayer, len(t.Chunks)
	n := nC * L
	s.bOff = make([]int64, n+1)
	s.bForc = make([]int32, n)
	var keys []int32
	nb := s.needBits
	for l := 0; l < L; l++ {
		for ci, c := range t.Chunks {
			i := l*nC + ci
			s.bOff[i] = int64(len(keys))
			forced := 0
			for j := 0; j < c.Tokens; j++ {
				chosen, f := s.choose(l, c.Start+j)
				forced += f
				for _, e := range chosen {
					nb[e>>6] |= 1 << (e & 63)
				}
			}
			s.bForc[i] = int32(forced)
			for wi, w := range nb {
				for w != 0 {
					b := bits.TrailingZeros64(w)
					w &= w - 1
					keys = append(keys, int32(l*s.nE+wi*64+b))
				}
				nb[wi] = 0
			}
		}
	}
	s.bOff[n] = int64(len(keys))
	s.bNeed = keys
	s.bNext = make([]int64, len(keys))
	seen := make([]int64, L*s.nE)
	for i := range seen {
		seen[i] = never
	}
	// A key belongs to one layer, so walking each layer's acquires backwards is enough.
	for i := n - 1; i >= 0; i-- {
		acq := int64(i%nC)*int64(L) + int64(i/nC)
		for j := s.bOff[i]; j < s.bOff[i+1]; j++ {
			k := keys[j]
			s.bNext[j] = seen[k]
			seen[k] = acq
		}
	}
}

func (s *sim) result() *Result {
	r := &Result{Config: s.cfg, Label: s.cfg.Label(), SlotsPerClass: s.slotsPer, Prefill: s.pre, Decode: s.dec, Layers: s.layers}
	tot := r.Total()
	r.Hits, r.Misses, r.Tokens = tot.Hits, tot.Misses, tot.Tokens
	r.HitRate, r.MissesPerToken, r.BytesPerToken = tot.HitRate(), tot.MissesPerToken(), tot.BytesPerToken()
	r.Config.Decay, r.Config.NearCredit = 0, 0
	if s.score != nil {
		r.Config.Decay = s.cfg.Decay
		if s.cfg.Policy == NearPickEMA {
			r.Config.NearCredit = s.cfg.NearCredit
		}
	}
	return r
}
