// Package prune removes routed experts from MoE models (REAP, DESIGN §7): it measures each
// expert's saliency on a calibration corpus, scores and ranks the experts of every layer,
// and writes a real GGUF holding only the kept experts, plus the keep-map that trace replay
// reads.
package prune

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
)

// Saliency is what a calibration run accumulates per layer and expert over the tokens
// routed to it: the hit count, and the sum and sum of squares of g·‖y‖₂ (g the token's
// normalized router weight for the expert, y the expert's unweighted output).
type Saliency struct {
	Model   string        `json:"model"`
	NLayer  int           `json:"n_layer"`
	NExpert int           `json:"n_expert"`
	K       int           `json:"k"`
	Tokens  int64         `json:"tokens"`
	Sources []SourceCount `json:"sources,omitempty"`
	Count   [][]int64     `json:"count"`
	Sum     [][]float64   `json:"sum"`
	SumSq   [][]float64   `json:"sum_sq"`
}

// SourceCount is how many calibration tokens came from one source.
type SourceCount struct {
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
}

// NewSaliency makes empty accumulators.
func NewSaliency(nLayer, nExpert, k int) *Saliency {
	s := &Saliency{NLayer: nLayer, NExpert: nExpert, K: k}
	for l := 0; l < nLayer; l++ {
		s.Count = append(s.Count, make([]int64, nExpert))
		s.Sum = append(s.Sum, make([]float64, nExpert))
		s.SumSq = append(s.SumSq, make([]float64, nExpert))
	}
	return s
}

// Routed implements model.RouteObserver (the routing itself is seen through ExpertOutput).
func (s *Saliency) Routed(layer, pos int, logits []float32, chosen []int32, weights []float32) {}

// ExpertOutput implements model.ExpertObserver: it adds g·‖y‖₂ for one routed token.
func (s *Saliency) ExpertOutput(layer, expert, token int, weight float32, out []float32) {
	var n float64
	for _, v := range out {
		n += float64(v) * float64(v)
	}
	x := float64(weight) * math.Sqrt(n)
	s.Count[layer][expert]++
	s.Sum[layer][expert] += x
	s.SumSq[layer][expert] += x * x
}

// Write saves the accumulators as JSON.
func (s *Saliency) Write(path string) error {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadSaliency reads a saliency file and checks its shape.
func ReadSaliency(path string) (*Saliency, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Saliency
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.NLayer <= 0 || s.NExpert <= 0 || len(s.Count) != s.NLayer || len(s.Sum) != s.NLayer || len(s.SumSq) != s.NLayer {
		return nil, fmt.Errorf("%s: saliency of %d layers × %d experts has %d/%d/%d layers of counts/sums/squares", path, s.NLayer, s.NExpert, len(s.Count), len(s.Sum), len(s.SumSq))
	}
	for l := 0; l < s.NLayer; l++ {
		if len(s.Count[l]) != s.NExpert || len(s.Sum[l]) != s.NExpert || len(s.SumSq[l]) != s.NExpert {
			return nil, fmt.Errorf("%s: layer %d does not have %d experts", path, l, s.NExpert)
		}
		for e, c := range s.Count[l] {
			if c < 0 || s.Sum[l][e] < 0 || s.SumSq[l][e] < 0 || (c == 0 && s.Sum[l][e] != 0) {
				return nil, fmt.Errorf("%s: layer %d expert %d: count %d, sum %v, sum of squares %v", path, l, e, c, s.Sum[l][e], s.SumSq[l][e])
			}
		}
	}
	return &s, nil
}

// Score names.
const (
	ScoreL2Sum  = "l2_sum"
	ScoreShrink = "shrink"
	ScoreHybrid = "hybrid"
)

// DefaultPriorM is the shrink score's prior strength m in hits: an expert hit c times keeps
// the fraction c/(c+m) of its lower bound, so an expert seen a handful of times cannot
// outrank one measured over thousands of tokens on a lucky mean (at gomoe's calibration
// size, an expert averages thousands of hits and m = 16 matters only for the rare ones).
const DefaultPriorM = 16

// Scores computes one score per layer and expert (higher: more salient):
//
//   - l2_sum: Σ g·‖y‖ (frequency × magnitude);
//   - shrink: (c/(c+m))·max(0, mean − SE), the zero-prior damped lower confidence bound of
//     the mean g·‖y‖, with SE = sample standard deviation/√c for c ≥ 2, SE = mean for c = 1
//     (one hit says nothing about the spread: the bound is 0) and exactly 0 for c = 0;
//   - hybrid: 0.5·percentile(l2_sum) + 0.5·percentile(shrink), rank percentiles within the
//     layer (ties share their average rank), in [0, 1], so one outlier cannot squash the rest.
func (s *Saliency) Scores(name string, m float64) ([][]float64, error) {
	out := make([][]float64, s.NLayer)
	for l := 0; l < s.NLayer; l++ {
		l2, sh := make([]float64, s.NExpert), make([]float64, s.NExpert)
		for e := 0; e < s.NExpert; e++ {
			c := float64(s.Count[l][e])
			l2[e] = s.Sum[l][e]
			if c == 0 {
				continue
			}
			mean := s.Sum[l][e] / c
			se := mean
			if c >= 2 {
				v := (s.SumSq[l][e] - c*mean*mean) / (c - 1)
				se = math.Sqrt(max(v, 0) / c)
			}
			sh[e] = c / (c + m) * max(0, mean-se)
		}
		switch name {
		case ScoreL2Sum:
			out[l] = l2
		case ScoreShrink:
			out[l] = sh
		case ScoreHybrid:
			pl, ps := percentiles(l2), percentiles(sh)
			out[l] = make([]float64, s.NExpert)
			for e := range out[l] {
				out[l][e] = 0.5*pl[e] + 0.5*ps[e]
			}
		default:
			return nil, fmt.Errorf("prune: unknown score %q (l2_sum, shrink, hybrid)", name)
		}
	}
	return out, nil
}

// percentiles are rank percentiles: (average rank of the value's ties − 1)/(n − 1), rank 1
// the smallest.
func percentiles(x []float64) []float64 {
	n := len(x)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	p := make([]float64, n)
	if n == 1 {
		return p
	}
	for i := 0; i < n; {
		j := i
		for j+1 < n && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		r := float64(i+j) / 2 // average 0-based rank
		for k := i; k <= j; k++ {
			p[idx[k]] = r / float64(n-1)
		}
		i = j + 1
	}
	return p
}

// Select keeps the keep experts of every layer with the highest scores, returned in
// ascending id order. Ties go to the expert hit more often, then the larger l2_sum, then the
// lowest id. It fails if a zero-hit expert would be kept over an expert that was hit.
func (s *Saliency) Select(scores [][]float64, keep int) ([][]int, error) {
	if keep <= 0 || keep > s.NExpert {
		return nil, fmt.Errorf("prune: keep %d of %d experts", keep, s.NExpert)
	}
	out := make([][]int, s.NLayer)
	for l := 0; l < s.NLayer; l++ {
		idx := make([]int, s.NExpert)
		for i := range idx {
			idx[i] = i
		}
		sc, cnt, l2 := scores[l], s.Count[l], s.Sum[l]
		sort.SliceStable(idx, func(a, b int) bool {
			i, j := idx[a], idx[b]
			if sc[i] != sc[j] {
				return sc[i] > sc[j]
			}
			if (cnt[i] > 0) != (cnt[j] > 0) {
				return cnt[i] > 0
			}
			if l2[i] != l2[j] {
				return l2[i] > l2[j]
			}
			return i < j
		})
		kept := append([]int(nil), idx[:keep]...)
		if err := checkZeroHit(l, kept, idx[keep:], cnt); err != nil {
			return nil, err
		}
		sort.Ints(kept)
		out[l] = kept
	}
	return out, nil
}

// checkZeroHit is the fail-closed assertion: no kept expert with 0 hits while a dropped one
// was hit.
func checkZeroHit(layer int, kept, dropped []int, cnt []int64) error {
	for _, k := range kept {
		if cnt[k] != 0 {
			continue
		}
		for _, d := range dropped {
			if cnt[d] > 0 {
				return fmt.Errorf("prune: layer %d would keep zero-hit expert %d over expert %d (hit %d times)", layer, k, d, cnt[d])
			}
		}
	}
	return nil
}
