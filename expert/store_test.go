package expert

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/model"
)

var exactModels = []string{"qwen3moe-mini-f32.gguf", "qwen3moe-small-q8_0.gguf", "qwen3moe-small-q4_k_m.gguf"}

const (
	nPrompt = 40
	nGen    = 16
)

func openModel(t testing.TB, name string) (*gguf.File, *model.Model) {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "models", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, m
}

func promptIDs(m *model.Model) []int32 {
	r := rand.New(rand.NewPCG(7, 11))
	ids := make([]int32, nPrompt)
	for i := range ids {
		ids[i] = int32(r.IntN(m.Cfg.NVocab))
	}
	return ids
}

// need records the largest set of one layer's experts a chunk asks for.
type need struct {
	chunkOf func(pos int) int
	sets    map[[2]int]map[int32]bool
	max     int
}

func (n *need) Routed(layer, pos int, _ []float32, chosen []int32, _ []float32) {
	k := [2]int{n.chunkOf(pos), layer}
	if n.sets[k] == nil {
		n.sets[k] = map[int32]bool{}
	}
	for _, e := range chosen {
		n.sets[k][e] = true
	}
	n.max = max(n.max, len(n.sets[k]))
}

// result is a run's every logit (as bits) and its greedy tokens.
type result struct {
	logits []uint32
	gen    []int32
}

// generate prefills the prompt in chunks of chunk tokens (logits of every row), then
// decodes nGen greedy tokens.
func generate(m *model.Model, src model.ExpertSource, obs model.RouteObserver, prompt []int32, chunk int) (result, error) {
	s, err := model.NewSession(m, model.Options{Ctx: 256, Threads: 2, Experts: src, Observer: obs})
	if err != nil {
		return result{}, err
	}
	defer s.Close()
	return generateSession(m, s, prompt, chunk)
}

// generateSession is generate on a session made by the caller.
func generateSession(m *model.Model, s *model.Session, prompt []int32, chunk int) (result, error) {
	var r result
	var last []float32
	for i := 0; i < len(prompt); i += chunk {
		lg, err := s.Forward(prompt[i:min(i+chunk, len(prompt))], true)
		if err != nil {
			return r, err
		}
		for _, v := range lg {
			r.logits = append(r.logits, math.Float32bits(v))
		}
		last = lg[len(lg)-m.Cfg.NVocab:]
	}
	for g := 0; g < nGen; g++ {
		id := argmax(last)
		r.gen = append(r.gen, id)
		lg, err := s.Forward([]int32{id}, false)
		if err != nil {
			return r, err
		}
		for _, v := range lg {
			r.logits = append(r.logits, math.Float32bits(v))
		}
		last = lg
	}
	return r, nil
}

func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

func sameResult(t *testing.T, what string, got, want result) {
	t.Helper()
	if len(got.logits) != len(want.logits) {
		t.Fatalf("%s: %d logits, want %d", what, len(got.logits), len(want.logits))
	}
	for i := range got.logits {
		if got.logits[i] != want.logits[i] {
			t.Fatalf("%s: logit %d is %g, resident run %g", what, i, math.Float32frombits(got.logits[i]), math.Float32frombits(want.logits[i]))
		}
	}
	for i := range want.gen {
		if got.gen[i] != want.gen[i] {
			t.Fatalf("%s: greedy token %d is %d, resident run %d", what, i, got.gen[i], want.gen[i])
		}
	}
}

func expertBytes(m *model.Model) int64 { return layerBytes(m, 0) }

func layerBytes(m *model.Model, l int) int64 {
	L := &m.Layers[l]
	return int64(L.Gate.ExpertBytes + L.Up.ExpertBytes + L.Down.ExpertBytes)
}

// counted wraps a store and adds up, per Acquire, the bytes its misses must have read
// (layers of a Q4_K_M mix differ in expert size).
type counted struct {
	*Store
	m    *model.Model
	want int64
}

func (c *counted) Acquire(layer int, experts []int32) ([]model.ExpertWeights, error) {
	before := c.Stats().Total().Misses
	ws, err := c.Store.Acquire(layer, experts)
	c.want += (c.Stats().Total().Misses - before) * layerBytes(c.m, layer)
	return ws, err
}

// checkStats verifies the counters' invariants.
func checkStats(t *testing.T, what string, c *counted, prefillChunks, decodeTokens int) {
	t.Helper()
	st, m := c.Stats(), c.m
	for _, p := range []PhaseStats{st.Prefill, st.Decode} {
		if p.Hits+p.Misses != p.Lookups {
			t.Fatalf("%s: %d hits + %d misses != %d lookups", what, p.Hits, p.Misses, p.Lookups)
		}
		if p.DeviceBytes < p.BytesRead-p.AdoptedBytes {
			t.Fatalf("%s: %d bytes requested < %d bytes loaded by demand reads", what, p.DeviceBytes, p.BytesRead-p.AdoptedBytes)
		}
	}
	if got := st.Total().BytesRead; got != c.want {
		t.Fatalf("%s: %d bytes read, want %d (misses × expert bytes)", what, got, c.want)
	}
	if st.Total().Tokens != nPrompt+nGen || st.Decode.Tokens != int64(decodeTokens) {
		t.Fatalf("%s: %d tokens, %d of them decode; want %d, %d", what, st.Total().Tokens, st.Decode.Tokens, nPrompt+nGen, decodeTokens)
	}
	if st.Prefill.Acquires != int64(prefillChunks*len(m.Layers)) || st.Decode.Acquires != int64(decodeTokens*len(m.Layers)) {
		t.Fatalf("%s: %d prefill and %d decode acquires; want %d, %d", what, st.Prefill.Acquires, st.Decode.Acquires,
			prefillChunks*len(m.Layers), decodeTokens*len(m.Layers))
	}
}

// TestExactEveryArenaSize: with the store, greedy generation and every logit are
// bit-identical to the resident run for every arena size from the minimum to the whole
// expert set, with the prompt in one chunk and token by token, with and without direct I/O.
func TestExactEveryArenaSize(t *testing.T) {
	for _, name := range exactModels {
		t.Run(name, func(t *testing.T) {
			f, m := openModel(t, name)
			prompt := promptIDs(m)
			total := len(m.Layers) * m.Cfg.NExpert
			for _, chunk := range []int{nPrompt, 1} {
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
				if chunk == 1 && nd.max != m.Cfg.NExpertUsed {
					t.Fatalf("token-by-token run needs %d experts at once, want %d", nd.max, m.Cfg.NExpertUsed)
				}
				step := 1
				if testing.Short() {
					step = 5
				}
				for slots := nd.max; slots <= total; slots += step {
					modes := []bool{false}
					if slots == nd.max || slots == total || slots%7 == 0 {
						modes = append(modes, true) // direct I/O at a spread of sizes
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
						stats := st.Stats()
						if chunk == 1 {
							checkStats(t, what, cs, 0, nPrompt+nGen)
						} else {
							checkStats(t, what, cs, (nPrompt+chunk-1)/chunk, nGen)
						}
						if slots == total {
							// Everything fits: each expert used is read exactly once.
							used := map[[2]int32]bool{}
							for k, set := range nd.sets {
								for e := range set {
									used[[2]int32{int32(k[1]), e}] = true
								}
							}
							if stats.Total().Misses != int64(len(used)) {
								t.Fatalf("%s: %d misses with every expert fitting, want %d (distinct experts used)", what, stats.Total().Misses, len(used))
							}
						}
						if direct && !st.DirectIO() && slots == nd.max {
							t.Logf("%s: O_DIRECT refused here; the run used buffered reads", what)
						}
						if direct && st.DirectIO() {
							if stats.Total().DeviceBytes%Align != 0 {
								t.Fatalf("%s: direct reads of %d bytes are not aligned", what, stats.Total().DeviceBytes)
							}
						}
						st.Close()
					}
				}
				// One slot fewer than the largest set a chunk needs: an error that names
				// the minimum, not a panic or wrong output.
				if nd.max > 1 {
					st, err := New(m, f, Config{Slots: nd.max - 1})
					if err != nil {
						t.Fatal(err)
					}
					_, err = generate(m, st, nil, prompt, chunk)
					st.Close()
					if err == nil || !strings.Contains(err.Error(), "minimum arena") {
						t.Fatalf("chunk %d, %d slots: error %v, want one naming the minimum arena", chunk, nd.max-1, err)
					}
				}
			}
		})
	}
}

// faulty wraps a file with random delays and short reads, or with injected faults.
type faulty struct {
	f       *os.File
	mu      sync.Mutex
	rng     *rand.Rand
	delay   time.Duration // up to this, random
	short   bool          // return short reads at random
	failAt  int           // fail the failAt-th call (1-based) with errIO; 0: never
	eofFrom int64         // return io.EOF at and beyond this offset (a truncated file); 0: never
	stall   bool          // return (0, nil) forever
	calls   int
}

var errIO = errors.New("injected I/O error")

func (r *faulty) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.calls++
	call := r.calls
	var d time.Duration
	if r.delay > 0 {
		d = time.Duration(r.rng.Int64N(int64(r.delay)))
	}
	n := len(p)
	if r.short && n > 1 && r.rng.IntN(2) == 0 {
		n = 1 + r.rng.IntN(n-1)
	}
	r.mu.Unlock()
	time.Sleep(d)
	if r.stall {
		return 0, nil
	}
	if r.failAt > 0 && call == r.failAt {
		return 0, errIO
	}
	if r.eofFrom > 0 && off+int64(n) > r.eofFrom {
		k := max(0, int(r.eofFrom-off))
		k, _ = r.f.ReadAt(p[:k], off)
		return k, io.EOF
	}
	k, err := r.f.ReadAt(p[:n], off)
	if err == nil && k == n && n < len(p) {
		return k, nil // a short read with no error, as pread may return
	}
	return k, err
}

// TestTimingDoesNotMatter: random delays and short reads change nothing: the logits, the
// tokens and every counter but the wait time are the same as with the plain file.
func TestTimingDoesNotMatter(t *testing.T) {
	f, m := openModel(t, "qwen3moe-small-q8_0.gguf")
	prompt := promptIDs(m)
	want, err := generate(m, model.NewResident(m), nil, prompt, 8)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(m, f, Config{Slots: 20, Readers: 4, ReadSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generate(m, plain, nil, prompt, 8); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	ref := plain.Stats()
	for seed := uint64(1); seed <= 3; seed++ {
		fr := &faulty{f: f.OSFile(), rng: rand.New(rand.NewPCG(seed, 3)), delay: 100 * time.Microsecond, short: true}
		st, err := New(m, f, Config{Slots: 20, Readers: 4, QueueDepth: 1 + int(seed), ReadSize: 16 << 10, File: fr})
		if err != nil {
			t.Fatal(err)
		}
		got, err := generate(m, st, nil, prompt, 8)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		sameResult(t, fmt.Sprintf("seed %d", seed), got, want)
		s := st.Stats()
		for i, pair := range [][2]PhaseStats{{s.Prefill, ref.Prefill}, {s.Decode, ref.Decode}} {
			a, b := pair[0], pair[1]
			a.Wait, b.Wait = 0, 0
			if a != b {
				t.Fatalf("seed %d, phase %d: counters %+v differ from the plain file's %+v", seed, i, a, b)
			}
		}
		if fr.calls <= int(ref.Total().Reads) {
			t.Fatalf("seed %d: %d calls for %d reads: no short read was continued", seed, fr.calls, ref.Total().Reads)
		}
	}
}

// TestReadErrors: a truncated file, an I/O error or a reader that makes no progress is an
// error from Forward, never a panic, a hang or wrong weights; after a failed read the store
// holds nothing of the failed experts, so retrying gives the exact result.
func TestReadErrors(t *testing.T) {
	f, m := openModel(t, "qwen3moe-small-q8_0.gguf")
	prompt := promptIDs(m)
	want, err := generate(m, model.NewResident(m), nil, prompt, nPrompt)
	if err != nil {
		t.Fatal(err)
	}
	L := &m.Layers[len(m.Layers)-1]
	cut := L.Down.Offset + int64(L.Down.N*L.Down.ExpertBytes)/2

	cases := []struct {
		name string
		fr   *faulty
		want string
	}{
		{"truncated", &faulty{eofFrom: cut}, "truncated"},
		{"io error", &faulty{failAt: 5}, errIO.Error()},
		{"no progress", &faulty{stall: true}, io.ErrNoProgress.Error()},
	}
	for _, c := range cases {
		c.fr.f = f.OSFile()
		st, err := New(m, f, Config{Slots: 64, Readers: 2, File: c.fr})
		if err != nil {
			t.Fatal(err)
		}
		_, err = generate(m, st, nil, prompt, nPrompt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if st.Stats().Errors == 0 {
			t.Fatalf("%s: no failed read counted", c.name)
		}
		st.Close()
	}

	// A transient error mid-run: the failed Forward is retried on the same session and the
	// whole run stays bit-identical.
	fr := &faulty{f: f.OSFile(), failAt: 40}
	st, err := New(m, f, Config{Slots: 20, Readers: 2, File: fr})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := model.NewSession(m, model.Options{Ctx: 256, Threads: 2, Experts: st})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	forward := func(tok []int32, all bool) []float32 {
		for try := 0; ; try++ {
			lg, err := s.Forward(tok, all)
			if err == nil {
				return lg
			}
			if try > 0 || !errors.Is(err, errIO) {
				t.Fatalf("retry %d: %v", try, err)
			}
		}
	}
	var got result
	lg := forward(prompt, true)
	for _, v := range lg {
		got.logits = append(got.logits, math.Float32bits(v))
	}
	last := lg[len(lg)-m.Cfg.NVocab:]
	for g := 0; g < nGen; g++ {
		id := argmax(last)
		got.gen = append(got.gen, id)
		last = forward([]int32{id}, false)
		for _, v := range last {
			got.logits = append(got.logits, math.Float32bits(v))
		}
	}
	if st.Stats().Errors != 1 {
		t.Fatalf("%d failed reads, want 1 (the injected one)", st.Stats().Errors)
	}
	sameResult(t, "after a transient read error", got, want)
}

// TestTruncatedFile: the model file is cut short on disk after it was opened; reading the
// missing experts is an error naming the truncation, with and without direct I/O.
func TestTruncatedFile(t *testing.T) {
	src := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.gguf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the last tensor if it is a routed-expert one (the memory map of dense
	// weights must stay whole).
	var last *model.ExpertTensor
	var end int64
	for i := range f.Tensors {
		off, size := f.Range(&f.Tensors[i])
		end = max(end, off+size)
	}
	for l := range m.Layers {
		for _, et := range []*model.ExpertTensor{&m.Layers[l].Gate, &m.Layers[l].Up, &m.Layers[l].Down} {
			if et.Offset+int64(et.N*et.ExpertBytes) == end {
				last = et
			}
		}
	}
	if last == nil {
		t.Skip("the fixture's last tensor is not a routed-expert tensor")
	}
	if err := os.Truncate(path, last.Offset+int64(last.ExpertBytes)/2); err != nil {
		t.Fatal(err)
	}
	for _, direct := range []bool{false, true} {
		st, err := New(m, f, Config{Slots: 64, DirectIO: direct})
		if err != nil {
			t.Fatal(err)
		}
		_, err = generate(m, st, nil, promptIDs(m), nPrompt)
		st.Close()
		if err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("direct %v: error %v, want one naming the truncation", direct, err)
		}
	}
}

// TestLRU checks eviction order, protection of the experts an Acquire holds, and that the
// views hold the file's bytes.
func TestLRU(t *testing.T) {
	f, m := openModel(t, "qwen3moe-mini-f32.gguf")
	st, err := New(m, f, Config{Slots: 3, Readers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	L := &m.Layers[0]
	step := func(experts []int32, hits, misses int64) {
		t.Helper()
		before := st.Stats().Decode
		ws, err := st.Acquire(0, experts)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range experts {
			for _, p := range [][2]model.Weight{{ws[i].Gate, L.Gate.Expert(int(e))}, {ws[i].Up, L.Up.Expert(int(e))}, {ws[i].Down, L.Down.Expert(int(e))}} {
				if string(p[0].Data) != string(p[1].Data) || p[0].Rows != p[1].Rows || p[0].Type != p[1].Type {
					t.Fatalf("expert %d: %s differs from the file", e, p[1].Name)
				}
			}
		}
		st.Release(0)
		d := st.Stats().Decode.add(before, -1)
		if d.Hits != hits || d.Misses != misses {
			t.Fatalf("acquire %v: %d hits, %d misses; want %d, %d", experts, d.Hits, d.Misses, hits, misses)
		}
	}
	step([]int32{0, 1}, 0, 2)    // LRU: 0 1 (one free slot)
	step([]int32{1, 2}, 1, 1)    // 0 1 2
	step([]int32{3}, 0, 1)       // evicts 0: 1 2 3
	step([]int32{0, 2}, 1, 1)    // 2 is held, 0 evicts 1: 3 2 0
	step([]int32{1}, 0, 1)       // evicts 3: 2 0 1
	step([]int32{0, 1, 2}, 3, 0) // all resident
	step([]int32{3, 4, 5}, 0, 3) // replaces all three

	// Experts an unreleased Acquire holds are never evicted.
	if _, err := st.Acquire(0, []int32{3, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Acquire(1, []int32{0, 1}); err == nil || !strings.Contains(err.Error(), "unreleased") {
		t.Fatalf("second layer while the first holds 2 of 3 slots: %v", err)
	}
	st.Release(0)
	if _, err := st.Acquire(0, []int32{2, 1}); err == nil {
		t.Fatal("experts out of order accepted")
	}
	if _, err := st.Acquire(0, []int32{8}); err == nil {
		t.Fatal("expert 8 of 8 accepted")
	}
	if _, err := st.Acquire(7, []int32{0}); err == nil {
		t.Fatal("layer 7 of 2 accepted")
	}
	st.Close()
	if _, err := st.Acquire(0, []int32{6}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Acquire after Close: %v", err)
	}
}

// TestBadSizes: an arena below the minimum and a budget below the dense weights are clear
// errors that state the minimum.
func TestBadSizes(t *testing.T) {
	f, m := openModel(t, "qwen3moe-small-q8_0.gguf")
	_, err := New(m, f, Config{ArenaBytes: 100 << 10, ChunkTokens: 1})
	var small *ArenaTooSmallError
	if !errors.As(err, &small) || small.Min != 4*expertBytes(m) || !strings.Contains(err.Error(), "minimum") {
		t.Fatalf("100 KiB arena: %v, want an ArenaTooSmallError with minimum %d", err, 4*expertBytes(m))
	}
	if _, err := New(m, f, Config{ArenaBytes: -1}); err == nil {
		t.Fatal("negative arena accepted")
	}
	if _, err := Plan(m, f, 1<<20, PlanOptions{Ctx: 256, Chunk: 64}); err == nil || !strings.Contains(err.Error(), "too small") {
		t.Fatalf("1 MiB budget: %v", err)
	}
	b, err := Plan(m, f, 1<<40, PlanOptions{Ctx: 256, Chunk: 64})
	if err != nil {
		t.Fatal(err)
	}
	if b.Experts != 64 || b.Arena != 64*expertBytes(m) {
		t.Fatalf("1 TiB budget: %d experts in %d bytes, want all 64", b.Experts, b.Arena)
	}
	// A budget just at the minimum runs chunks of 64 tokens (16 experts of a layer).
	b, err = Plan(m, f, b.MinTotal, PlanOptions{Ctx: 256, Chunk: 64})
	if err != nil || b.Experts != 16 {
		t.Fatalf("minimum budget: %d experts, %v; want 16", b.Experts, err)
	}
	if _, err := Plan(m, f, b.MinTotal-1, PlanOptions{Ctx: 256, Chunk: 64}); err == nil {
		t.Fatal("one byte under the minimum accepted")
	}
	st, err := New(m, f, b.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Slots() != b.Experts || st.ArenaBytes() != b.Arena {
		t.Fatalf("store holds %d experts in %d bytes, plan said %d in %d", st.Slots(), st.ArenaBytes(), b.Experts, b.Arena)
	}
	if st.ArenaBytes() > 0 && uintptrOf(st.arena)%Align != 0 {
		t.Fatal("arena not aligned")
	}
}

// TestAutoChunk: the chunk sized from the budget is the largest power of two (up to
// MaxAutoChunk) whose plan fits and whose scratch fits the scratch share; a budget too small
// for any chunk gets 1, whose plan states the minimum.
func TestAutoChunk(t *testing.T) {
	f, m := openModel(t, "qwen3moe-small-q8_0.gguf")
	o := PlanOptions{Ctx: 256, Threads: 2}
	fits := func(mem int64, c int) bool {
		o := o
		o.Chunk = c
		b, err := Plan(m, f, mem, o)
		return err == nil && b.Scratch <= (mem-b.Dense-b.KV-b.Overhead-b.Shelf)/ScratchShareDiv
	}
	if c := AutoChunk(m, f, 1<<40, o); c != MaxAutoChunk {
		t.Fatalf("1 TiB budget: chunk %d, want %d", c, MaxAutoChunk)
	}
	if c := AutoChunk(m, f, 1<<20, o); c != 1 {
		t.Fatalf("1 MiB budget: chunk %d, want 1", c)
	}
	o.Chunk = 64
	lo, err := Plan(m, f, 1<<40, o)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, mem := range []int64{lo.MinTotal, lo.MinTotal * 2, lo.MinTotal * 4, lo.MinTotal * 16, lo.MinTotal * 64} {
		c := AutoChunk(m, f, mem, o)
		seen[c] = true
		if c&(c-1) != 0 || c > MaxAutoChunk || !fits(mem, c) || (c < MaxAutoChunk && fits(mem, 2*c)) {
			t.Fatalf("budget %d: chunk %d is not the largest power of two that fits", mem, c)
		}
	}
	if len(seen) < 2 {
		t.Fatalf("chunks %v: the budget should change the choice", seen)
	}
}
