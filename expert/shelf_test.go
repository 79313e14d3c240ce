package expert

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/model"
)

// sameCounters checks that prefetch changed none of the demand counters that describe
// residency: lookups, hits, misses, bytes loaded into the arena (reads, device bytes and
// wait are allowed to drop: adoptions replace reads).
func sameCounters(t *testing.T, what string, got, want Stats) {
	t.Helper()
	for i, pair := range [][2]PhaseStats{{got.Prefill, want.Prefill}, {got.Decode, want.Decode}} {
		a, b := pair[0], pair[1]
		if a.Tokens != b.Tokens || a.Acquires != b.Acquires || a.Lookups != b.Lookups || a.Hits != b.Hits ||
			a.Misses != b.Misses || a.BytesRead != b.BytesRead {
			t.Fatalf("%s, phase %d: counters %+v differ from prefetch off %+v", what, i, a, b)
		}
	}
}

// checkShelfStats: every prefetched byte was adopted or wasted (nothing stays on the shelf
// after a run: each prediction is for the layer acquired next), adoptions are misses,
// reads are demand reads of the misses not adopted.
func checkShelfStats(t *testing.T, what string, st Stats, prefetchOn bool) {
	t.Helper()
	for i, p := range []PhaseStats{st.Prefill, st.Decode} {
		if p.PrefetchBytes != p.AdoptedBytes+p.PrefetchWasted {
			t.Fatalf("%s, phase %d: %d prefetched bytes != %d adopted + %d wasted", what, i, p.PrefetchBytes, p.AdoptedBytes, p.PrefetchWasted)
		}
		if p.Adoptions > p.Misses || p.Adoptions > p.PrefetchExperts {
			t.Fatalf("%s, phase %d: %d adoptions, %d misses, %d prefetched", what, i, p.Adoptions, p.Misses, p.PrefetchExperts)
		}
		if p.DeviceBytes < p.BytesRead-p.AdoptedBytes {
			t.Fatalf("%s, phase %d: %d device bytes < %d demand bytes read", what, i, p.DeviceBytes, p.BytesRead-p.AdoptedBytes)
		}
	}
	if st.Prefill.PrefetchExperts != 0 {
		t.Fatalf("%s: %d experts prefetched in prefill (decode only)", what, st.Prefill.PrefetchExperts)
	}
	if prefetchOn && (st.Decode.PrefetchExperts == 0 || st.Decode.Adoptions == 0) {
		t.Fatalf("%s: prefetch on but %d experts prefetched, %d adopted", what, st.Decode.PrefetchExperts, st.Decode.Adoptions)
	}
}

// TestPrefetchExact: with the shelf on, logits and tokens are bit-identical to the resident
// run and the residency counters (hits, misses, bytes loaded) are those of the run without
// it, at several arena sizes and prefetch widths, with and without direct I/O, prompt in
// chunks and token by token, on a model with one size class and one with several.
func TestPrefetchExact(t *testing.T) {
	type run struct {
		chunk, slots, width int // slots and width in units of k; slots 0: half of all experts
		direct              bool
	}
	cases := []struct {
		name string
		runs []run
	}{
		{"qwen3moe-mini-f32.gguf", []run{{1, 1, 1, true}, {1, 1, 2, false}, {1, 0, 1, false}, {8, 9, 2, false}}},
		{"qwen3moe-small-q4_k_m.gguf", []run{{1, 1, 2, false}}},
		{"qwen3next-mini-f32.gguf", []run{{1, 1, 2, false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, m := openModel(t, tc.name)
			prompt := promptIDs(m)
			k, total := m.Cfg.NExpertUsed, len(m.Layers)*m.Cfg.NExpert
			wants := map[int]result{}
			for _, r := range tc.runs {
				slots := r.slots * k
				if slots == 0 {
					slots = total / 2
				}
				slots = min(slots, total)
				what := fmt.Sprintf("chunk %d, %d slots, prefetch %d, direct %v", r.chunk, slots, r.width*k, r.direct)
				want, ok := wants[r.chunk]
				if !ok {
					var err error
					if want, err = generate(m, model.NewResident(m), nil, prompt, r.chunk); err != nil {
						t.Fatal(err)
					}
					wants[r.chunk] = want
				}
				cfg := Config{Slots: slots, Readers: 3, ReadSize: 16 << 10, DirectIO: r.direct}
				off, err := New(m, f, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := generate(m, off, nil, prompt, r.chunk); err != nil {
					t.Fatal(err)
				}
				off.Close()
				cfg.Prefetch = r.width * k
				st, err := New(m, f, cfg)
				if err != nil {
					t.Fatal(err)
				}
				cs := &counted{Store: st, m: m}
				got, err := generate(m, cs, nil, prompt, r.chunk)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				st.Close()
				sameResult(t, what, got, want)
				sameCounters(t, what, st.Stats(), off.Stats())
				prefill, decode := 0, nPrompt+nGen
				if r.chunk > 1 {
					prefill, decode = (nPrompt+r.chunk-1)/r.chunk, nGen
				}
				checkStats(t, what, cs, prefill, decode)
				checkShelfStats(t, what, st.Stats(), slots < total/2)
				t.Logf("%s: %s", what, st.Stats().Decode.PrefetchString())
			}
		})
	}
}

// TestPrefetchMoCEDeterministic: with cache-aware routing (λ > 0) the shelf changes
// nothing routing sees: the output equals the run without prefetch, on every run, whatever
// the I/O timing (random delays and short reads).
func TestPrefetchMoCEDeterministic(t *testing.T) {
	f, m := openModel(t, "qwen3moe-small-q8_0.gguf")
	prompt := promptIDs(m)
	run := func(prefetch int, fr *faulty) (result, Stats) {
		cfg := Config{Slots: 24, Readers: 4, ReadSize: 16 << 10, Prefetch: prefetch}
		if fr != nil {
			cfg.File = fr
		}
		st, err := New(m, f, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s, err := model.NewSession(m, model.Options{Ctx: 256, Threads: 2, Experts: st, MoCE: model.MoCE{Lambda: 0.3, Protect: 2}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r, err := generateSession(m, s, prompt, nPrompt)
		if err != nil {
			t.Fatal(err)
		}
		return r, st.Stats()
	}
	base, baseStats := run(0, nil)
	for seed := uint64(1); seed <= 2; seed++ {
		fr := &faulty{f: f.OSFile(), rng: rand.New(rand.NewPCG(seed, 5)), delay: 200 * time.Microsecond, short: seed == 1}
		got, st := run(2*m.Cfg.NExpertUsed, fr)
		what := fmt.Sprintf("prefetch, seed %d", seed)
		sameResult(t, what, got, base)
		sameCounters(t, what, st, baseStats)
		checkShelfStats(t, what, st, true)
	}
}

// expertBytesOf is expert e of the layer as the memory map holds it (gate, up, down).
func expertBytesOf(m *model.Model, layer int, e int32) [3][]byte {
	L := &m.Layers[layer]
	return [3][]byte{L.Gate.Expert(int(e)).Data, L.Up.Expert(int(e)).Data, L.Down.Expert(int(e)).Data}
}

// TestShelfNeverEvicts: Prefetch changes neither the residency nor the LRU order; an
// Acquire that misses a prefetched expert adopts it (same victim as without a shelf, the
// file's bytes); unused entries are dropped and counted as wasted; a failed prefetch read
// falls back to a demand read.
func TestShelfNeverEvicts(t *testing.T) {
	f, m := openModel(t, "qwen3moe-mini-f32.gguf")
	k := m.Cfg.NExpertUsed
	check := func(st *Store, layer int, experts []int32, ws []model.ExpertWeights) {
		t.Helper()
		for i, e := range experts {
			want := expertBytesOf(m, layer, e)
			got := [3][]byte{ws[i].Gate.Data, ws[i].Up.Data, ws[i].Down.Data}
			for j := range want {
				if !bytes.Equal(got[j], want[j]) {
					t.Fatalf("layer %d expert %d matrix %d: wrong bytes", layer, e, j)
				}
			}
		}
	}
	seq := func(from int) []int32 {
		s := make([]int32, k)
		for i := range s {
			s[i] = int32(from + i)
		}
		return s
	}
	for _, fr := range []*faulty{nil, {f: f.OSFile(), failAt: 1}} {
		cfg := Config{Slots: k + 1, Readers: 2, Prefetch: k}
		if fr != nil {
			cfg.File = fr
		}
		st, err := New(m, f, cfg)
		if err != nil {
			t.Fatal(err)
		}
		a := seq(0)
		if fr != nil { // the first read (a prefetch) fails
			st.Prefetch(0, a)
		}
		ws, err := st.Acquire(0, a)
		if err != nil {
			t.Fatal(err)
		}
		check(st, 0, a, ws)
		st.Release(0)
		if fr != nil { // one read failed: its expert was read on demand, the others adopted
			d, eb := st.Stats().Decode, layerBytes(m, 0)
			if d.Adoptions != int64(k-1) || d.PrefetchWasted != eb || d.PrefetchBytes != int64(k)*eb || st.Stats().Errors != 0 || d.Misses != int64(k) {
				t.Fatalf("failed prefetch: %+v", d)
			}
		}
		before := st.Resident(0, nil)
		b := seq(k) // k new experts: k misses; one slot is free, k-1 evictions of a's LRU end
		st.Prefetch(0, append([]int32{a[0]}, b...))
		if after := st.Resident(0, nil); !bytes.Equal(u64bytes(after), u64bytes(before)) {
			t.Fatalf("Prefetch changed the residency: %x → %x", before, after)
		}
		d0 := st.Stats().Decode
		if d0.PrefetchExperts-boolInt(fr != nil)*int64(k) != int64(k) {
			t.Fatalf("%d experts prefetched, want %d (the resident one skipped)", d0.PrefetchExperts, k)
		}
		// Acquire half of b plus one resident expert: adopted half, the rest wasted.
		want := []int32{a[k-1], b[0], b[1]}
		ws, err = st.Acquire(0, want)
		if err != nil {
			t.Fatal(err)
		}
		check(st, 0, want, ws)
		st.Release(0)
		d := st.Stats().Decode.add(d0, -1)
		eb := layerBytes(m, 0)
		if d.Misses != 2 || d.Adoptions != 2 || d.Reads != 0 || d.AdoptedBytes != 2*eb || d.PrefetchWasted != int64(k-2)*eb {
			t.Fatalf("after adopting: %+v", d)
		}
		// LRU as without a shelf: b[0] took the free slot, b[1] the least recent (a[0]).
		res := st.Resident(0, nil)
		for _, e := range append([]int32{a[0]}, a[1:]...) {
			if got, want := res[0]>>uint(e)&1 != 0, e != a[0]; got != want {
				t.Fatalf("expert %d resident %v, want %v: residency %x", e, got, want, res)
			}
		}
		for _, e := range b[:2] {
			if res[0]>>uint(e)&1 == 0 {
				t.Fatalf("expert %d is not resident: residency %x", e, res)
			}
		}
		st.Close()
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func u64bytes(x []uint64) []byte {
	var b []byte
	for _, v := range x {
		b = fmt.Appendf(b, "%016x", v)
	}
	return b
}

// predictionRecorder measures the session's next-layer prediction against the routing it
// predicts: it is a resident expert source that asks for width experts.
type predictionRecorder struct {
	*model.Resident
	width     int
	pending   map[int][]int32
	hit, pred int64
	actual    int64
	hitK      int64 // hits among the top-k of the prediction
}

func (r *predictionRecorder) PrefetchWidth() int { return r.width }
func (r *predictionRecorder) Prefetch(layer int, experts []int32) {
	r.pending[layer] = append(r.pending[layer][:0], experts...)
}

func (r *predictionRecorder) Routed(layer, _ int, _ []float32, chosen []int32, _ []float32) {
	p, ok := r.pending[layer]
	if !ok {
		return
	}
	delete(r.pending, layer)
	for _, e := range chosen {
		for i, q := range p {
			if q == e {
				r.hit++
				if i < len(chosen) {
					r.hitK++
				}
			}
		}
	}
	r.pred += int64(len(p))
	r.actual += int64(len(chosen))
}

// measurePrediction decodes n tokens after a prompt, token by token, and returns the
// prediction's precision and recall at width, and recall of its top k.
func measurePrediction(t testing.TB, f *gguf.File, m *model.Model, prompt []int32, n, width int) (precision, recall, recallK float64) {
	r := &predictionRecorder{Resident: model.NewResident(m), width: width, pending: map[int][]int32{}}
	s, err := model.NewSession(m, model.Options{Ctx: len(prompt) + n + 1, Threads: 2, Experts: r, Observer: r})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lg, err := s.Forward(prompt, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if lg, err = s.Forward([]int32{argmax(lg)}, false); err != nil {
			t.Fatal(err)
		}
	}
	return float64(r.hit) / float64(r.pred), float64(r.hit) / float64(r.actual), float64(r.hitK) / float64(r.actual)
}

// TestPredictionQuality: the next-layer prediction is much better than chance on the
// fixture models (and, with REGOLITH_PREFETCH_MODEL=FILE.gguf, reports on that model).
func TestPredictionQuality(t *testing.T) {
	type target struct {
		f *gguf.File
		m *model.Model
	}
	var targets []target
	names := []string{"qwen3moe-small-q8_0.gguf"}
	for _, n := range names {
		f, m := openModel(t, n)
		targets = append(targets, target{f, m})
	}
	if p := os.Getenv("REGOLITH_PREFETCH_MODEL"); p != "" {
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := model.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, target{f, m})
		names = append(names, p)
	}
	for i, tg := range targets {
		k, E := tg.m.Cfg.NExpertUsed, tg.m.Cfg.NExpert
		for _, w := range []int{k, 2 * k} {
			p, r, rk := measurePrediction(t, tg.f, tg.m, promptIDs(tg.m)[:8], 64, w)
			t.Logf("%s: width %d: precision %.3f, recall %.3f (chance %.3f), recall of its top %d %.3f", names[i], w, p, r, float64(w)/float64(E), k, rk)
			if chance := float64(w) / float64(E); i == 0 && r < chance+(1-chance)/2 {
				t.Fatalf("%s: recall %.3f at width %d is near chance %.3f", names[i], r, w, float64(w)/float64(E))
			}
		}
	}
}

// TestPlanShelf: the shelf is taken from the budget, and the store allocates what the plan
// counted.
func TestPlanShelf(t *testing.T) {
	f, m := openModel(t, "qwen3moe-small-q8_0.gguf")
	o := PlanOptions{Ctx: 256, Chunk: 8}
	big, err := Plan(m, f, 1<<40, o)
	if err != nil {
		t.Fatal(err)
	}
	mem := big.MinTotal + (big.Arena-big.MinArena)/2 // half the experts that are not the minimum
	off, err := Plan(m, f, mem, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Prefetch = 8
	on, err := Plan(m, f, mem, o)
	if err != nil {
		t.Fatal(err)
	}
	if on.Shelf <= 0 || on.Arena+on.Shelf > off.Arena || on.MinTotal != off.MinTotal+on.Shelf {
		t.Fatalf("shelf %d, arena %d (without a shelf %d), minimum %d (%d)", on.Shelf, on.Arena, off.Arena, on.MinTotal, off.MinTotal)
	}
	st, err := New(m, f, on.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.ShelfBytes() != on.Shelf || st.PrefetchWidth() != 8 || st.ArenaBytes() != on.Arena {
		t.Fatalf("store: shelf %d, width %d, arena %d; plan: shelf %d, arena %d", st.ShelfBytes(), st.PrefetchWidth(), st.ArenaBytes(), on.Shelf, on.Arena)
	}
}
