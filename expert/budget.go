package expert

import (
	"fmt"
	"strings"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/units"
	"github.com/regolith/regolith/kvcache"
	"github.com/regolith/regolith/model"
)

// PlanOptions are the settings that decide what a memory budget must hold besides the arena.
type PlanOptions struct {
	Ctx      int  // KV cache positions
	Chunk    int  // largest prefill chunk (tokens per Forward); sets scratch and the minimum arena
	Threads  int  // worker threads (each has attention scratch of Ctx floats)
	DirectIO bool // slots padded for aligned reads
	Prefetch int  // prefetch shelf entries per size class (Config.Prefetch; 0: no shelf)
}

// Budget is how a memory budget (--mem) is split: dense weights, KV cache, scratch and
// overhead come first; the arena gets the rest, capped at the whole expert set.
type Budget struct {
	Total        int64 `json:"total_bytes"`
	Dense        int64 `json:"dense_bytes"`                     // dense weights, resident in the memory map
	KV           int64 `json:"kv_cache_bytes"`                  // F16 keys and values for Ctx positions
	Recurrent    int64 `json:"recurrent_state_bytes,omitempty"` // qwen3next: the live state and its checkpoints
	Scratch      int64 `json:"scratch_bytes"`                   // activations and buffers of one Chunk
	Overhead     int64 `json:"overhead_bytes"`                  // Go runtime, tokenizer, stacks (estimate)
	Shelf        int64 `json:"shelf_bytes"`                     // the prefetch shelf (Prefetch slots per size class)
	Prefetch     int   `json:"prefetch"`
	Arena        int64 `json:"arena_bytes"`
	MinArena     int64 `json:"min_arena_bytes"` // holds the experts one chunk of Chunk tokens may need
	MinTotal     int64 `json:"min_total_bytes"` // the smallest budget that runs: everything above with MinArena
	Experts      int   `json:"arena_experts"`   // experts the arena holds
	TotalExperts int   `json:"total_experts"`
	ExpertBytes  int64 `json:"routed_expert_bytes"` // every routed expert's bytes
	Chunk        int   `json:"chunk"`
}

// Plan splits a memory budget of mem bytes. It fails with the minimum budget when mem
// cannot hold the dense weights, KV cache, scratch, overhead and the minimum arena.
func Plan(m *model.Model, f *gguf.File, mem int64, o PlanOptions) (Budget, error) {
	c := m.Cfg
	if o.Ctx <= 0 {
		o.Ctx = 4096
	}
	if o.Chunk <= 0 {
		o.Chunk = 512
	}
	if o.Threads <= 0 {
		o.Threads = 1
	}
	sum := model.Summarize(f)
	b := Budget{Total: mem, Dense: sum.DenseBytes, ExpertBytes: sum.ExpertBytes, Chunk: o.Chunk, Prefetch: max(0, o.Prefetch)}
	b.KV = int64(c.KVLayers()) * int64(o.Ctx) * int64(c.NHeadKV*c.HeadDim) * 4
	b.Recurrent = c.RecurrentStateBytes() * (1 + kvcache.DefaultMaxCheckpoints)
	D, qd, kvd, F, E, K := int64(c.NEmbd), int64(c.NHead*c.HeadDim), int64(c.NHeadKV*c.HeadDim), int64(c.NFFExp), int64(c.NExpert), int64(c.NExpertUsed)
	// Per token of a chunk: x, h, o, moe; q, att; k, v; router; weights, chosen; every
	// slot's weighted output; the largest expert group's input, gate, up and output; the
	// quantized activations and their tile packing (at most 4 bytes per element each);
	// qwen3next's mixers and shared expert.
	perToken := 4 * (4*D + 2*qd + 2*kvd + E + 2*K + K*D + 2*D + 2*F + 2*max(D, qd, F) + int64(c.MixerScratchFloats()))
	b.Scratch = int64(o.Chunk)*perToken + 4*int64(c.NVocab) + int64(o.Threads)*4*(int64(o.Ctx)+4*int64(c.HeadDim)) + 4*E
	b.Overhead = 16<<20 + 96*int64(c.NVocab)

	classes, _, err := buildClasses(m, int64(f.Size), o.DirectIO)
	if err != nil {
		return b, err
	}
	for _, k := range classes {
		b.TotalExperts += k.experts
		b.Shelf += int64(min(b.Prefetch, k.maxN)) * k.slotSize
	}
	mins := minSlots(classes, o.Chunk, c.NExpertUsed)
	for i, k := range mins {
		b.MinArena += int64(k) * classes[i].slotSize
	}
	fixed := b.Dense + b.KV + b.Recurrent + b.Scratch + b.Overhead + b.Shelf
	b.MinTotal = fixed + b.MinArena
	if mem < b.MinTotal {
		shelf := ""
		if b.Shelf > 0 {
			shelf = fmt.Sprintf(" + prefetch shelf %s", units.FormatBytes(b.Shelf))
		}
		return b, fmt.Errorf("--mem %s is too small: dense weights %s + KV cache %s (%d positions)%s + scratch %s (chunks of %d tokens) + overhead %s%s + the minimum expert arena %s (the experts one chunk may need at once) = %s; raise --mem to at least that, or lower -c / -b",
			units.FormatBytes(mem), units.FormatBytes(b.Dense), units.FormatBytes(b.KV), o.Ctx, b.recurrentPart(), units.FormatBytes(b.Scratch), o.Chunk,
			units.FormatBytes(b.Overhead), shelf, units.FormatBytes(b.MinArena), units.FormatBytes(b.MinTotal))
	}
	counts, total, err := slotCounts(classes, mem-fixed, 0, mins)
	if err != nil {
		return b, err
	}
	b.Arena = total
	for _, n := range counts {
		b.Experts += n
	}
	return b, nil
}

// MaxAutoChunk caps the prefill chunk AutoChunk picks.
const MaxAutoChunk = 8192

// ScratchShareDiv sets the budget's scratch share for AutoChunk: the chunk's scratch may take
// at most 1/ScratchShareDiv of what the budget has left after the dense weights, KV cache,
// overhead and prefetch shelf, so the arena (decode's hit rate) keeps nearly all of it.
const ScratchShareDiv = 16

// AutoChunk is the prefill chunk for a budget of mem bytes when none was asked for: the
// largest power of two up to MaxAutoChunk whose plan fits mem and whose scratch fits the
// scratch share (see ScratchShareDiv). A larger chunk makes each expert it needs resident
// once for more tokens, so streamed prefill reads fewer bytes per token. When no chunk fits,
// it returns 1, whose plan has the smallest minimum budget (Plan's error then states it).
// o.Chunk is ignored.
func AutoChunk(m *model.Model, f *gguf.File, mem int64, o PlanOptions) int {
	for c := MaxAutoChunk; c > 1; c /= 2 {
		o.Chunk = c
		b, err := Plan(m, f, mem, o)
		if err == nil && b.Scratch <= (mem-b.Dense-b.KV-b.Recurrent-b.Overhead-b.Shelf)/ScratchShareDiv {
			return c
		}
	}
	return 1
}

// Config is a store configuration with this budget's arena and chunk.
func (b Budget) Config() Config {
	return Config{ArenaBytes: b.Arena, ChunkTokens: b.Chunk, Prefetch: b.Prefetch}
}

// String says what the budget chose, for stderr.
func (b Budget) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "memory budget %s: dense weights %s (memory-mapped) + KV cache %s%s + scratch %s + overhead %s; expert arena %s",
		units.FormatBytes(b.Total), units.FormatBytes(b.Dense), units.FormatBytes(b.KV), b.recurrentPart(), units.FormatBytes(b.Scratch),
		units.FormatBytes(b.Overhead), units.FormatBytes(b.Arena))
	if b.Shelf > 0 {
		fmt.Fprintf(&s, " (less a prefetch shelf of %s)", units.FormatBytes(b.Shelf))
	}
	fmt.Fprintf(&s, " holds %d of %d experts (%.1f%% of %s)", b.Experts, b.TotalExperts,
		100*float64(b.Experts)/float64(max(1, b.TotalExperts)), units.FormatBytes(b.ExpertBytes))
	if b.Experts == b.TotalExperts {
		fmt.Fprintf(&s, "; every expert fits, %s of the budget is unused", units.FormatBytes(b.Total-b.Dense-b.KV-b.Recurrent-b.Scratch-b.Overhead-b.Shelf-b.Arena))
	}
	return s.String()
}

// recurrentPart names the recurrent state's share of the budget, "" when there is none.
func (b Budget) recurrentPart() string {
	if b.Recurrent == 0 {
		return ""
	}
	return fmt.Sprintf(" + recurrent state %s (with %d checkpoints)", units.FormatBytes(b.Recurrent), kvcache.DefaultMaxCheckpoints)
}
