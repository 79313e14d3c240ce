// Package eval measures what a lossy option costs in model quality (DESIGN §8): a test
// model (pruned, quantized, cache-aware routing) against a reference, teacher-forced over a
// corpus, by the full-vocabulary KL divergence KL(p_ref ‖ p_test) per position, top-1
// agreement and the NLL of the actual next token under each, with bootstrap confidence
// intervals.
package eval

import "math"

// LogSoftmax writes log softmax(z) into dst in float64: z_i − max z − log Σ exp(z_j − max z).
// It returns the index of the largest logit (ties: the lowest index). Logits of −Inf give
// −Inf; the row must hold at least one finite value.
func LogSoftmax(dst []float64, z []float32) int {
	arg := 0
	m := math.Inf(-1)
	for i, v := range z {
		if float64(v) > m {
			m, arg = float64(v), i
		}
	}
	var s float64
	for i, v := range z {
		d := float64(v) - m
		dst[i] = d
		s += math.Exp(d)
	}
	ls := math.Log(s)
	for i := range dst[:len(z)] {
		dst[i] -= ls
	}
	return arg
}

// KL is KL(p ‖ q) = Σ p_i (log p_i − log q_i) for log-probabilities lp and lq, in float64.
// Terms with p_i = 0 count 0; a p_i > 0 where q_i = 0 gives +Inf.
func KL(lp, lq []float64) float64 {
	var s float64
	for i, a := range lp {
		if math.IsInf(a, -1) {
			continue
		}
		p := math.Exp(a)
		if p == 0 {
			continue
		}
		s += p * (a - lq[i])
	}
	if s < 0 { // rounding when p ≈ q; KL is never negative
		s = 0
	}
	return s
}

// Position is the comparison at one position: the distributions over the next token.
type Position struct {
	KL      float64 // KL(p_ref ‖ p_test), nats
	Agree   bool    // the argmaxes are equal
	NLLRef  float64 // −log p_ref(actual next token)
	NLLTest float64 // −log p_test(actual next token)
	RefTop  int32   // argmax of the reference
	TestTop int32   // argmax of the test
	NextTok int32   // the actual next token
}

// Comparer compares logit rows; it reuses its float64 scratch.
type Comparer struct {
	lp, lq []float64
}

// Compare compares one position's reference and test logits (same vocabulary) given the
// actual next token.
func (c *Comparer) Compare(ref, test []float32, next int32) Position {
	if len(c.lp) < len(ref) {
		c.lp, c.lq = make([]float64, len(ref)), make([]float64, len(ref))
	}
	lp, lq := c.lp[:len(ref)], c.lq[:len(test)]
	a := LogSoftmax(lp, ref)
	b := LogSoftmax(lq, test)
	return Position{KL: KL(lp, lq), Agree: a == b, NLLRef: -lp[next], NLLTest: -lq[next],
		RefTop: int32(a), TestTop: int32(b), NextTok: next}
}
