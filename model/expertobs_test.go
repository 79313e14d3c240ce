package model

import (
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

type expertRec struct {
	routed  map[[3]int]float32 // (layer, pos, expert) → weight, from Routed
	seen    map[[3]int]float32 // the same from ExpertOutput
	p0      int
	nonzero int
}

func (r *expertRec) Routed(layer, pos int, logits []float32, chosen []int32, weights []float32) {
	for i, e := range chosen {
		r.routed[[3]int{layer, pos, int(e)}] = weights[i]
	}
}

func (r *expertRec) ExpertOutput(layer, expert, token int, weight float32, out []float32) {
	k := [3]int{layer, r.p0 + token, expert}
	if _, dup := r.seen[k]; dup {
		r.seen[k] = -1
		return
	}
	r.seen[k] = weight
	for _, v := range out {
		if v != 0 {
			r.nonzero++
			break
		}
	}
}

// An ExpertObserver sees each routed (layer, token, expert) once with the router's weight,
// and observing changes no logit.
func TestExpertObserver(t *testing.T) {
	f, err := gguf.Open(fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	toks := []int32{1, 50, 300, 7, 999, 12, 4000, 33, 2, 80}
	plain, err := NewSession(m, Options{Ctx: 64, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	rec := &expertRec{routed: map[[3]int]float32{}, seen: map[[3]int]float32{}}
	obs, err := NewSession(m, Options{Ctx: 64, Threads: 2, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	for _, chunk := range [][]int32{toks[:7], toks[7:]} {
		a, err := plain.Forward(chunk, true)
		if err != nil {
			t.Fatal(err)
		}
		a = append([]float32(nil), a...)
		rec.p0 = obs.Pos()
		b, err := obs.Forward(chunk, true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("logit %d: %v with the observer, %v without", i, b[i], a[i])
			}
		}
	}
	want := m.Cfg.NLayer * len(toks) * m.Cfg.NExpertUsed
	if len(rec.routed) != want || len(rec.seen) != want || rec.nonzero != want {
		t.Fatalf("%d routed, %d seen, %d non-zero outputs; want %d", len(rec.routed), len(rec.seen), rec.nonzero, want)
	}
	for k, w := range rec.routed {
		if rec.seen[k] != w {
			t.Fatalf("%v: weight %v routed, %v seen (-1: seen twice)", k, w, rec.seen[k])
		}
	}
}
