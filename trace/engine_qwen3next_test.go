package trace

import (
	"bytes"
	"testing"

	"github.com/regolith/regolith/expert"
	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/model"
)

// A trace recorded while qwen3next streams its experts through the expert store replays,
// with the store's policy (LRU) and arena, to the store's own lookups, hits, misses, tokens
// and bytes in both phases; the recorded choices are the top-k of the recorded logits.
func TestEngineReproductionQwen3Next(t *testing.T) {
	// Slots are per size class: q8_0 has one of 128 experts, the Q4_K_M mix two of 64.
	for _, mc := range []struct {
		name  string
		cases []struct{ slots, chunk int }
	}{
		{"qwen3next-small-q8_0.gguf", []struct{ slots, chunk int }{{32, 1}, {40, 9}, {64, 16}, {100, 45}}},
		{"qwen3next-small-q4_k_m.gguf", []struct{ slots, chunk int }{{20, 1}, {24, 9}, {36, 16}, {48, 45}}},
	} {
		name := mc.name
		f, err := gguf.Open(fixtures.Path(t, "models", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := model.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		prompt := make([]int32, 45)
		for i := range prompt {
			prompt[i] = int32((i*7919 + 13) % m.Cfg.NVocab)
		}
		for _, c := range mc.cases {
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
			if tr.Header.NLayer != len(m.Layers) || tr.Header.NExpert != m.Cfg.NExpert || tr.Header.K != m.Cfg.NExpertUsed {
				t.Fatalf("%s: trace header %d layers %d experts top-%d", name, tr.Header.NLayer, tr.Header.NExpert, tr.Header.K)
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
					t.Errorf("%s slots %d chunk %d %s: replay %+v, expert store %+v", name, c.slots, c.chunk, p.name, p.sim, p.eng)
				}
			}
			if r.Decode.Misses == 0 || r.Hits == 0 {
				t.Errorf("%s slots %d: %d hits %d decode misses: the case exercises nothing", name, c.slots, r.Hits, r.Decode.Misses)
			}
			t.Logf("%s slots %d chunk %d: %d hits, %d misses (store: %d, %d)", name, c.slots, c.chunk, r.Hits, r.Misses,
				es.Prefill.Hits+es.Decode.Hits, es.Prefill.Misses+es.Decode.Misses)
		}
	}
}
