package expert

import (
	"fmt"
	"testing"

	"github.com/regolith/regolith/model"
)

var nextModels = []string{"qwen3next-mini-f32.gguf", "qwen3next-small-q8_0.gguf", "qwen3next-small-q4_k_m.gguf"}

// qwen3next through the expert store: every logit and greedy token bit-identical to the
// resident run (Gated DeltaNet and gated attention layers, routed experts streamed, the
// shared expert resident), the prompt in one chunk, token by token and (without -short) in
// chunks of 8, at arena sizes from the minimum to the whole expert set, with direct I/O at
// the minimum and the whole set; the
// counters add up (checkStats) and with every expert fitting each used expert is read once.
func TestQwen3NextStoreExact(t *testing.T) {
	for _, name := range nextModels {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name != "qwen3next-small-q8_0.gguf" {
				t.Skip("-short: qwen3next-small-q8_0 only")
			}
			f, m := openModel(t, name)
			if m.Cfg.Next == nil {
				t.Fatalf("%s did not load as qwen3next", name)
			}
			prompt := promptIDs(m)
			total := len(m.Layers) * m.Cfg.NExpert
			chunks := []int{nPrompt, 1}
			if !testing.Short() {
				chunks = append(chunks, 8)
			}
			for _, chunk := range chunks {
				nd := &need{chunkOf: func(pos int) int {
					if pos < nPrompt {
						return pos / chunk
					}
					return pos
				}, sets: map[[2]int]map[int32]bool{}}
				want, err := generate(m, model.NewResident(m), nd, prompt, chunk)
				if err != nil {
					t.Fatal(err)
				}
				sizes := []int{nd.max, (nd.max + total) / 2, total}
				if !testing.Short() {
					sizes = append(sizes, nd.max+1, nd.max+7, total-3)
				}
				for _, slots := range sizes {
					modes := []bool{false}
					if slots == nd.max || slots == total {
						modes = append(modes, true) // direct I/O at both ends
					}
					for _, direct := range modes {
						what := fmt.Sprintf("chunk %d, %d slots, direct %v", chunk, slots, direct)
						st, err := New(m, f, Config{Slots: slots, Readers: 3, ReadSize: 16 << 10, DirectIO: direct})
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						cs := &counted{Store: st, m: m}
						got, err := generate(m, cs, nil, prompt, chunk)
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						sameResult(t, what, got, want)
						if chunk == 1 {
							checkStats(t, what, cs, 0, nPrompt+nGen)
						} else {
							checkStats(t, what, cs, (nPrompt+chunk-1)/chunk, nGen)
						}
						stats := st.Stats()
						if slots == total {
							used := map[[2]int32]bool{}
							for k, set := range nd.sets {
								for e := range set {
									used[[2]int32{int32(k[1]), e}] = true
								}
							}
							if stats.Total().Misses != int64(len(used)) {
								t.Fatalf("%s: %d misses with every expert fitting, want %d (distinct experts used)", what, stats.Total().Misses, len(used))
							}
						} else if slots == nd.max && stats.Total().Hits == stats.Total().Lookups {
							t.Fatalf("%s: no miss at the minimum arena", what)
						}
						st.Close()
					}
				}
			}
		})
	}
}

// Cache-aware routing on qwen3next-mini (checkMoCE): 8 experts × 4 layers, top-2, 12 slots
// hold the 2 a token needs per layer and some reuse.
func TestQwen3NextMoCE(t *testing.T) {
	checkMoCE(t, "qwen3next-mini-f32.gguf", 12, 1)
}
