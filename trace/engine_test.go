package trace

import (
	"bytes"
	"os"
	"testing"

	"github.com/regolith/regolith/defaultmodel"
	"github.com/regolith/regolith/expert"
	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/model"
)

func argmax(v []float32) int32 {
	b := 0
	for i, x := range v {
		if x > v[b] {
			b = i
		}
	}
	return int32(b)
}

// run prefills prompt in chunks and decodes n tokens greedily, recording the routing.
func runRecorded(t *testing.T, f *gguf.File, m *model.Model, src model.ExpertSource, prompt []int32, chunk, n, topN int) []byte {
	t.Helper()
	h, err := HeaderFor(m, f, topN)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	s, err := model.NewSession(m, model.Options{Ctx: 512, Threads: 2, Experts: rec.Wrap(src), Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec.BeginRequest(len(prompt))
	var logits []float32
	for i := 0; i < len(prompt); i += chunk {
		if logits, err = s.Forward(prompt[i:min(i+chunk, len(prompt))], false); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if logits, err = s.Forward([]int32{argmax(logits)}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEngineReproduction records a run that streams experts through the expert store and
// replays the trace with the engine's policy and arena: hits and misses must be the store's,
// exactly, in both phases.
func TestEngineReproduction(t *testing.T) {
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
	prompt := make([]int32, 37)
	for i := range prompt {
		prompt[i] = int32((i*7919 + 13) % m.Cfg.NVocab)
	}
	for _, c := range []struct{ slots, chunk int }{{16, 8}, {20, 5}, {33, 16}, {48, 37}} {
		st, err := expert.New(m, f, expert.Config{Slots: c.slots, ChunkTokens: c.chunk, Readers: 2})
		if err != nil {
			t.Fatal(err)
		}
		b := runRecorded(t, f, m, st, prompt, c.chunk, 24, 0)
		es := st.Stats()
		st.Close()
		tr, err := Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Replay(tr, Config{Policy: LRU, Slots: c.slots})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			name string
			sim  Phase
			eng  expert.PhaseStats
		}{{"prefill", r.Prefill, es.Prefill}, {"decode", r.Decode, es.Decode}} {
			if p.sim.Hits != p.eng.Hits || p.sim.Misses != p.eng.Misses || p.sim.Lookups != p.eng.Lookups ||
				p.sim.Tokens != p.eng.Tokens || p.sim.Bytes != p.eng.BytesRead {
				t.Errorf("slots %d chunk %d %s: replay %+v, expert store %+v", c.slots, c.chunk, p.name, p.sim, p.eng)
			}
		}
		if r.Decode.Misses == 0 || r.Hits == 0 {
			t.Errorf("slots %d: %d hits %d decode misses: the case exercises nothing", c.slots, r.Hits, r.Decode.Misses)
		}
		t.Logf("slots %d chunk %d: %d hits, %d misses (store: %d, %d)", c.slots, c.chunk, r.Hits, r.Misses,
			es.Prefill.Hits+es.Decode.Hits, es.Prefill.Misses+es.Decode.Misses)
	}
}

// TestRecordingChangesNothing: the same greedy run with and without the recorder gives the
// same logits.
func TestRecordingChangesNothing(t *testing.T) {
	p, err := defaultmodel.Path()
	if err != nil {
		t.Skip(err)
	}
	f, err := gguf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int32{100, 200, 300, 400, 500, 600, 700}
	run := func(rec *Recorder) []float32 {
		o := model.Options{Ctx: 64, Threads: 2}
		if rec != nil {
			o.Experts, o.Observer = rec.Wrap(model.NewResident(m)), rec
		}
		s, err := model.NewSession(m, o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		out, err := s.Forward(prompt, true)
		if err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), out...)
	}
	plain := run(nil)
	var buf bytes.Buffer
	h, err := HeaderFor(m, f, 8)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := NewRecorder(&buf, h)
	traced := run(rec)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range plain {
		if plain[i] != traced[i] {
			t.Fatalf("logit %d: %v without the recorder, %v with it", i, plain[i], traced[i])
		}
	}
	if os.Getenv("REGOLITH_WRITE_SEED") != "" {
		if err := os.WriteFile("testdata/seed.trace", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Tokens != len(prompt) || tr.NLayer != len(m.Layers) || tr.TopN != 8 {
		t.Fatalf("trace: %d tokens, %d layers, top-%d", tr.Tokens, tr.NLayer, tr.TopN)
	}
}
