package expert

import (
	"runtime"
	"testing"

	"github.com/regolith/regolith/kvcache"
	"github.com/regolith/regolith/model"
)

// A --mem plan for qwen3next counts what a session really allocates: keys and values of the
// full-attention layers only (the session's own cache), the Gated DeltaNet state with every
// checkpoint kept, and per token of a chunk at least the scratch a session grows by when its
// chunks grow (the Gated DeltaNet's and gated attention's activations and the shared expert
// included), measured on the heap.
func TestPlanQwen3NextMemory(t *testing.T) {
	f, m := openModel(t, "qwen3next-small-q8_0.gguf")
	const ctx = 2048
	plan := func(chunk int) Budget {
		b, err := Plan(m, f, 1<<40, PlanOptions{Ctx: ctx, Chunk: chunk, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// heap is what a session holds after prefilling 1280 tokens in chunks of chunk tokens
	// (a checkpoint after every chunk: more than the kept maximum).
	heap := func(chunk int) int64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := model.NewSession(m, model.Options{Ctx: ctx, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		b := plan(chunk)
		c := s.Cache()
		if c.Bytes() != b.KV || c.Layers != m.Cfg.Next.NAttn {
			t.Fatalf("plan counts %d KV bytes, the session's cache has %d (%d layers)", b.KV, c.Bytes(), c.Layers)
		}
		if c.Rec == nil || c.Rec.Bytes()*(1+kvcache.DefaultMaxCheckpoints) != b.Recurrent || c.Rec.MaxCheckpoints != kvcache.DefaultMaxCheckpoints {
			t.Fatalf("plan counts %d bytes of recurrent state, the session %v", b.Recurrent, c.Rec)
		}
		prompt := make([]int32, chunk)
		for i := 0; i < 1280/chunk; i++ {
			for j := range prompt {
				prompt[j] = int32((i*chunk + j) * 7919 % m.Cfg.NVocab)
			}
			if _, err := s.Forward(prompt, false); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(c.Rec.Checkpoints()); n != kvcache.DefaultMaxCheckpoints {
			t.Fatalf("%d checkpoints kept, want %d", n, kvcache.DefaultMaxCheckpoints)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(s)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	small, large := heap(64), heap(128)
	perToken := float64(large-small) / 64
	planned := float64(plan(128).Scratch-plan(64).Scratch) / 64
	t.Logf("session heap %d (chunks of 64), %d (128): %.0f bytes per token of a chunk; the plan counts %.0f; mixers %d",
		small, large, perToken, planned, 4*m.Cfg.MixerScratchFloats())
	if perToken <= 0 || perToken > planned {
		t.Fatalf("a chunk token costs %.0f bytes of scratch, the plan counts %.0f", perToken, planned)
	}
}
