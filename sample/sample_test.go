package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// off returns params with every filter and penalty disabled, temp 1.
func off() Params {
	return Params{Temp: 1, TopK: 0, TopP: 1, MinP: 0, PenaltyLastN: 64, RepeatPenalty: 1, Seed: 1}
}

// logitsFromProbs returns ln(p) for each p (0 → -Inf).
func logitsFromProbs(p ...float64) []float32 {
	l := make([]float32, len(p))
	for i, x := range p {
		l[i] = float32(math.Log(x))
	}
	return l
}

func ids(c []Candidate) []int32 {
	out := make([]int32, len(c))
	for i, x := range c {
		out[i] = x.ID
	}
	return out
}

func sortedIDs(c []Candidate) []int32 {
	out := ids(c)
	slices.Sort(out)
	return out
}

func randLogits(r *rand.Rand, n int, scale float64) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64() * scale)
	}
	return l
}

func TestDefaultParams(t *testing.T) {
	p := DefaultParams()
	want := Params{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, MinKeep: 0,
		PenaltyLastN: 64, RepeatPenalty: 1, FrequencyPenalty: 0, PresencePenalty: 0, Seed: SeedRandom}
	if p != want {
		t.Fatalf("DefaultParams = %+v, want %+v", p, want)
	}
}

func TestGreedyArgmaxTiesLowestID(t *testing.T) {
	p := DefaultParams()
	p.Temp = 0
	s := New(p, 6)
	cases := []struct {
		l    []float32
		want int32
	}{
		{[]float32{1, 5, 3, 5, 2, 0}, 1},
		{[]float32{9, 9, 9, 9, 9, 9}, 0},
		{[]float32{-3, -1, -2, -1, -5, -1}, 1},
		{[]float32{0, 0, 0, 0, 0, 7}, 5},
	}
	for _, c := range cases {
		if got := s.Sample(c.l); got != c.want {
			t.Errorf("greedy(%v) = %d, want %d", c.l, got, c.want)
		}
	}
	// A penalized token that ties a lower id after penalties loses the tie;
	// one with a lower id than the other tied token wins it.
	p.RepeatPenalty = 2
	s = New(p, 4)
	s.Accept(3) // 10 -> 5, ties id 1
	if got := s.Sample([]float32{0, 5, 1, 10}); got != 1 {
		t.Errorf("tie with penalized higher id: got %d, want 1", got)
	}
	s.Reset()
	s.Accept(0) // 10 -> 5, ties id 2
	if got := s.Sample([]float32{10, 1, 5, 1}); got != 0 {
		t.Errorf("tie with penalized lower id: got %d, want 0", got)
	}
}

func TestTopK1EqualsGreedy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	pg := DefaultParams()
	pg.Temp = 0
	pk := DefaultParams()
	pk.TopK = 1
	pk.Seed = 3
	g, k := New(pg, 1000), New(pk, 1000)
	for trial := range 200 {
		l := randLogits(r, 1000, 2)
		if trial%3 == 0 { // force ties at the maximum
			m := slices.Max(l)
			l[r.IntN(1000)] = m
			l[r.IntN(1000)] = m
		}
		if a, b := g.Sample(l), k.Sample(l); a != b {
			t.Fatalf("trial %d: greedy %d, top_k=1 %d", trial, a, b)
		}
	}
}

func TestTopPKeepsExpectedSet(t *testing.T) {
	// probabilities 0.5, 0.25, 0.15, 0.1 on ids 2, 0, 3, 1
	l := logitsFromProbs(0.25, 0.1, 0.5, 0.15)
	// want[j] is the kept set (descending) for top_k = topKs[j]; top-p
	// renormalizes over the top-k survivors: with top_k=3 the masses are
	// 0.5/0.9, 0.25/0.9, 0.15/0.9 (cumulative 0.556, 0.833, 1); with
	// top_k=2 they are 2/3, 1/3.
	topKs := []int{0, 40, 3, 2}
	cases := []struct {
		topP float32
		want [4][]int32
	}{
		{0.3, [4][]int32{{2}, {2}, {2}, {2}}},
		{0.5 - 1e-4, [4][]int32{{2}, {2}, {2}, {2}}},
		{0.6, [4][]int32{{2, 0}, {2, 0}, {2, 0}, {2}}},
		{0.7, [4][]int32{{2, 0}, {2, 0}, {2, 0}, {2, 0}}},
		{0.8, [4][]int32{{2, 0, 3}, {2, 0, 3}, {2, 0}, {2, 0}}},
		{0.85, [4][]int32{{2, 0, 3}, {2, 0, 3}, {2, 0, 3}, {2, 0}}},
		{0.95, [4][]int32{{2, 0, 3, 1}, {2, 0, 3, 1}, {2, 0, 3}, {2, 0}}},
	}
	for j, topK := range topKs {
		for _, c := range cases {
			p := off()
			p.TopK = topK
			p.TopP = c.topP
			s := New(p, len(l))
			s.Sample(l)
			if got := ids(s.Candidates()); !slices.Equal(got, c.want[j]) {
				t.Errorf("top_k=%d top_p=%v: kept %v, want %v", topK, c.topP, got, c.want[j])
			}
		}
	}
	// min_keep forces more candidates.
	p := off()
	p.TopP = 0.3
	p.MinKeep = 3
	s := New(p, len(l))
	s.Sample(l)
	if got := ids(s.Candidates()); !slices.Equal(got, []int32{2, 0, 3}) {
		t.Errorf("top_p=0.3 min_keep=3: kept %v", got)
	}
}

func TestMinPKeepsExpectedSet(t *testing.T) {
	// p = 0.4, 0.3, 0.2, 0.06, 0.04 on ids 4, 1, 0, 2, 3
	l := logitsFromProbs(0.2, 0.3, 0.06, 0.04, 0.4)
	cases := []struct {
		minP float32
		want []int32
	}{
		{0.05, []int32{4, 1, 0, 2, 3}}, // cut 0.02
		{0.12, []int32{4, 1, 0, 2}},    // cut 0.048: drops 0.04
		{0.2, []int32{4, 1, 0}},        // cut 0.08
		{0.6, []int32{4, 1}},           // cut 0.24
		{0.9, []int32{4}},              // cut 0.36
	}
	for _, topK := range []int{0, 4, 40} {
		for _, c := range cases {
			p := off()
			p.TopK = topK
			p.MinP = c.minP
			s := New(p, len(l))
			s.Sample(l)
			want := c.want
			if len(want) > 4 && topK == 4 {
				want = want[:4]
			}
			if got := ids(s.Candidates()); !slices.Equal(got, want) {
				t.Errorf("top_k=%d min_p=%v: kept %v, want %v", topK, c.minP, got, want)
			}
		}
	}
	p := off()
	p.MinP = 0.9
	p.MinKeep = 2
	s := New(p, len(l))
	s.Sample(l)
	if got := ids(s.Candidates()); !slices.Equal(got, []int32{4, 1}) {
		t.Errorf("min_p=0.9 min_keep=2: kept %v", got)
	}
	// top_p and min_p together: the shorter prefix wins.
	p = off()
	p.TopP = 0.8 // {4,1,0}
	p.MinP = 0.6 // {4,1}
	s = New(p, len(l))
	s.Sample(l)
	if got := ids(s.Candidates()); !slices.Equal(got, []int32{4, 1}) {
		t.Errorf("top_p=0.8 min_p=0.6: kept %v", got)
	}
}

func TestTemperatureAnalyticSoftmax(t *testing.T) {
	l := []float32{1, 2, 3, 0.5, -1}
	for _, temp := range []float32{0.25, 0.5, 1, 2, 10} {
		p := off()
		p.Temp = temp
		s := New(p, len(l))
		s.Sample(l)
		c := s.Candidates()
		if len(c) != len(l) {
			t.Fatalf("temp %v: %d candidates", temp, len(c))
		}
		var z float64
		for _, x := range l {
			z += math.Exp(float64(x) / float64(temp))
		}
		for _, x := range c {
			want := math.Exp(float64(l[x.ID])/float64(temp)) / z
			if math.Abs(float64(x.P)-want) > 1e-6 {
				t.Errorf("temp %v id %d: p = %v, want %v", temp, x.ID, x.P, want)
			}
			if wl := l[x.ID] / temp; x.Logit != wl {
				t.Errorf("temp %v id %d: logit %v, want %v", temp, x.ID, x.Logit, wl)
			}
		}
	}
}

// binomialCheck fails if count deviates from n*p by more than 5 standard
// deviations (probability of a false failure < 1e-6 per check).
func binomialCheck(t *testing.T, what string, count, n int, p float64) {
	t.Helper()
	mean := float64(n) * p
	sd := math.Sqrt(float64(n) * p * (1 - p))
	if math.Abs(float64(count)-mean) > 5*sd {
		t.Errorf("%s: %d of %d, want %.0f ± %.0f (5 sd)", what, count, n, mean, 5*sd)
	}
}

func TestEmpiricalFrequencies(t *testing.T) {
	probs := []float64{0.1, 0.2, 0.3, 0.4}
	l := logitsFromProbs(probs...)
	p := off()
	p.Seed = 12345
	const n = 200000
	s := New(p, len(l))
	counts := make([]int, len(l))
	seq := make([]int32, n)
	for i := range n {
		id := s.Sample(l)
		seq[i] = id
		counts[id]++
	}
	for id, pr := range probs {
		binomialCheck(t, "token "+string(rune('0'+id)), counts[id], n, pr)
	}

	// temperature 2 flattens: p ∝ sqrt(probs)
	p.Temp = 2
	s2 := New(p, len(l))
	var z float64
	for _, x := range probs {
		z += math.Sqrt(x)
	}
	c2 := make([]int, len(l))
	for range n {
		c2[s2.Sample(l)]++
	}
	for id, pr := range probs {
		binomialCheck(t, "temp 2 token "+string(rune('0'+id)), c2[id], n, math.Sqrt(pr)/z)
	}

	// same seed → same sequence; Reset → same sequence; other seed differs.
	p.Temp = 1
	again := New(p, len(l))
	for i := range 1000 {
		if got := again.Sample(l); got != seq[i] {
			t.Fatalf("same seed diverged at %d: %d vs %d", i, got, seq[i])
		}
	}
	again.Reset()
	for i := range 1000 {
		if got := again.Sample(l); got != seq[i] {
			t.Fatalf("after Reset diverged at %d: %d vs %d", i, got, seq[i])
		}
	}
	p.Seed = 54321
	other := New(p, len(l))
	same := 0
	for i := range 1000 {
		if other.Sample(l) == seq[i] {
			same++
		}
	}
	if same == 1000 {
		t.Fatal("different seeds produced the same 1000 tokens")
	}
	if other.Seed() != 54321 {
		t.Fatalf("Seed() = %d", other.Seed())
	}
}

func TestPenaltiesFormula(t *testing.T) {
	const n = 8
	l := []float32{2, -1.5, 3, 0, -4, 1.25, 0.5, -0.5}
	p := off()
	p.PenaltyLastN = 5
	p.RepeatPenalty = 1.3
	p.FrequencyPenalty = 0.25
	p.PresencePenalty = 0.5
	s := New(p, n)
	// history (oldest first); window of 5 keeps the last 5: 1 2 2 3 1
	for _, id := range []int32{5, 6, 1, 2, 2, 3, 1} {
		s.Accept(id)
	}
	count := map[int32]int{1: 2, 2: 2, 3: 1}
	s.Sample(l)
	got := map[int32]float32{}
	for _, c := range s.Candidates() {
		got[c.ID] = c.Logit
	}
	if len(got) != n {
		t.Fatalf("%d candidates, want %d", len(got), n)
	}
	for id := range int32(n) {
		want := l[id]
		if c := count[id]; c > 0 {
			if want <= 0 {
				want *= p.RepeatPenalty
			} else {
				want /= p.RepeatPenalty
			}
			want -= float32(float32(c)*p.FrequencyPenalty) + p.PresencePenalty
		}
		if got[id] != want {
			t.Errorf("id %d: logit %v, want %v (count %d)", id, got[id], want, count[id])
		}
	}
	// closed-form spot checks
	if g := got[2]; math.Abs(float64(g)-(3/1.3-0.5-0.5)) > 1e-6 {
		t.Errorf("id 2 = %v", g)
	}
	if g := got[1]; math.Abs(float64(g)-(-1.5*1.3-0.5-0.5)) > 1e-6 {
		t.Errorf("id 1 = %v", g)
	}
	if g := got[3]; math.Abs(float64(g)-(-0.25-0.5)) > 1e-6 { // 0 * 1.3 = 0
		t.Errorf("id 3 = %v", g)
	}
	if got[5] != l[5] || got[6] != l[6] {
		t.Errorf("tokens 5, 6 left the window but were penalized: %v %v", got[5], got[6])
	}

	// unbounded window keeps everything
	p.PenaltyLastN = -1
	s = New(p, n)
	for _, id := range []int32{5, 6, 1, 2, 2, 3, 1} {
		s.Accept(id)
	}
	s.Sample(l)
	for _, c := range s.Candidates() {
		if c.ID == 5 {
			want := l[5]/1.3 - 0.75
			if math.Abs(float64(c.Logit-want)) > 1e-6 {
				t.Errorf("unbounded: id 5 = %v, want %v", c.Logit, want)
			}
		}
	}
	// last_n = 0 disables
	p.PenaltyLastN = 0
	s = New(p, n)
	s.Accept(2)
	s.Sample(l)
	for _, c := range s.Candidates() {
		if c.Logit != l[c.ID] {
			t.Errorf("last_n=0: id %d changed to %v", c.ID, c.Logit)
		}
	}
}

// TestPenaltiesWithTopK checks that the heap path sees penalized values:
// a penalized leader drops out, a negatively penalized (boosted) token
// enters.
func TestPenaltiesWithTopK(t *testing.T) {
	l := []float32{5, 4, 3, 2, 1, 0}
	p := off()
	p.TopK = 2
	p.RepeatPenalty = 10 // 5 -> 0.5
	s := New(p, len(l))
	s.Accept(0)
	s.Sample(l)
	if got := ids(s.Candidates()); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("penalized leader: top-2 = %v, want [1 2]", got)
	}
	p.RepeatPenalty = 1
	p.PresencePenalty = -10 // boosts token 5 to 10
	s = New(p, len(l))
	s.Accept(5)
	s.Sample(l)
	if got := ids(s.Candidates()); !slices.Equal(got, []int32{5, 0}) {
		t.Errorf("boosted token: top-2 = %v, want [5 0]", got)
	}
}

func TestNonFinite(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	// Uniform finite logits except -Inf / NaN holes: never sampled.
	l := []float32{-inf, 0, nan, 0, -inf, 0, nan, -inf}
	for _, topK := range []int{0, 2, 40} {
		p := off()
		p.TopK = topK
		s := New(p, len(l))
		for range 2000 {
			id := s.Sample(l)
			if id != 1 && id != 3 && id != 5 {
				t.Fatalf("top_k=%d: sampled non-finite token %d", topK, id)
			}
		}
		p.Temp = 0
		if id := New(p, len(l)).Sample(l); id != 1 {
			t.Fatalf("greedy top_k=%d: %d", topK, id)
		}
	}
	// everything masked
	all := []float32{-inf, nan, -inf}
	for _, temp := range []float32{0, 1} {
		p := DefaultParams()
		p.Temp = temp
		if id := New(p, 3).Sample(all); id != -1 {
			t.Errorf("temp %v all masked: %d, want -1", temp, id)
		}
	}
	// +Inf: only those, uniformly
	l = []float32{0, inf, 5, inf, nan}
	p := off()
	p.Seed = 9
	s := New(p, len(l))
	c := make([]int, len(l))
	const n = 20000
	for range n {
		c[s.Sample(l)]++
	}
	if c[1]+c[3] != n {
		t.Fatalf("+Inf: counts %v", c)
	}
	binomialCheck(t, "+Inf token 1", c[1], n, 0.5)
	p.Temp = 0
	if id := New(p, len(l)).Sample(l); id != 1 {
		t.Errorf("greedy +Inf: %d", id)
	}
}

func TestDoesNotModifyLogits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	l := randLogits(r, 5000, 3)
	orig := slices.Clone(l)
	for _, p := range []Params{DefaultParams(), off(), {Temp: 0, PenaltyLastN: 64, RepeatPenalty: 1.5}} {
		p.RepeatPenalty = 1.5
		s := New(p, len(l))
		for i := range 50 {
			s.Accept(s.Sample(l))
			s.Logprobs(l, int32(i), 5)
		}
		if !slices.Equal(l, orig) {
			t.Fatal("Sample modified the caller's logits")
		}
	}
}

// refChain is a straightforward full-sort implementation of the chain's
// candidate set, to cross-check the heap and prefilter paths.
func refChain(p Params, l []float32, hist []int32) []int32 {
	counts := map[int32]int{}
	if p.PenaltyLastN != 0 {
		h := hist
		if p.PenaltyLastN > 0 && len(h) > p.PenaltyLastN {
			h = h[len(h)-p.PenaltyLastN:]
		}
		for _, id := range h {
			counts[id]++
		}
	}
	type tl struct {
		id int32
		l  float32
	}
	var c []tl
	for i, v := range l {
		if n := counts[int32(i)]; n > 0 {
			if v <= 0 {
				v *= p.RepeatPenalty
			} else {
				v /= p.RepeatPenalty
			}
			v -= float32(float32(n)*p.FrequencyPenalty) + p.PresencePenalty
		}
		if v > float32(math.Inf(-1)) {
			c = append(c, tl{int32(i), v})
		}
	}
	sort.Slice(c, func(a, b int) bool {
		return c[a].l > c[b].l || (c[a].l == c[b].l && c[a].id < c[b].id)
	})
	if p.TopK > 0 && p.TopK < len(c) {
		c = c[:p.TopK]
	}
	mk := max(p.MinKeep, 1)
	if p.TopP < 1 {
		var z, cum float64
		for _, x := range c {
			z += math.Exp(float64(x.l - c[0].l))
		}
		for i, x := range c {
			cum += math.Exp(float64(x.l-c[0].l)) / z
			if cum >= float64(p.TopP) && i+1 >= mk {
				c = c[:i+1]
				break
			}
		}
	}
	if p.MinP > 0 {
		thr := c[0].l + float32(math.Log(float64(p.MinP)))
		i := 1
		for ; i < len(c) && (c[i].l >= thr || i < mk); i++ {
		}
		c = c[:i]
	}
	out := make([]int32, len(c))
	for i, x := range c {
		out[i] = x.id
	}
	return out
}

func TestMatchesReferenceChain(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 42))
	const n = 3000
	for trial := range 300 {
		p := Params{
			Temp:             0.5 + r.Float32(),
			TopK:             []int{0, 1, 5, 40, 200, n, n + 5}[r.IntN(7)],
			TopP:             []float32{1, 0.95, 0.5, 0.9}[r.IntN(4)],
			MinP:             []float32{0, 0.05, 0.2}[r.IntN(3)],
			MinKeep:          r.IntN(3),
			PenaltyLastN:     []int{0, 8, 64, -1}[r.IntN(4)],
			RepeatPenalty:    []float32{1, 1.1, 1.5}[r.IntN(3)],
			FrequencyPenalty: []float32{0, 0.3, -0.5}[r.IntN(3)],
			PresencePenalty:  []float32{0, 0.7}[r.IntN(2)],
			Seed:             uint64(trial),
		}
		l := randLogits(r, n, []float64{0.5, 2, 6}[r.IntN(3)])
		if trial%5 == 0 { // quantized logits: many ties
			for i := range l {
				l[i] = float32(math.Round(float64(l[i])))
			}
		}
		s := New(p, n)
		var hist []int32
		for step := range 12 {
			want := refChain(p, l, hist)
			id := s.Sample(l)
			got := ids(s.Candidates())
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d step %d %+v:\n got %v\nwant %v", trial, step, p, got, want)
			}
			if !slices.Contains(got, id) {
				t.Fatalf("sampled %d outside candidates", id)
			}
			var sum float64
			for _, c := range s.Candidates() {
				sum += float64(c.P)
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Fatalf("probabilities sum to %v", sum)
			}
			s.Accept(id)
			hist = append(hist, id)
			// also accept a frequent token so penalties bite on the leaders
			lead := want[0]
			s.Accept(lead)
			hist = append(hist, lead)
		}
	}
}

func TestLogprobs(t *testing.T) {
	l := []float32{1, 3, 2, float32(math.Inf(-1)), 3, float32(math.NaN())}
	s := New(DefaultParams(), len(l))
	z := math.Exp(1) + 2*math.Exp(3) + math.Exp(2)
	lp := func(v float64) float32 { return float32(v - math.Log(z)) }
	chosen, top := s.Logprobs(l, 2, 4)
	if math.Abs(float64(chosen-lp(2))) > 1e-6 {
		t.Errorf("chosen logprob %v, want %v", chosen, lp(2))
	}
	want := []TokenLogprob{{1, lp(3)}, {4, lp(3)}, {2, lp(2)}, {0, lp(1)}}
	if len(top) != len(want) {
		t.Fatalf("top = %v", top)
	}
	for i := range want {
		if top[i].ID != want[i].ID || math.Abs(float64(top[i].Logprob-want[i].Logprob)) > 1e-6 {
			t.Errorf("top[%d] = %v, want %v", i, top[i], want[i])
		}
	}
	if c, _ := s.Logprobs(l, 3, 0); !math.IsInf(float64(c), -1) {
		t.Errorf("-Inf logit logprob = %v", c)
	}
	if c, _ := s.Logprobs(l, 5, 0); !math.IsInf(float64(c), -1) {
		t.Errorf("NaN logit logprob = %v", c)
	}
	// raw: penalties and temperature do not change logprobs
	p := DefaultParams()
	p.RepeatPenalty = 2
	p.Temp = 0.3
	s2 := New(p, len(l))
	s2.Accept(1)
	s2.Sample(l)
	if c, _ := s2.Logprobs(l, 1, 0); math.Abs(float64(c-lp(3))) > 1e-6 {
		t.Errorf("logprob depends on penalties/temp: %v, want %v", c, lp(3))
	}
	// top logprobs sum (all tokens) to 1
	_, all := s.Logprobs(l, -1, len(l))
	var sum float64
	for _, x := range all {
		sum += math.Exp(float64(x.Logprob))
	}
	if math.Abs(sum-1) > 1e-6 || len(all) != 4 {
		t.Errorf("all logprobs: %v (sum %v)", all, sum)
	}
	// +Inf
	inf := float32(math.Inf(1))
	c, top := s.Logprobs([]float32{inf, 0, inf, 1, 2, 3}, 1, 2)
	if !math.IsInf(float64(c), -1) || top[0].ID != 0 || top[1].ID != 2 ||
		math.Abs(float64(top[0].Logprob)+math.Ln2) > 1e-6 {
		t.Errorf("+Inf logprobs: %v %v", c, top)
	}
}

func TestNoAllocs(t *testing.T) {
	const n = 151936
	r := rand.New(rand.NewPCG(5, 5))
	l := randLogits(r, n, 3)
	for name, p := range map[string]Params{
		"default":   DefaultParams(),
		"penalties": func() Params { p := DefaultParams(); p.RepeatPenalty = 1.1; p.PresencePenalty = 0.2; return p }(),
		"greedy":    func() Params { p := DefaultParams(); p.Temp = 0; return p }(),
		"no-topk":   func() Params { p := DefaultParams(); p.TopK = 0; return p }(),
	} {
		s := New(p, n)
		step := func() {
			id := s.Sample(l)
			s.Accept(id)
			s.Accept(int32(r.IntN(n)))
		}
		for range 200 { // warm up: fill the penalty window
			step()
		}
		if a := testing.AllocsPerRun(50, step); a != 0 {
			t.Errorf("%s: %v allocs per Sample+Accept", name, a)
		}
		s.Logprobs(l, 0, 5)
		if a := testing.AllocsPerRun(10, func() { s.Logprobs(l, 0, 5) }); a != 0 {
			t.Errorf("%s: %v allocs per Logprobs", name, a)
		}
	}
}

func TestAcceptPanicsOutOfRange(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	New(DefaultParams(), 10).Accept(10)
}

func BenchmarkSample(b *testing.B) {
	const n = 151936
	r := rand.New(rand.NewPCG(5, 5))
	l := randLogits(r, n, 3)
	for _, bc := range []struct {
		name string
		p    func(*Params)
	}{
		{"default", func(*Params) {}},
		{"default+penalties", func(p *Params) { p.RepeatPenalty = 1.1; p.FrequencyPenalty = 0.1 }},
		{"greedy", func(p *Params) { p.Temp = 0 }},
		{"top_k=0", func(p *Params) { p.TopK = 0 }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := DefaultParams()
			p.Seed = 1
			bc.p(&p)
			s := New(p, n)
			for range 64 {
				s.Accept(int32(r.IntN(n)))
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Accept(s.Sample(l))
			}
		})
	}
}

func BenchmarkLogprobs(b *testing.B) {
	const n = 151936
	r := rand.New(rand.NewPCG(5, 5))
	l := randLogits(r, n, 3)
	s := New(DefaultParams(), n)
	b.ReportAllocs()
	for b.Loop() {
		s.Logprobs(l, 7, 5)
	}
}

// TestScanGateAdversarial checks the bit-pattern chunk filter of the
// top-k and greedy scans against a full sort on inputs built to break it:
// negative and zero thresholds, ±0, NaNs of both signs, ±Inf, denormals,
// and lengths that are not multiples of the chunk size.
func TestScanGateAdversarial(t *testing.T) {
	vals := []float32{
		float32(math.Inf(-1)), float32(math.Inf(1)),
		math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000), // ±NaN
		math.Float32frombits(0x7f800001), math.Float32frombits(0xff800001), // signalling NaNs
		0, float32(math.Copysign(0, -1)),
		math.Float32frombits(1), math.Float32frombits(0x80000001), // ±smallest denormal
		-3, -1, -0.5, 0.5, 1, 3, math.MaxFloat32, -math.MaxFloat32,
	}
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 3000 {
		n := 1 + r.IntN(100)
		l := make([]float32, n)
		shift := float32(r.NormFloat64() * 5)
		for i := range l {
			if r.IntN(3) == 0 {
				l[i] = vals[r.IntN(len(vals))]
			} else {
				l[i] = float32(math.Round(r.NormFloat64()*2)) + shift
			}
		}
		type tl struct {
			id int32
			v  float32
		}
		var ref []tl
		for i, v := range l {
			if v > float32(math.Inf(-1)) {
				ref = append(ref, tl{int32(i), v})
			}
		}
		sort.Slice(ref, func(a, b int) bool {
			return ref[a].v > ref[b].v || (ref[a].v == ref[b].v && ref[a].id < ref[b].id)
		})
		k := 1 + r.IntN(n)
		s := New(off(), n)
		got := s.topK(make([]Candidate, 0, k), l, k, false)
		want := ref[:min(k, len(ref))]
		if len(got) != len(want) {
			t.Fatalf("trial %d k=%d: %d candidates, want %d\n%v", trial, k, len(got), len(want), l)
		}
		for i := range want {
			if got[i].ID != want[i].id {
				t.Fatalf("trial %d k=%d: got %v\nwant %v\nlogits %v", trial, k, got, want, l)
			}
		}
		gp := off()
		gp.Temp = 0
		wantG := int32(-1)
		if len(ref) > 0 {
			wantG = ref[0].id
		}
		if g := New(gp, n).Sample(l); g != wantG {
			t.Fatalf("trial %d: greedy %d, want %d\nlogits %v", trial, g, wantG, l)
		}
	}
}

// TestPenalizedTieAtThreshold: a penalized token with a high id that ties
// raw tokens of lower ids exactly must lose the tie, in both the greedy
// and the top-k scans, whatever the sign of the tied value (this exercises
// the equality edge of the chunk filter).
func TestPenalizedTieAtThreshold(t *testing.T) {
	const n = 48
	for _, v := range []float32{-1, 0, 1} {
		l := make([]float32, n)
		for i := range l {
			l[i] = v - 5 // below everything
		}
		l[20] = v      // raw token in the second chunk
		l[n-1] = v + 1 // penalized to v by the presence penalty
		p := off()
		p.PresencePenalty = 1
		for _, topK := range []int{1, 2} {
			p.TopK = topK
			p.Temp = 1
			s := New(p, n)
			s.Accept(n - 1)
			s.Sample(l)
			want := []int32{20, n - 1}[:topK]
			if got := ids(s.Candidates()); !slices.Equal(got, want) {
				t.Errorf("v=%v top_k=%d: %v, want %v", v, topK, got, want)
			}
		}
		p.Temp = 0
		s := New(p, n)
		s.Accept(n - 1)
		if got := s.Sample(l); got != 20 {
			t.Errorf("v=%v greedy: %d, want 20", v, got)
		}
	}
}
