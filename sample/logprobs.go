package sample

import (
	"fmt"
	"math"
)

// TokenLogprob is a token id with its log-probability.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// Logprobs computes the log-softmax of the raw logits (before penalties,
// filters and temperature, as llama.cpp's server reports by default) and
// returns the log-probability of token id (ignored and returned as NaN if
// id < 0) and the n most likely tokens in descending order (ties: lower id
// first). NaN logits count as -Inf. If some logits are +Inf, those tokens
// share the probability equally and all others get -Inf.
//
// It costs one exp per vocabulary entry, so call it only when logprobs are
// requested. The returned slice is reused by the next call; after the
// first call with a given n it does not allocate.
func (s *Sampler) Logprobs(logits []float32, id int32, n int) (float32, []TokenLogprob) {
	if len(logits) != s.nVocab {
		panic(fmt.Sprintf("sample: %d logits for a vocabulary of %d", len(logits), s.nVocab))
	}
	n = min(max(n, 0), s.nVocab)
	if cap(s.lp) < n {
		s.lp = make([]Candidate, 0, n)
		s.lpo = make([]TokenLogprob, 0, n)
	}
	var top []Candidate
	if n > 0 {
		top = s.topK(s.lp, logits, n, false)
	}

	// log-sum-exp over all entries
	maxL := negInf
	nInf := 0
	for _, v := range logits {
		if v > maxL {
			maxL = v
		}
		if v == posInf {
			nInf++
		}
	}
	var ls logSoftmax
	switch {
	case nInf > 0:
		ls.inf = true
		ls.lse = math.Log(float64(nInf))
	case maxL > negInf:
		sum := 0.0
		m := float64(maxL)
		for _, v := range logits {
			// exp(-746) underflows float64: skip the call for those (and -Inf, NaN).
			if d := float64(v) - m; d > -746 {
				sum += math.Exp(d)
			}
		}
		ls.ok = true
		ls.lse = m + math.Log(sum)
	}

	out := s.lpo[:0]
	for _, c := range top {
		out = append(out, TokenLogprob{ID: c.ID, Logprob: ls.of(c.Logit)})
	}
	s.lpo = out
	chosen := float32(math.NaN())
	if id >= 0 {
		if int(id) >= s.nVocab {
			panic(fmt.Sprintf("sample: Logprobs id %d outside vocabulary of %d", id, s.nVocab))
		}
		chosen = ls.of(logits[id])
	}
	return chosen, out
}

// TopLogprobs returns the n most likely tokens under the log-softmax of the
// raw logits; see Logprobs.
func (s *Sampler) TopLogprobs(logits []float32, n int) []TokenLogprob {
	_, top := s.Logprobs(logits, -1, n)
	return top
}

// logSoftmax maps a raw logit to its log-probability.
type logSoftmax struct {
	ok  bool    // finite maximum: log p = v - lse
	inf bool    // some +Inf logits: log p = -lse for them (lse = ln count)
	lse float64 // log-sum-exp, or ln(#+Inf)
}

func (ls *logSoftmax) of(v float32) float32 {
	switch {
	case ls.inf:
		if v == posInf {
			return float32(-ls.lse)
		}
	case ls.ok:
		if v > negInf {
			return float32(float64(v) - ls.lse)
		}
	}
	return negInf
}
