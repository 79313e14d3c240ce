package prune

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/regolith/regolith/eval"
	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/tokenizer"
)

// One layer of five experts with hand-computed scores.
func TestScores(t *testing.T) {
	s := NewSaliency(1, 5, 2)
	// expert 0: never hit; 1: one hit of 3; 2: hits 1 and 3; 3: four hits of 2; 4: hits 10, 0.
	for _, h := range []struct {
		e int
		x float64
	}{{1, 3}, {2, 1}, {2, 3}, {3, 2}, {3, 2}, {3, 2}, {3, 2}, {4, 10}, {4, 0}} {
		s.Count[0][h.e]++
		s.Sum[0][h.e] += h.x
		s.SumSq[0][h.e] += h.x * h.x
	}
	const m = 2
	sh, err := s.Scores(ScoreShrink, m)
	if err != nil {
		t.Fatal(err)
	}
	// expert 2: mean 2, sample sd √2, SE 1 → (2/4)·1 = 0.5; expert 3: sd 0 → (4/6)·2;
	// expert 4: mean 5, sd √50, SE 5 → 0; expert 1: one hit → 0; expert 0: 0 exactly.
	want := []float64{0, 0, 0.5, 4.0 / 6 * 2, 0}
	for e := range want {
		if math.Abs(sh[0][e]-want[e]) > 1e-12 {
			t.Fatalf("shrink %v, want %v", sh[0], want)
		}
	}
	l2, _ := s.Scores(ScoreL2Sum, m)
	if l2[0][4] != 10 || l2[0][0] != 0 || l2[0][3] != 8 {
		t.Fatalf("l2_sum %v", l2[0])
	}
	hy, _ := s.Scores(ScoreHybrid, m)
	// l2 ranks: 0 (0), 1 (3) and 2 (4)... values 0,3,4,8,10 → pct 0, .25, .5, .75, 1;
	// shrink values 0,0,0.5,1.33,0: three ties at 0 share rank 1 → pct .25; 0.5 → .75; 1.33 → 1.
	wantH := []float64{0.5 * (0 + 0.25), 0.5 * (0.25 + 0.25), 0.5 * (0.5 + 0.75), 0.5 * (0.75 + 1), 0.5 * (1 + 0.25)}
	for e := range wantH {
		if math.Abs(hy[0][e]-wantH[e]) > 1e-12 {
			t.Fatalf("hybrid %v, want %v", hy[0], wantH)
		}
	}
	// shrink ties at 0 between experts 0, 1 and 4: the hit ones are kept first (4: larger l2).
	k, err := s.Select(sh, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := k[0]; len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 4 {
		t.Fatalf("kept %v, want [1 2 3 4]", got)
	}
	// hybrid: 3 (0.875), then 2 and 4 tie at 0.625 with 2 hits each: the larger l2_sum (4).
	if k, _ := s.Select(hy, 2); k[0][0] != 3 || k[0][1] != 4 {
		t.Fatalf("hybrid keeps %v, want [3 4]", k[0])
	}
	// The assertion itself: a score that prefers the zero-hit expert is refused.
	bad := [][]float64{{9, 1, 1, 1, 1}}
	if _, err := s.Select(bad, 2); err == nil {
		t.Fatal("a zero-hit expert kept over hit ones was accepted")
	}
	// …unless every dropped expert is zero-hit too.
	z := NewSaliency(1, 3, 1)
	if _, err := z.Select([][]float64{{0, 0, 0}}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scores("nope", m); err == nil {
		t.Fatal("unknown score accepted")
	}
}

func load(t *testing.T, b []byte) (*gguf.File, *model.Model) {
	t.Helper()
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, m
}

type routes struct{ used []map[int]bool }

func (r *routes) Routed(layer, pos int, logits []float32, chosen []int32, weights []float32) {
	for _, e := range chosen {
		r.used[layer][int(e)] = true
	}
}

// Pruning to every expert gives the original bytes; pruning to a subset slices exactly the
// kept experts and router rows, changes only expert_count, loads, and (when the kept experts
// include every expert the tokens route to) computes the same next-token distribution.
func TestApply(t *testing.T) {
	orig, err := os.ReadFile(fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	f, m := load(t, orig)
	c := m.Cfg
	all := make([][]int, c.NLayer)
	for l := range all {
		for e := 0; e < c.NExpert; e++ {
			all[l] = append(all[l], e)
		}
	}
	var buf bytes.Buffer
	if err := Apply(f, all, &buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), orig) {
		t.Fatal("keeping every expert did not reproduce the file")
	}

	toks := []int32{11, 400, 23}
	rt := &routes{}
	for range c.NLayer {
		rt.used = append(rt.used, map[int]bool{})
	}
	s, _ := model.NewSession(m, model.Options{Ctx: 16, Threads: 2, Observer: rt})
	ref, err := s.Forward(toks, false)
	if err != nil {
		t.Fatal(err)
	}
	ref = append([]float32(nil), ref...)
	s.Close()
	K := c.NExpert / 2
	for _, u := range rt.used {
		K = max(K, len(u))
	}
	if K >= c.NExpert {
		t.Fatalf("the tokens route to every expert of a layer; nothing to prune")
	}
	t.Logf("keeping %d of %d experts", K, c.NExpert)
	keep := make([][]int, c.NLayer)
	for l := range keep {
		// the routed experts, then the highest ids (so that kept ids are not a prefix)
		in := map[int]bool{}
		for e := range rt.used[l] {
			in[e] = true
		}
		for e := c.NExpert - 1; len(in) < K; e-- {
			in[e] = true
		}
		for e := 0; e < c.NExpert; e++ {
			if in[e] {
				keep[l] = append(keep[l], e)
			}
		}
		if len(keep[l]) != K {
			t.Fatalf("layer %d: %d kept", l, len(keep[l]))
		}
	}
	buf.Reset()
	if err := Apply(f, keep, &buf); err != nil {
		t.Fatal(err)
	}
	pf, pm := load(t, buf.Bytes())
	if pm.Cfg.NExpert != K || pm.Cfg.NExpertUsed != c.NExpertUsed || len(pf.KV) != len(f.KV) || len(pf.Tensors) != len(f.Tensors) {
		t.Fatalf("pruned: %d experts, %d used, %d KVs, %d tensors", pm.Cfg.NExpert, pm.Cfg.NExpertUsed, len(pf.KV), len(pf.Tensors))
	}
	for i, kv := range f.KV {
		if kv.Key == "qwen3moe.expert_count" {
			if pf.KV[i].Value != uint32(K) {
				t.Fatalf("expert_count %v", pf.KV[i].Value)
			}
			continue
		}
		var a, b bytes.Buffer
		gguf.Write(&a, []gguf.KV{kv}, nil)
		gguf.Write(&b, []gguf.KV{pf.KV[i]}, nil)
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("metadata %s changed", kv.Key)
		}
	}
	sliced := 0
	for i := range f.Tensors {
		a, b := &f.Tensors[i], &pf.Tensors[i]
		da, db := f.Data(a), pf.Data(b)
		if a.Name != b.Name || a.Type != b.Type {
			t.Fatalf("tensor %d: %s %v → %s %v", i, a.Name, a.Type, b.Name, b.Type)
		}
		mt := expertTensor.FindStringSubmatch(a.Name)
		if mt == nil {
			if !bytes.Equal(da, db) {
				t.Fatalf("%s changed", a.Name)
			}
			continue
		}
		sliced++
		var l int
		for _, ch := range mt[1] {
			l = 10*l + int(ch-'0')
		}
		per := len(da) / c.NExpert
		for j, e := range keep[l] {
			if !bytes.Equal(db[j*per:(j+1)*per], da[e*per:(e+1)*per]) {
				t.Fatalf("%s: kept slot %d is not expert %d", a.Name, j, e)
			}
		}
	}
	if sliced != 4*c.NLayer {
		t.Fatalf("%d tensors sliced, want %d", sliced, 4*c.NLayer)
	}
	ps, _ := model.NewSession(pm, model.Options{Ctx: 16, Threads: 2})
	defer ps.Close()
	got, err := ps.Forward(toks, false)
	if err != nil {
		t.Fatal(err)
	}
	var cmp eval.Comparer
	p := cmp.Compare(ref, got, 0)
	if !p.Agree || p.KL > 1e-6 {
		t.Fatalf("pruned model with every routed expert kept: KL %g, argmax %d vs %d", p.KL, p.TestTop, p.RefTop)
	}
	t.Logf("KL to the unpruned model with the routed experts kept: %.3g", p.KL)

	// Refusals: unequal counts, unsorted ids.
	bad := append([][]int(nil), keep...)
	bad[1] = bad[1][:K-1]
	if err := Apply(f, bad, io_discard{}); err == nil {
		t.Fatal("unequal per-layer counts accepted")
	}
}

type io_discard struct{}

func (io_discard) Write(b []byte) (int, error) { return len(b), nil }

// Calibration on the fixture: every token routes k experts per layer; sources are balanced.
func TestCalibrate(t *testing.T) {
	path := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	src := []Source{
		{"code", []eval.Document{{Name: "a", Text: "func main() { fmt.Println(\"hello, world\") }\n"}, {Name: "b", Text: "package x\n\nimport \"os\"\n\nvar y = os.Args\n"}}},
		{"prose", []eval.Document{{Name: "c", Text: "The quick brown fox jumps over the lazy dog, again and again and again, until the dog wakes up."}}},
	}
	ws, per, err := BalancedWindows(tok, src, 60, 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	if count(ws[0]) != per || count(ws[1]) != per || per > 30 {
		t.Fatalf("tokens per source %d, %d (per %d)", count(ws[0]), count(ws[1]), per)
	}
	sal, err := Calibrate(m, src, ws, 8, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sal.Tokens != int64(2*per) || len(sal.Sources) != 2 || sal.Sources[1].Tokens != int64(per) {
		t.Fatalf("tokens %d, sources %+v", sal.Tokens, sal.Sources)
	}
	for l := 0; l < sal.NLayer; l++ {
		var n int64
		for e, c := range sal.Count[l] {
			n += c
			if (c == 0) != (sal.Sum[l][e] == 0) || sal.SumSq[l][e] < 0 {
				t.Fatalf("layer %d expert %d: count %d sum %v", l, e, c, sal.Sum[l][e])
			}
		}
		if n != sal.Tokens*int64(m.Cfg.NExpertUsed) {
			t.Fatalf("layer %d: %d hits for %d tokens", l, n, sal.Tokens)
		}
	}
	p := filepath.Join(t.TempDir(), "sal.json")
	if err := sal.Write(p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSaliency(p)
	if err != nil {
		t.Fatal(err)
	}
	if back.Count[3][7] != sal.Count[3][7] || back.Sum[3][7] != sal.Sum[3][7] {
		t.Fatal("saliency file does not round-trip")
	}
	sc, _ := back.Scores(ScoreHybrid, DefaultPriorM)
	if _, err := back.Select(sc, 16); err != nil {
		t.Fatal(err)
	}
}
