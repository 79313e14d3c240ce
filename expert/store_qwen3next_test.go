package expert

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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

// Cache-aware routing on qwen3next-mini: λ = 0 is the exact model; λ = 0.3 really changes
// routing, is the same on every run whatever the I/O timing (random delays and short
// reads), and misses less than the exact model at the same arena.
func TestQwen3NextMoCE(t *testing.T) {
	f, m := openModel(t, "qwen3next-mini-f32.gguf")
	prompt := promptIDs(m)
	// 8 experts × 4 layers, top-2: 12 slots hold the 2 a token needs per layer and some reuse.
	run := func(lambda float32, fr *faulty) (result, Stats) {
		cfg := Config{Slots: 12, Readers: 4, ReadSize: 16 << 10}
		if fr != nil {
			cfg.File = fr
		}
		st, err := New(m, f, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s, err := model.NewSession(m, model.Options{Ctx: 256, Threads: 2, Experts: st, MoCE: model.MoCE{Lambda: lambda, Protect: 1}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r, err := generateSession(m, s, prompt, 8)
		if err != nil {
			t.Fatal(err)
		}
		return r, st.Stats()
	}
	exact, err := generate(m, model.NewResident(m), nil, prompt, 8)
	if err != nil {
		t.Fatal(err)
	}
	zero, exactStats := run(0, nil)
	sameResult(t, "lambda 0", zero, exact)

	base, baseStats := run(0.3, nil)
	if slices.Equal(base.logits, exact.logits) {
		t.Fatal("lambda 0.3 changed nothing: cache-aware routing is not wired for qwen3next")
	}
	for seed := uint64(1); seed <= 3; seed++ {
		fr := &faulty{f: f.OSFile(), rng: rand.New(rand.NewPCG(seed, 17)), delay: 300 * time.Microsecond, short: true}
		got, st := run(0.3, fr)
		sameResult(t, fmt.Sprintf("lambda 0.3, seed %d", seed), got, base)
		a, b := st.Total(), baseStats.Total()
		if a.Hits != b.Hits || a.Misses != b.Misses || a.BytesRead != b.BytesRead {
			t.Fatalf("seed %d: %d hits %d misses %d bytes, undelayed run %d %d %d", seed, a.Hits, a.Misses, a.BytesRead, b.Hits, b.Misses, b.BytesRead)
		}
	}
	if baseStats.Total().Misses >= exactStats.Total().Misses {
		t.Fatalf("misses with lambda 0.3: %d, exact: %d", baseStats.Total().Misses, exactStats.Total().Misses)
	}
	t.Logf("misses: exact %d, lambda 0.3 protect 1: %d", exactStats.Total().Misses, baseStats.Total().Misses)
}
