package expert

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/regolith/regolith/model"
)

// Cache-aware routing reads the store's residency: with lambda = 0 the output is the exact
// model's; with lambda > 0 it is the same on every run whatever the I/O timing (random
// delays and short reads: the stats too), it really changes routing, and it misses less.
func TestMoCEDeterministicAndEffective(t *testing.T) {
	checkMoCE(t, "qwen3moe-small-q8_0.gguf", 24, 2)
}

// checkMoCE is TestMoCEDeterministicAndEffective's check on one model, with an arena of
// slots experts and protect.
func checkMoCE(t *testing.T, name string, slots, protect int) {
	f, m := openModel(t, name)
	prompt := promptIDs(m)
	run := func(lambda float32, fr *faulty) (result, Stats) {
		cfg := Config{Slots: slots, Readers: 4, ReadSize: 16 << 10}
		if fr != nil {
			cfg.File = fr
		}
		st, err := New(m, f, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s, err := model.NewSession(m, model.Options{Ctx: 256, Threads: 2, Experts: st, MoCE: model.MoCE{Lambda: lambda, Protect: protect}})
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
		t.Fatal("lambda 0.3 changed nothing: cache-aware routing is not wired")
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
	t.Logf("%s: misses exact %d, lambda 0.3 protect %d: %d", name, exactStats.Total().Misses, protect, baseStats.Total().Misses)
}

func TestMoCENeedsResidency(t *testing.T) {
	_, m := openModel(t, "qwen3moe-small-q8_0.gguf")
	if _, err := model.NewSession(m, model.Options{Ctx: 64, MoCE: model.MoCE{Lambda: 0.1}}); err == nil {
		t.Fatal("cache-aware routing without an expert store: no error")
	}
}
