// Package sample turns a vector of next-token logits into a token id.
//
// It implements the default sampler chain of llama.cpp's common sampling
// (common/sampling.cpp), restricted to the stages regolith supports:
//
//	penalties -> top_k -> top_p -> min_p -> temperature -> dist
//
// with llama.cpp's default parameters (see DefaultParams). A temperature
// <= 0 selects the greedy path: the argmax of the penalized logits, ties
// broken towards the lowest token id.
//
// # Usage
//
//	s := sample.New(sample.DefaultParams(), nVocab)
//	for {
//		logits := model.Decode(...)          // []float32, len nVocab
//		id := s.Sample(logits)               // never writes to logits
//		s.Accept(id)                         // record for the penalties
//		// optional, OpenAI logprobs (raw log-softmax):
//		lp, top := s.Logprobs(logits, id, 5)
//	}
//
// # Semantics
//
// Penalties (llama.cpp's llama_sampler_penalties): for every token id that
// occurs c > 0 times among the last PenaltyLastN accepted tokens,
//
//	if l <= 0 { l *= RepeatPenalty } else { l /= RepeatPenalty }
//	l -= float32(c)*FrequencyPenalty + PresencePenalty
//
// in float32 arithmetic. Tokens outside the window are untouched.
//
// Top-k keeps the k largest logits (ties: lower id first) using a bounded
// heap (a partial selection; the vocabulary is never sorted). Top-p keeps
// the shortest prefix of the descending candidates whose softmax mass
// (over the candidates that survived top-k, before temperature) reaches
// TopP. Min-p keeps candidates with logit >= max + ln(MinP), i.e.
// p >= MinP * p_max. Both keep at least MinKeep candidates. Temperature
// divides the surviving logits by Temp and the token is drawn from their
// softmax by inverse-CDF with one uniform float64 from the sampler's PCG
// generator (math/rand/v2), walking candidates in descending-logit order.
//
// Determinism: the sampled id is a pure function of (logits, accepted
// history, Params, generator state). Every non-greedy Sample call consumes
// exactly one Float64 from the generator (even with a single candidate);
// greedy calls consume none. The same seed therefore reproduces the same
// sequence, and Reset restores the generator to its seed.
//
// Non-finite logits: NaN and -Inf logits are never sampled (they are not
// candidates at all). If one or more logits are +Inf, exactly those
// tokens remain candidates and are treated as equally likely. If no
// logit is a candidate (all NaN / -Inf), Sample returns -1.
//
// Allocation: New preallocates every buffer; Sample and Accept do not
// allocate (except Accept with PenaltyLastN < 0, whose window is
// unbounded and grows). A Sampler is not safe for concurrent use.
//
// Cost: top-k and greedy scan the vocabulary once, rejecting 16 logits at a
// time by comparing their IEEE-754 bit patterns as integers against the
// current threshold (see scan.go); only the surviving <= k candidates are
// sorted and exponentiated. With TopK <= 0 the whole vocabulary is
// exponentiated (top-p normalizer) and the min-p survivors sorted, which is
// ~40x slower. Logprobs costs one exp per vocabulary entry.
//
// # Differences from llama.cpp
//
//   - Ties are broken by lower token id everywhere (llama.cpp's partial
//     sort leaves their order unspecified).
//   - Top-p's softmax and cumulative sum use float64 (llama.cpp: float32),
//     so the kept set can differ only when the cumulative mass lies within
//     float32 rounding of TopP.
//   - The generator is PCG, not mt19937: the same seed gives a different
//     sequence than llama.cpp. A single-candidate draw still consumes one
//     number (llama.cpp's dist skips it).
//   - PenaltyLastN < 0 means the whole history (llama.cpp: context size).
//   - NaN / +Inf handling is defined (see above); llama.cpp's is not.
//   - Not implemented: DRY, top-n-sigma, typical-p, XTC, dynamic
//     temperature, mirostat, logit bias, grammar constraints (all off in
//     llama.cpp's defaults).
package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SeedRandom is the Seed value that asks for a random seed, like
// llama.cpp's LLAMA_DEFAULT_SEED (0xFFFFFFFF, "--seed -1").
const SeedRandom uint64 = 0xFFFFFFFF

// Params configures a Sampler. The zero value is not useful; start from
// DefaultParams.
type Params struct {
	// Temp is the softmax temperature. <= 0 means greedy (argmax).
	Temp float32
	// TopK keeps the K most likely tokens. <= 0 disables it (whole vocabulary).
	TopK int
	// TopP is the nucleus mass. >= 1 disables it.
	TopP float32
	// MinP drops tokens with p < MinP*p_max. <= 0 disables it.
	MinP float32
	// MinKeep is the least number of candidates top-p and min-p keep
	// (0 behaves like 1: the most likely token always survives).
	MinKeep int

	// PenaltyLastN is the window of accepted tokens the penalties look at.
	// 0 disables the penalties (and Accept records nothing); < 0 means the
	// whole history (llama.cpp's -1 means "context size"; callers that
	// want that should pass the context size).
	PenaltyLastN int
	// RepeatPenalty divides positive / multiplies non-positive logits of
	// tokens in the window. 1 disables it.
	RepeatPenalty float32
	// FrequencyPenalty is subtracted once per occurrence in the window.
	FrequencyPenalty float32
	// PresencePenalty is subtracted once if the token is in the window.
	PresencePenalty float32

	// Seed seeds the generator. SeedRandom picks a random seed (see
	// Sampler.Seed for the one actually used).
	Seed uint64
}

// DefaultParams returns llama.cpp's common_params_sampling defaults:
// temp 0.8, top_k 40, top_p 0.95, min_p 0.05, min_keep 0,
// penalty_last_n 64, repeat 1.0, frequency 0, presence 0, random seed.
func DefaultParams() Params {
	return Params{
		Temp:             0.8,
		TopK:             40,
		TopP:             0.95,
		MinP:             0.05,
		MinKeep:          0,
		PenaltyLastN:     64,
		RepeatPenalty:    1.0,
		FrequencyPenalty: 0,
		PresencePenalty:  0,
		Seed:             SeedRandom,
	}
}

// Candidate is one token that survived the chain, with its logit after
// penalties and temperature and its final sampling probability.
type Candidate struct {
	ID    int32
	Logit float32
	P     float32
}

// pcgSeq is the second PCG word; the first is the user seed.
const pcgSeq = 0x9e3779b97f4a7c15

var negInf = float32(math.Inf(-1))
var posInf = float32(math.Inf(1))

// Sampler holds the parameters, the penalty window and the generator.
type Sampler struct {
	p      Params
	nVocab int
	seed   uint64
	pcg    *rand.PCG
	rng    *rand.Rand

	// penalty window
	ring     []int32 // bounded window (PenaltyLastN > 0), circular
	head     int     // next slot to overwrite once the ring is full
	counts   []int32 // per token id: occurrences in the window
	distinct []int32 // ids with counts > 0
	pos      []int32 // per token id: index into distinct

	cand []Candidate // candidate buffer (heap for top-k, or whole vocab)
	last []Candidate // the final candidates of the last Sample

	lp  []Candidate    // scratch for Logprobs selection
	lpo []TokenLogprob // Logprobs result buffer
}

// New returns a Sampler for a vocabulary of nVocab tokens. It allocates
// every buffer Sample needs, so that steady-state calls do not allocate.
func New(p Params, nVocab int) *Sampler {
	if nVocab <= 0 {
		panic(fmt.Sprintf("sample: nVocab %d <= 0", nVocab))
	}
	s := &Sampler{p: p, nVocab: nVocab}
	s.pcg = rand.NewPCG(0, pcgSeq)
	s.rng = rand.New(s.pcg)
	s.counts = make([]int32, nVocab)
	s.pos = make([]int32, nVocab)
	if p.PenaltyLastN > 0 {
		s.ring = make([]int32, 0, p.PenaltyLastN)
		s.distinct = make([]int32, 0, min(p.PenaltyLastN, nVocab))
	}
	c := nVocab
	if p.TopK > 0 && p.TopK < nVocab {
		c = p.TopK
	}
	s.cand = make([]Candidate, 0, max(c, 1))
	s.Reset()
	return s
}

// Params returns the sampler's parameters.
func (s *Sampler) Params() Params { return s.p }

// Seed returns the seed in use (the resolved one if Params.Seed is
// SeedRandom).
func (s *Sampler) Seed() uint64 { return s.seed }

// Reset clears the penalty history and reseeds the generator: with a fixed
// seed, the sampler then repeats the sequence it produced after New.
// With SeedRandom a fresh random seed is drawn, as llama.cpp does.
func (s *Sampler) Reset() {
	for _, id := range s.distinct {
		s.counts[id] = 0
	}
	s.distinct = s.distinct[:0]
	s.ring = s.ring[:0]
	s.head = 0
	s.last = s.last[:0]
	s.seed = s.p.Seed
	if s.seed == SeedRandom {
		s.seed = rand.Uint64()
	}
	s.pcg.Seed(s.seed, pcgSeq)
}

// Accept records token id in the penalty window. It panics if id is out
// of range.
func (s *Sampler) Accept(id int32) {
	n := s.p.PenaltyLastN
	if n == 0 {
		return
	}
	if id < 0 || int(id) >= s.nVocab {
		panic(fmt.Sprintf("sample: Accept(%d) outside vocabulary of %d", id, s.nVocab))
	}
	if n > 0 {
		if len(s.ring) < n {
			s.ring = append(s.ring, id)
		} else {
			s.drop(s.ring[s.head])
			s.ring[s.head] = id
			s.head++
			if s.head == n {
				s.head = 0
			}
		}
	}
	if s.counts[id] == 0 {
		s.pos[id] = int32(len(s.distinct))
		s.distinct = append(s.distinct, id)
	}
	s.counts[id]++
}

func (s *Sampler) drop(id int32) {
	s.counts[id]--
	if s.counts[id] > 0 {
		return
	}
	i := s.pos[id]
	last := s.distinct[len(s.distinct)-1]
	s.distinct[i] = last
	s.pos[last] = i
	s.distinct = s.distinct[:len(s.distinct)-1]
}

// penaltiesOn reports whether the penalty stage changes anything.
func (s *Sampler) penaltiesOn() bool {
	p := &s.p
	return p.PenaltyLastN != 0 && len(s.distinct) > 0 &&
		(p.RepeatPenalty != 1 || p.FrequencyPenalty != 0 || p.PresencePenalty != 0)
}

// penalize applies the documented formula to logit l of a token seen c
// times. The explicit float32 conversion forbids fused multiply-add, so
// the result is the same on every architecture.
func (s *Sampler) penalize(l float32, c int32) float32 {
	if l <= 0 {
		l *= s.p.RepeatPenalty
	} else {
		l /= s.p.RepeatPenalty
	}
	return l - (float32(float32(c)*s.p.FrequencyPenalty) + s.p.PresencePenalty)
}

// Candidates returns the candidates that survived the chain in the last
// Sample call, in descending-logit order, with logits after penalties and
// temperature and their final probabilities (llama.cpp's "post-sampling
// probs"). After a greedy Sample it holds the chosen token with P = 1.
// The slice is reused by the next Sample call.
func (s *Sampler) Candidates() []Candidate { return s.last }

// Sample returns the next token id for logits (len must equal nVocab), or
// -1 if no logit is finite or +Inf. It never writes to logits.
func (s *Sampler) Sample(logits []float32) int32 {
	if len(logits) != s.nVocab {
		panic(fmt.Sprintf("sample: %d logits for a vocabulary of %d", len(logits), s.nVocab))
	}
	pen := s.penaltiesOn()
	if s.p.Temp <= 0 {
		return s.greedy(logits, pen)
	}

	var c []Candidate
	// norm is sum(exp(l - c[0].Logit)) over the set top-p normalizes
	// over; 0 means "compute it from c".
	var norm float64
	k := s.p.TopK
	if k > 0 && k < s.nVocab {
		c = s.selectTopK(logits, k, pen)
	} else {
		c, norm = s.collectAll(logits, pen)
	}
	if len(c) == 0 {
		s.last = c
		return -1
	}
	if c[0].Logit == posInf {
		// +Inf dominates everything: keep exactly the +Inf tokens, equally likely.
		n := 1
		for n < len(c) && c[n].Logit == posInf {
			n++
		}
		c = c[:n]
		for i := range c {
			c[i].Logit = 0
		}
		norm = 0
	}

	minKeep := max(s.p.MinKeep, 1)
	m := len(c)
	if s.p.TopP < 1 {
		maxL := c[0].Logit
		if norm == 0 {
			for i := range c {
				norm += math.Exp(float64(c[i].Logit - maxL))
			}
		}
		cum := 0.0
		for i := range c {
			cum += math.Exp(float64(c[i].Logit-maxL)) / norm
			if cum >= float64(s.p.TopP) && i+1 >= minKeep {
				m = i + 1
				break
			}
		}
	}
	if s.p.MinP > 0 {
		thr := c[0].Logit + float32(math.Log(float64(s.p.MinP)))
		i := 1
		for ; i < m; i++ {
			if c[i].Logit < thr && i >= minKeep {
				break
			}
		}
		m = i
	}
	c = c[:m]

	// temperature, then softmax and inverse-CDF draw
	inv := s.p.Temp
	for i := range c {
		c[i].Logit /= inv
	}
	maxL := c[0].Logit
	sum := 0.0
	for i := range c {
		p := math.Exp(float64(c[i].Logit - maxL))
		c[i].P = float32(p)
		sum += p
	}
	target := s.rng.Float64() * sum
	sel := len(c) - 1 // rounding guard: fall back to the last candidate
	run := 0.0
	for i := range c {
		run += float64(c[i].P)
		if run >= target {
			sel = i
			break
		}
	}
	for i := range c {
		c[i].P = float32(float64(c[i].P) / sum)
	}
	s.last = c
	return c[sel].ID
}

// better reports whether (va, ia) ranks before (vb, ib): larger logit,
// then lower id.
func better(va float32, ia int32, vb float32, ib int32) bool {
	return va > vb || (va == vb && ia < ib)
}

// greedy returns the argmax of the penalized logits, lowest id on ties.
func (s *Sampler) greedy(logits []float32, pen bool) int32 {
	best := int32(-1)
	bv := negInf
	if pen {
		for _, id := range s.distinct {
			v := s.penalize(logits[id], s.counts[id])
			if v > negInf && (best < 0 || better(v, id, bv, best)) {
				best, bv = id, v
			}
		}
	}
	b := bitsOf(logits)
	g := newGate(bv)
	for i, n := 0, len(logits); i < n; {
		i = g.advance(b, i)
		end := min(i+chunk, n)
		for ; i < end; i++ {
			v := logits[i]
			if v > bv || (v == bv && v > negInf && int32(i) < best) {
				if pen && s.counts[i] > 0 {
					continue
				}
				best, bv = int32(i), v
				g = newGate(bv)
			}
		}
	}
	s.last = s.cand[:0]
	if best >= 0 {
		s.last = append(s.last, Candidate{ID: best, Logit: bv, P: 1})
	}
	return best
}

// heap helpers: h is a min-heap under "worse" (root = worst kept).
func worse(a, b *Candidate) bool {
	return a.Logit < b.Logit || (a.Logit == b.Logit && a.ID > b.ID)
}

func siftUp(h []Candidate, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(&h[i], &h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []Candidate, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		w := l
		if r := l + 1; r < n && worse(&h[r], &h[l]) {
			w = r
		}
		if !worse(&h[w], &h[i]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// offer inserts (id, v) into the bounded heap h of capacity k.
func offer(h []Candidate, k int, id int32, v float32) []Candidate {
	if len(h) < k {
		h = append(h, Candidate{ID: id, Logit: v})
		siftUp(h, len(h)-1)
		return h
	}
	if better(v, id, h[0].Logit, h[0].ID) {
		h[0] = Candidate{ID: id, Logit: v}
		siftDown(h, 0)
	}
	return h
}

// topK selects the k best (logit desc, id asc) entries of logits that are
// neither NaN nor -Inf into buf[:0] and returns them sorted. If pen, the
// tokens in the penalty window take their penalized logits.
func (s *Sampler) topK(buf []Candidate, logits []float32, k int, pen bool) []Candidate {
	h := buf[:0]
	if pen {
		for _, id := range s.distinct {
			if v := s.penalize(logits[id], s.counts[id]); v > negInf {
				h = offer(h, k, id, v)
			}
		}
	}
	i := 0
	for ; i < len(logits) && len(h) < k; i++ {
		v := logits[i]
		if !(v > negInf) || (pen && s.counts[i] > 0) {
			continue
		}
		h = offer(h, k, int32(i), v)
	}
	if len(h) == k && i < len(logits) {
		thr, rootID := h[0].Logit, h[0].ID
		g := newGate(thr)
		b := bitsOf(logits)
		for n := len(logits); i < n; {
			// hot path: skip chunks that hold nothing that beats the k-th best.
			i = g.advance(b, i)
			end := min(i+chunk, n)
			for ; i < end; i++ {
				v := logits[i]
				if !(v >= thr) { // NaN fails too
					continue
				}
				id := int32(i)
				if (v == thr && id > rootID) || (pen && s.counts[id] > 0) {
					continue
				}
				h[0] = Candidate{ID: id, Logit: v}
				siftDown(h, 0)
				thr, rootID = h[0].Logit, h[0].ID
				g = newGate(thr)
			}
		}
	}
	slices.SortFunc(h, cmpCand)
	return h
}

func cmpCand(a, b Candidate) int {
	switch {
	case better(a.Logit, a.ID, b.Logit, b.ID):
		return -1
	case better(b.Logit, b.ID, a.Logit, a.ID):
		return 1
	}
	return 0
}

func (s *Sampler) selectTopK(logits []float32, k int, pen bool) []Candidate {
	return s.topK(s.cand, logits, k, pen)
}

// collectAll is the path without top-k: every NaN/-Inf-free token is a
// candidate. It returns the candidates sorted in descending order and the
// top-p normalizer over all of them (0 if not computed). When min-p is on,
// tokens below the min-p cut are dropped before sorting: top-p and min-p
// both keep a prefix of the sorted order, so the chain's result is the
// shorter prefix and dropping them early changes nothing.
func (s *Sampler) collectAll(logits []float32, pen bool) ([]Candidate, float64) {
	c := s.cand[:0]
	maxL := negInf
	for i, v := range logits {
		if pen && s.counts[i] > 0 {
			v = s.penalize(v, s.counts[i])
		}
		if !(v > negInf) {
			continue
		}
		c = append(c, Candidate{ID: int32(i), Logit: v})
		maxL = max(maxL, v)
	}
	if len(c) == 0 || maxL == posInf {
		slices.SortFunc(c, cmpCand)
		return c, 0
	}
	var norm float64
	if s.p.TopP < 1 {
		for i := range c {
			norm += math.Exp(float64(c[i].Logit - maxL))
		}
	}
	if s.p.MinP > 0 {
		thr := maxL + float32(math.Log(float64(s.p.MinP)))
		f := c[:0]
		n := 0
		for _, x := range c {
			if x.Logit >= thr {
				n++
			}
		}
		if n >= max(s.p.MinKeep, 1) {
			for _, x := range c {
				if x.Logit >= thr {
					f = append(f, x)
				}
			}
			c = f
		}
	}
	slices.SortFunc(c, cmpCand)
	return c, norm
}
