package trace

import (
	"math"
	"math/rand/v2"
	"slices"
)

// synth builds a trace of random routing with locality: each layer's experts have a Zipf-like
// popularity and a slowly drifting topic bias, so that caches have something to find.
// chunks lists the chunks' token counts (more than one: prompt, one: decode).
func synth(nLayer, nExpert, k, topN int, chunks []int, seed uint64) *Trace {
	r := rand.New(rand.NewPCG(seed, 99))
	t := &Trace{Header: Header{NLayer: nLayer, NExpert: nExpert, K: k, TopN: topN, Name: "synthetic"}}
	for l := 0; l < nLayer; l++ {
		t.ExpertBytes = append(t.ExpertBytes, int64(1000+l%3))
	}
	t.Requests = []Request{{}}
	pos := 0
	for _, n := range chunks {
		kind := Prompt
		if n == 1 {
			kind = Decode
		}
		t.Chunks = append(t.Chunks, Chunk{Kind: kind, Pos: pos, Start: pos, Tokens: n})
		pos += n
	}
	t.Tokens = pos
	type cz struct {
		z  float32
		id uint16
	}
	row := make([]cz, nExpert)
	pop := make([]float32, nExpert)
	topic := make([]float32, nExpert)
	for l := 0; l < nLayer; l++ {
		perm := r.Perm(nExpert)
		for i, e := range perm {
			pop[e] = float32(-math.Log(float64(i + 1)))
		}
		for e := range topic {
			topic[e] = float32(r.NormFloat64())
		}
		cand := make([]uint16, t.Tokens*topN)
		logit := make([]float32, t.Tokens*topN)
		chosen := make([]uint16, t.Tokens*k)
		for tok := 0; tok < t.Tokens; tok++ {
			if tok%16 == 0 { // the topic drifts
				e := r.IntN(nExpert)
				topic[e] = float32(r.NormFloat64()) * 1.5
			}
			for e := range row {
				row[e] = cz{pop[e] + topic[e] + float32(r.NormFloat64()), uint16(e)}
			}
			slices.SortFunc(row, func(a, b cz) int {
				if a.z != b.z {
					if a.z > b.z {
						return -1
					}
					return 1
				}
				return int(a.id) - int(b.id)
			})
			for j := 0; j < topN; j++ {
				cand[tok*topN+j], logit[tok*topN+j] = row[j].id, row[j].z
			}
			for j := 0; j < k; j++ {
				chosen[tok*k+j] = row[j].id
			}
		}
		t.Cand = append(t.Cand, cand)
		t.Logit = append(t.Logit, logit)
		t.Chosen = append(t.Chosen, chosen)
	}
	return t
}

// handTrace is a one-layer trace of decode steps: token i's candidates are cands[i] (in
// rank order, logits descending from 0 in steps of 1 unless given) and it chooses the first k.
func handTrace(nExpert, k int, cands [][]int, logits [][]float32, chunks []int) *Trace {
	topN := len(cands[0])
	t := &Trace{Header: Header{NLayer: 1, NExpert: nExpert, K: k, TopN: topN, ExpertBytes: []int64{100}}}
	t.Requests = []Request{{}}
	if chunks == nil {
		for range cands {
			chunks = append(chunks, 1)
		}
	}
	pos := 0
	for _, n := range chunks {
		kind := Decode
		if n > 1 {
			kind = Prompt
		}
		t.Chunks = append(t.Chunks, Chunk{Kind: kind, Pos: pos, Start: pos, Tokens: n})
		pos += n
	}
	if pos != len(cands) {
		panic("chunks do not cover the tokens")
	}
	t.Tokens = pos
	t.Cand, t.Logit, t.Chosen = make([][]uint16, 1), make([][]float32, 1), make([][]uint16, 1)
	for i, c := range cands {
		for j, e := range c {
			t.Cand[0] = append(t.Cand[0], uint16(e))
			z := float32(-j)
			if logits != nil {
				z = logits[i][j]
			}
			t.Logit[0] = append(t.Logit[0], z)
			if j < k {
				t.Chosen[0] = append(t.Chosen[0], uint16(e))
			}
		}
	}
	return t
}

// seqTrace is handTrace for k = 1 with candidates e, then the others in id order.
func seqTrace(nExpert int, seq []int) *Trace {
	var cands [][]int
	for _, e := range seq {
		c := []int{e}
		for o := 0; o < nExpert; o++ {
			if o != e {
				c = append(c, o)
			}
		}
		cands = append(cands, c)
	}
	return handTrace(nExpert, 1, cands, nil, nil)
}
