package eval

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/model"
)

func logits(ps ...float64) []float32 {
	z := make([]float32, len(ps))
	for i, p := range ps {
		z[i] = float32(math.Log(p))
	}
	return z
}

// KL on tiny distributions against values computed by hand.
func TestKLHandComputed(t *testing.T) {
	var c Comparer
	// p = (1/6, 2/6, 3/6), q uniform: KL = 1/6·ln(1/2) + 1/3·ln(1) + 1/2·ln(3/2).
	p := c.Compare(logits(1, 2, 3), []float32{0, 0, 0}, 0)
	want := math.Log(0.5)/6 + math.Log(1.5)/2
	if math.Abs(p.KL-want) > 1e-7 || math.Abs(p.KL-0.0872) > 1e-4 {
		t.Fatalf("KL = %.9f, want %.9f", p.KL, want)
	}
	if p.Agree || p.RefTop != 2 || p.TestTop != 0 {
		t.Fatalf("argmaxes %d %d (agree %v), want 2 and 0 (ties: lowest id)", p.RefTop, p.TestTop, p.Agree)
	}
	if math.Abs(p.NLLRef-math.Log(6)) > 1e-7 || math.Abs(p.NLLTest-math.Log(3)) > 1e-12 {
		t.Fatalf("NLL %.9f %.9f, want ln 6 and ln 3", p.NLLRef, p.NLLTest)
	}
	// The other direction: KL(u ‖ p) = Σ 1/3 ln((1/3)/p_i) = ln(1/3) − (ln(1/6)+ln(2/6)+ln(3/6))/3.
	q := c.Compare([]float32{0, 0, 0}, logits(1, 2, 3), 1)
	want = math.Log(1.0/3) - (math.Log(1.0/6)+math.Log(2.0/6)+math.Log(3.0/6))/3
	if math.Abs(q.KL-want) > 1e-7 {
		t.Fatalf("KL(u‖p) = %.9f, want %.9f", q.KL, want)
	}
	// A point mass against a fair coin: ln 2; logits shifted by a constant change nothing.
	inf := float32(math.Inf(-1))
	if k := c.Compare([]float32{0, inf}, []float32{100, 100}, 0).KL; math.Abs(k-math.Ln2) > 1e-12 {
		t.Fatalf("KL(δ‖coin) = %v, want ln 2", k)
	}
	// Mass where the test has none: infinite.
	if k := c.Compare([]float32{100, 100}, []float32{0, inf}, 0).KL; !math.IsInf(k, 1) {
		t.Fatalf("KL(coin‖δ) = %v, want +Inf", k)
	}
	// Large logits: the float64 log-softmax is shift-stable.
	a := c.Compare([]float32{1000, 1001, 999}, []float32{-1000, -999.5, -1001}, 0).KL
	b := c.Compare([]float32{0, 1, -1}, []float32{0, 0.5, -1}, 0).KL
	if math.Abs(a-b) > 1e-12 || a <= 0 {
		t.Fatalf("shifted logits: KL %v vs %v", a, b)
	}
	// Identical rows: exactly 0.
	if k := c.Compare(logits(0.1, 0.2, 0.7), logits(0.1, 0.2, 0.7), 2).KL; k != 0 {
		t.Fatalf("KL(x‖x) = %v", k)
	}
}

// The report's means, flips and intervals on hand-made positions; the same inputs give the
// same intervals.
func TestReport(t *testing.T) {
	build := func() *Report {
		var a Accumulator
		a.NWorst = 3
		for i := 0; i < 200; i++ {
			p := Position{KL: float64(i%10) / 10, Agree: i%4 != 0, NLLRef: 1, NLLTest: 1.5}
			doc := "a"
			if i >= 100 {
				doc = "b"
				p.KL *= 2
			}
			a.Add(doc, i%100, p)
		}
		return a.Report()
	}
	r := build()
	// doc a: mean KL 0.45, doc b: 0.9; corpus 0.675.
	if math.Abs(r.KLDMean-0.675) > 1e-12 || math.Abs(r.Documents[0].KLD.Mean-0.45) > 1e-12 || math.Abs(r.Documents[1].KLD.Mean-0.9) > 1e-12 {
		t.Fatalf("means %v %v %v", r.KLDMean, r.Documents[0].KLD.Mean, r.Documents[1].KLD.Mean)
	}
	if r.Flips != 50 || r.Positions != 200 || r.FlipsText != "50/200" || r.Top1.Mean != 0.75 {
		t.Fatalf("flips %d/%d %q top1 %v", r.Flips, r.Positions, r.FlipsText, r.Top1.Mean)
	}
	if math.Abs(r.DeltaNLL.Mean-0.5) > 1e-12 || r.DeltaNLL.Lo != r.DeltaNLL.Hi {
		t.Fatalf("ΔNLL %+v (constant: a zero-width interval)", r.DeltaNLL)
	}
	if !(r.KLD.Lo < r.KLD.Mean && r.KLD.Mean < r.KLD.Hi) || r.KLD.Hi-r.KLD.Lo > 0.5 {
		t.Fatalf("KLD interval %+v", r.KLD)
	}
	if len(r.Worst) != 3 || r.Worst[0].KLD != 1.8 || r.Worst[0].Doc != "b" || r.Worst[0].Pos != 9 || r.Worst[2].KLD != 1.8 {
		t.Fatalf("worst %+v", r.Worst)
	}
	if r2 := build(); r2.KLD != r.KLD || r2.Top1 != r.Top1 {
		t.Fatalf("bootstrap not deterministic: %+v vs %+v", r.KLD, r2.KLD)
	}
}

func TestReadCorpus(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("two\x00three\x00\x00"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one"), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("no"), 0o644)
	docs, err := ReadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, filepath.Base(d.Name)+"="+d.Text)
	}
	if len(got) != 3 || got[0] != "a.txt=one" || got[1] != "b.txt#0=two" || got[2] != "b.txt#1=three" {
		t.Fatalf("documents %q", got)
	}
}

func openSession(t *testing.T, path string) (*model.Model, *model.Session) {
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := model.NewSession(m, model.Options{Ctx: 128, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return m, s
}

// KL(x ‖ x) = 0 exactly on a real model (two sessions of one file), through a saved
// reference in f32 (exact), and a small positive floor through f16.
func TestSelfKLRealModel(t *testing.T) {
	path := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	m, s1 := openSession(t, path)
	_, s2 := openSession(t, path)
	V := m.Cfg.NVocab
	var ws []Window
	for d := 0; d < 2; d++ {
		w := Window{Doc: []string{"x", "y"}[d], Start: 0}
		for i := 0; i < 40; i++ {
			w.Tokens = append(w.Tokens, int32((i*37+d*11+5)%V))
		}
		ws = append(ws, w)
	}
	var buf bytes.Buffer
	f32w, _ := NewRefWriter(&buf, EncodingF32, V, "small")
	var buf16 bytes.Buffer
	f16w, _ := NewRefWriter(&buf16, EncodingF16, V, "small")
	var acc Accumulator
	var c Comparer
	var refs [][]float32
	for _, w := range ws {
		ref, err := Logits(s1, w.Tokens, 16, V, nil) // chunks of 16
		if err != nil {
			t.Fatal(err)
		}
		test, err := Logits(s2, w.Tokens, 16, V, nil)
		if err != nil {
			t.Fatal(err)
		}
		CompareWindow(&acc, &c, w, ref, test, V)
		if err := f32w.Window(w, ref); err != nil {
			t.Fatal(err)
		}
		if err := f16w.Window(w, ref); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	r := acc.Report()
	if r.KLDMean != 0 || r.KLDMax != 0 || r.Flips != 0 || r.Positions != 78 || r.NLLRef != r.NLLTest {
		t.Fatalf("self comparison: KL mean %v max %v, flips %s, NLL %v vs %v", r.KLDMean, r.KLDMax, r.FlipsText, r.NLLRef, r.NLLTest)
	}
	if err := f32w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f16w.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved reference: %d bytes f32, %d bytes f16 for %d rows of %d", buf.Len(), buf16.Len(), 78, V)
	for _, enc := range []struct {
		b     *bytes.Buffer
		exact bool
	}{{&buf, true}, {&buf16, false}} {
		rd, err := NewRefReader(enc.b)
		if err != nil {
			t.Fatal(err)
		}
		if rd.Vocab != V || rd.Model != "small" {
			t.Fatalf("header %d %q", rd.Vocab, rd.Model)
		}
		var acc Accumulator
		var lbuf []float32
		for i := 0; ; i++ {
			w, ref, ok, err := rd.Next(lbuf)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				if i != 2 {
					t.Fatalf("%d windows read back", i)
				}
				break
			}
			lbuf = ref
			if w.Doc != ws[i].Doc || len(w.Tokens) != 40 || w.Tokens[7] != ws[i].Tokens[7] {
				t.Fatalf("window %d read back as %q %v", i, w.Doc, w.Tokens[:8])
			}
			CompareWindow(&acc, &c, w, ref, refs[i], V)
		}
		r := acc.Report()
		if enc.exact && (r.KLDMax != 0 || r.Flips != 0) {
			t.Fatalf("f32 saved reference: KL max %v, flips %d", r.KLDMax, r.Flips)
		}
		if !enc.exact && (r.KLDMean <= 0 || r.KLDMax > 1e-4) {
			t.Fatalf("f16 saved reference: KL mean %g max %g (want a small positive floor)", r.KLDMean, r.KLDMax)
		}
		t.Logf("exact=%v: KL mean %.3g max %.3g, flips %s", enc.exact, r.KLDMean, r.KLDMax, r.FlipsText)
	}
}
