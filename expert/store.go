// Package expert is the expert store: routed experts stream from the GGUF file through a
// fixed arena in RAM, while dense weights stay resident (memory-mapped).
//
// The arena is one allocation, aligned to 4096 bytes, cut into slots by size class: the
// layers whose routed experts have the same gate, up and down sizes share a class, and one
// slot holds one expert's three matrices (three reads, or more when a matrix is split into
// pieces of Config.ReadSize). It never grows. A pool of reader goroutines issues positional
// reads (pread) straight into slots. With DirectIO the file is opened with O_DIRECT and each
// matrix is read as the 4096-aligned range covering it (slots are sized with that padding)
// and viewed at the right offset inside; without it the store advises the kernel to drop
// what it read (POSIX_FADV_DONTNEED), so the page cache neither helps nor hides misses.
//
// Eviction is least recently used, over the slots of a class, and never evicts an expert
// that an Acquire not yet Released holds: every expert one Acquire asks for is resident at
// once. So the minimum arena holds, for each class, the largest set of experts of one layer
// that one chunk can need: n_expert_used for decode (one token), up to n_expert for a chunk
// of n_expert/n_expert_used tokens or more (MinSlots). An Acquire that needs more slots than
// its class has fails with an error that states the minimum.
//
// With Config.Prefetch, a prefetch shelf (shelf.go) reads the experts the session predicts
// for the next layer in decode into buffers apart from the arena; a miss that finds its
// expert there adopts it instead of reading. The shelf never evicts and never changes the
// residency.
//
// Exactness class: exact. The store hands the model the same bytes the memory map holds, so
// logits are bit-identical to the resident run for every arena size; which experts are
// resident depends only on the sequence of Acquire calls, never on I/O timing (nor on the
// shelf).
package expert

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unsafe"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/units"
	"github.com/regolith/regolith/model"
)

// Align is the alignment of the arena, of every slot and, with direct I/O, of every read.
const Align = 4096

// Config configures a Store.
type Config struct {
	// ArenaBytes is the arena size; it is cut into slots, split between size classes in
	// proportion to their experts' bytes after each class gets its minimum (MinSlots for
	// ChunkTokens). Capped at the whole expert set.
	ArenaBytes int64
	// Slots, when > 0, overrides ArenaBytes: every size class gets this many slots (at
	// most its number of experts).
	Slots int
	// ChunkTokens is the largest chunk the model will run (prefill -b); it sets the minimum
	// arena. 0: n_expert/n_expert_used rounded up, the size at which a chunk can need
	// every expert of a layer.
	ChunkTokens int
	// Readers is the number of reader goroutines, each with one positional read in flight
	// (so the device sees up to Readers requests). 0: 4.
	Readers int
	// QueueDepth is how many read requests may wait for a reader; Acquire blocks on
	// submitting more. 0: 4 × Readers.
	QueueDepth int
	// ReadSize splits a matrix's read into pieces of at most this many bytes (rounded up
	// to 4096), so that one expert's reads spread over readers. 0: 1 MiB.
	ReadSize int64
	// DirectIO opens the file with O_DIRECT (Linux). If the filesystem refuses it, the
	// store says so on Log and reads through the page cache (advising it to drop pages).
	DirectIO bool
	// File replaces the GGUF file's own descriptor for reads (tests inject faults with
	// it). It must read the same bytes at the same absolute offsets. DirectIO is ignored.
	File io.ReaderAt
	// Log receives notes (the direct I/O fallback). nil: discarded.
	Log io.Writer
	// Prefetch, when > 0, turns the prefetch shelf on (shelf.go): in decode the session
	// predicts this many experts of the next layer, and the store reads the predicted
	// experts that are not resident onto a shelf of this many slots per size class,
	// allocated apart from the arena.
	Prefetch int
}

// class is a size class: the slots that hold the experts of layers of one shape.
type class struct {
	parts    [3]partShape // gate, up, down
	slotSize int64        // bytes of one slot (three parts, each padded to Align)
	layers   []int        // layers in this class
	experts  int          // experts in all its layers
	maxN     int          // largest n_expert of its layers
	slots    []slot
	// LRU list over slot indices: head is the least recently used.
	head, tail int32
	shelf      []shelfEntry // the prefetch shelf (shelf.go)
}

type partShape struct {
	bytes int64 // one expert's bytes of this matrix
	cap   int64 // room in the slot (covering aligned range with direct I/O)
	off   int64 // offset of the part in the slot
}

type slot struct {
	data       []byte
	layer      int32 // -1: free
	expert     int32
	pins       int32
	prev, next int32
}

// Store is the expert store; it implements model.ExpertSource. One session uses a store at
// a time (Acquire and Release are serialized by a mutex).
type Store struct {
	m       *model.Model
	cfg     Config
	arena   []byte
	classes []*class
	layerC  []*class  // layer → its class
	where   [][]int32 // [layer][expert] → slot index in its class, or -1
	pinned  [][]int32 // [layer] → slots pinned by the Acquire not yet Released
	out     [][]model.ExpertWeights
	io      *readers
	shelf   []byte // the shelf's allocation, apart from the arena
	direct  bool
	tokens  int // tokens of the current chunk (BeginChunk); 0: unknown (decode)

	mu      sync.Mutex
	statsMu sync.Mutex
	stats   Stats
}

var _ model.ExpertSource = (*Store)(nil)

// New builds the store over the model's routed-expert tensors in f and starts its readers.
// Close stops them.
func New(m *model.Model, f *gguf.File, cfg Config) (*Store, error) {
	if m == nil || f == nil {
		return nil, errors.New("expert: no model")
	}
	if len(m.Layers) == 0 || m.Cfg.NExpert <= 0 || m.Cfg.NExpertUsed <= 0 {
		return nil, errors.New("expert: the model has no routed experts")
	}
	if cfg.Readers <= 0 {
		cfg.Readers = 4
	}
	if cfg.QueueDepth <= 0 {
		cfg.QueueDepth = 4 * cfg.Readers
	}
	if cfg.ReadSize <= 0 {
		cfg.ReadSize = 1 << 20
	}
	cfg.ReadSize = alignUp(cfg.ReadSize, Align)
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	s := &Store{m: m, cfg: cfg}

	// Open the file: a test's reader, O_DIRECT, or the GGUF file's own descriptor.
	var src io.ReaderAt
	var fd uintptr
	var hasFd bool
	closeSrc := func() error { return nil }
	switch {
	case cfg.File != nil:
		src = cfg.File
	default:
		osf := f.OSFile()
		if osf == nil {
			return nil, errors.New("expert: the GGUF file was parsed from memory; the store needs a file to read")
		}
		if cfg.DirectIO {
			d, err := openDirect(osf.Name(), probeOffset(m))
			if err != nil {
				fmt.Fprintf(cfg.Log, "expert: direct I/O is not available (%v); reading through the page cache and advising it to drop what was read\n", err)
			} else {
				src, closeSrc, s.direct = d, d.Close, true
			}
		}
		if src == nil {
			src, fd, hasFd = osf, osf.Fd(), true
		}
	}
	if err := s.layout(f); err != nil {
		closeSrc()
		return nil, err
	}
	s.io = startReaders(src, closeSrc, fd, hasFd && !s.direct, s.direct, cfg.Readers, cfg.QueueDepth, s.shelfReads())
	return s, nil
}

// probeOffset is a file offset inside the routed experts, for the direct I/O probe read.
func probeOffset(m *model.Model) int64 { return m.Layers[0].Gate.Offset }

// layout computes the size classes and cuts the arena.
func (s *Store) layout(f *gguf.File) error {
	classes, layerC, err := buildClasses(s.m, int64(f.Size), s.direct)
	if err != nil {
		return err
	}
	s.classes, s.layerC = classes, layerC
	m := s.m
	s.where = make([][]int32, len(m.Layers))
	s.pinned = make([][]int32, len(m.Layers))
	s.out = make([][]model.ExpertWeights, len(m.Layers))
	for l := range m.Layers {
		n := m.Layers[l].Gate.N
		s.where[l] = make([]int32, n)
		for e := range s.where[l] {
			s.where[l][e] = -1
		}
		s.out[l] = make([]model.ExpertWeights, 0, n)
	}
	counts, total, err := slotCounts(classes, s.cfg.ArenaBytes, s.cfg.Slots, minSlots(classes, chunkTokens(m, s.cfg.ChunkTokens), m.Cfg.NExpertUsed))
	if err != nil {
		if e, ok := err.(*ArenaTooSmallError); ok {
			e.Chunk = chunkTokens(m, s.cfg.ChunkTokens)
		}
		return err
	}
	arena, err := allocAligned(total)
	if err != nil {
		return err
	}
	s.arena = arena
	var off int64
	for i, c := range s.classes {
		c.slots = make([]slot, counts[i])
		for j := range c.slots {
			c.slots[j] = slot{data: arena[off : off+c.slotSize : off+c.slotSize], layer: -1, expert: -1,
				prev: int32(j - 1), next: int32(j + 1)}
			off += c.slotSize
		}
		c.slots[len(c.slots)-1].next = -1
		c.head, c.tail = 0, int32(len(c.slots)-1)
	}
	return s.layoutShelf()
}

// buildClasses groups the layers by their experts' shape and sizes each class's slot.
func buildClasses(m *model.Model, size int64, direct bool) (classes, layerC []*class, err error) {
	layerC = make([]*class, len(m.Layers))
	for l := range m.Layers {
		L := &m.Layers[l]
		ts := [3]*model.ExpertTensor{&L.Gate, &L.Up, &L.Down}
		var shape [3]partShape
		n := ts[0].N
		for i, t := range ts {
			if t.N != n || t.N <= 0 || t.ExpertBytes <= 0 {
				return nil, nil, fmt.Errorf("expert: layer %d: malformed expert tensor %s (%d experts of %d bytes)", l, t.Name, t.N, t.ExpertBytes)
			}
			end := t.Offset + int64(t.N)*int64(t.ExpertBytes)
			if t.Offset < 0 || end > size || end < t.Offset {
				return nil, nil, fmt.Errorf("expert: layer %d: %s [%d, %d) lies outside the %d-byte file", l, t.Name, t.Offset, end, size)
			}
			shape[i].bytes = int64(t.ExpertBytes)
			shape[i].cap = alignUp(int64(t.ExpertBytes), 64)
			if direct {
				for e := 0; e < n; e++ {
					off := t.Offset + int64(e)*int64(t.ExpertBytes)
					shape[i].cap = max(shape[i].cap, alignUp(off+int64(t.ExpertBytes), Align)-alignDown(off, Align))
				}
			}
			shape[i].cap = alignUp(shape[i].cap, Align)
		}
		var c *class
		for _, k := range classes {
			if k.parts[0].bytes == shape[0].bytes && k.parts[1].bytes == shape[1].bytes && k.parts[2].bytes == shape[2].bytes {
				c = k
				break
			}
		}
		if c == nil {
			c = &class{}
			classes = append(classes, c)
		}
		for i := range shape {
			c.parts[i].bytes = shape[i].bytes
			c.parts[i].cap = max(c.parts[i].cap, shape[i].cap)
		}
		c.layers = append(c.layers, l)
		c.experts += n
		c.maxN = max(c.maxN, n)
		layerC[l] = c
	}
	for _, c := range classes {
		var off int64
		for i := range c.parts {
			c.parts[i].off = off
			off += c.parts[i].cap
		}
		c.slotSize = off
	}
	return classes, layerC, nil
}

// slotCounts splits an arena between the classes: each gets its minimum, the rest goes in
// proportion to the classes' expert bytes, capped at each class's experts (so an arena
// larger than the whole expert set is cut down to it). slots > 0 gives every class that
// many slots instead.
func slotCounts(classes []*class, arena int64, slots int, minSlots []int) (counts []int, total int64, err error) {
	counts = make([]int, len(classes))
	if slots > 0 {
		for i, c := range classes {
			counts[i] = min(slots, c.experts)
			total += int64(counts[i]) * c.slotSize
		}
		return counts, total, nil
	}
	var need, all int64
	for i, c := range classes {
		need += int64(minSlots[i]) * c.slotSize
		all += int64(c.experts) * c.slotSize
	}
	if arena < need {
		return nil, 0, &ArenaTooSmallError{Have: arena, Min: need}
	}
	budget := min(arena, all)
	rest := budget - need
	for i, c := range classes {
		share := int64(float64(rest) * float64(int64(c.experts)*c.slotSize) / float64(all))
		counts[i] = min(c.experts, minSlots[i]+int(share/c.slotSize))
		total += int64(counts[i]) * c.slotSize
	}
	for i, c := range classes { // what rounding left, to classes with room, in order
		for counts[i] < c.experts && total+c.slotSize <= budget {
			counts[i]++
			total += c.slotSize
		}
	}
	return counts, total, nil
}

func allocAligned(n int64) (b []byte, err error) {
	if n <= 0 || int64(int(n)) != n || n > 1<<50 {
		return nil, fmt.Errorf("expert: arena of %d bytes cannot be allocated", n)
	}
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("expert: allocating an arena of %s: %v", units.FormatBytes(n), r)
		}
	}()
	raw := make([]byte, n+Align)
	pad := 0
	if r := int(uintptrOf(raw) % Align); r != 0 {
		pad = Align - r
	}
	return raw[pad : pad+int(n) : pad+int(n)], nil
}

// chunkTokens is the configured largest chunk, or n_expert/n_expert_used rounded up: the
// smallest chunk that can need every expert of a layer.
func chunkTokens(m *model.Model, t int) int {
	if t > 0 {
		return t
	}
	c := m.Cfg
	return (c.NExpert + c.NExpertUsed - 1) / c.NExpertUsed
}

// minSlots is, per class, the largest set of one layer's experts a chunk of t tokens can
// need at once: min(n_expert, t × n_expert_used).
func minSlots(classes []*class, t, k int) []int {
	out := make([]int, len(classes))
	for i, c := range classes {
		out[i] = min(c.maxN, t*k)
	}
	return out
}

// ArenaTooSmallError is returned when the arena cannot hold the experts one chunk needs.
type ArenaTooSmallError struct {
	Have, Min int64
	Chunk     int
}

func (e *ArenaTooSmallError) Error() string {
	return fmt.Sprintf("expert: an arena of %s cannot hold the experts one chunk of %d tokens may need at once; the minimum is %s",
		units.FormatBytes(e.Have), e.Chunk, units.FormatBytes(e.Min))
}

// ArenaBytes is the arena's size.
func (s *Store) ArenaBytes() int64 { return int64(len(s.arena)) }

// Slots is the number of slots (experts the arena holds), over all size classes.
func (s *Store) Slots() int {
	n := 0
	for _, c := range s.classes {
		n += len(c.slots)
	}
	return n
}

// DirectIO reports whether reads bypass the page cache.
func (s *Store) DirectIO() bool { return s.direct }

// Describe is one line saying what the store chose.
func (s *Store) Describe() string {
	total := 0
	for _, c := range s.classes {
		total += c.experts
	}
	mode := "buffered reads, FADV_DONTNEED"
	if s.direct {
		mode = "O_DIRECT"
	} else if s.cfg.File != nil {
		mode = "custom reader"
	}
	d := fmt.Sprintf("expert arena %s: %d of %d experts (%.1f%%) in %d size class(es), slot %s; %d readers, queue depth %d, %s",
		units.FormatBytes(s.ArenaBytes()), s.Slots(), total, 100*float64(s.Slots())/float64(total), len(s.classes),
		units.FormatBytes(s.classes[0].slotSize), s.cfg.Readers, s.cfg.QueueDepth, mode)
	if s.ShelfBytes() > 0 {
		d += fmt.Sprintf("; prefetch shelf %s (%d experts per size class, decode only)", units.FormatBytes(s.ShelfBytes()), len(s.classes[0].shelf))
	}
	return d
}

// BeginChunk tells the store the next Acquires serve a chunk of n tokens: more than one
// counts as prefill in the statistics, one as decode. model.Session calls it.
func (s *Store) BeginChunk(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = n
	s.statsMu.Lock()
	s.phase().Tokens += int64(n)
	s.statsMu.Unlock()
}

// phase is the statistics of the current chunk's phase (mu and statsMu held).
func (s *Store) phase() *PhaseStats {
	if s.tokens > 1 {
		return &s.stats.Prefill
	}
	return &s.stats.Decode
}

// Acquire makes every listed expert of the layer resident and returns views of their
// weights, valid until Release(layer). Experts resident from earlier calls are hits; the
// others are read into the least recently used slots that no unreleased Acquire holds.
func (s *Store) Acquire(layer int, experts []int32) ([]model.ExpertWeights, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.io == nil {
		return nil, errors.New("expert: the store is closed")
	}
	if layer < 0 || layer >= len(s.layerC) {
		return nil, fmt.Errorf("expert: no layer %d", layer)
	}
	c := s.layerC[layer]
	where := s.where[layer]
	for i, e := range experts {
		if e < 0 || int(e) >= len(where) {
			return nil, fmt.Errorf("expert: layer %d has no expert %d", layer, e)
		}
		if i > 0 && e <= experts[i-1] {
			return nil, fmt.Errorf("expert: layer %d: experts must be listed in ascending order without repeats", layer)
		}
	}
	free := 0
	for i := range c.slots {
		if c.slots[i].pins == 0 {
			free++
		}
	}
	held := 0
	for _, e := range experts {
		if j := where[e]; j >= 0 && c.slots[j].pins > 0 {
			held++
		}
	}
	if len(experts) > free+held {
		if len(experts) > len(c.slots) {
			return nil, fmt.Errorf("expert: layer %d needs %d experts resident at once but the arena holds %d of its size (%s each); the minimum arena for chunks of %d tokens is %s (raise --mem or lower the chunk size)",
				layer, len(experts), len(c.slots), units.FormatBytes(c.slotSize), s.tokensOr1(), units.FormatBytes(s.minArena(s.tokensOr1())))
		}
		return nil, fmt.Errorf("expert: layer %d needs %d experts but only %d slots are not held by unreleased layers", layer, len(experts), free+held)
	}

	s.statsMu.Lock()
	ph := s.phase()
	ph.Acquires++
	ph.Lookups += int64(len(experts))
	s.statsMu.Unlock()

	// Hits first: pin them and mark them most recently used, so misses cannot evict them.
	pins := s.pinned[layer]
	var misses []int32
	for _, e := range experts {
		if j := where[e]; j >= 0 {
			c.slots[j].pins++
			pins = append(pins, j)
			c.touch(j)
		} else {
			misses = append(misses, e)
		}
	}
	// Misses: take the least recently used unpinned slots, in ascending expert order.
	var loads []load
	for _, e := range misses {
		j := c.victim()
		sl := &c.slots[j]
		if sl.layer >= 0 {
			s.where[sl.layer][sl.expert] = -1
		}
		sl.layer, sl.expert = int32(layer), e
		sl.pins++
		where[e] = j
		pins = append(pins, j)
		c.touch(j)
		loads = append(loads, load{slot: j, expert: e})
	}
	s.pinned[layer] = pins

	var err error
	if len(loads) > 0 {
		err = s.read(layer, c, loads)
	}
	s.dropShelf(layer)
	s.statsMu.Lock()
	ph = s.phase()
	ph.Hits += int64(len(experts) - len(misses))
	ph.Misses += int64(len(misses))
	if err != nil {
		s.stats.Errors++
	}
	s.statsMu.Unlock()
	if err != nil {
		// No slot keeps an expert whose bytes may be incomplete; this Acquire holds nothing.
		for _, ld := range loads {
			sl := &c.slots[ld.slot]
			where[sl.expert] = -1
			sl.layer, sl.expert = -1, -1
			c.toFront(ld.slot)
		}
		s.releaseLocked(layer)
		return nil, err
	}
	out := s.out[layer][:0]
	L := &s.m.Layers[layer]
	ts := [3]*model.ExpertTensor{&L.Gate, &L.Up, &L.Down}
	for _, e := range experts {
		sl := &c.slots[where[e]]
		var w [3]model.Weight
		for i, t := range ts {
			w[i] = t.Weight
			lo := c.parts[i].off + s.skew(t, e)
			w[i].Data = sl.data[lo : lo+int64(t.ExpertBytes) : lo+int64(t.ExpertBytes)]
		}
		out = append(out, model.ExpertWeights{Gate: w[0], Up: w[1], Down: w[2]})
	}
	s.out[layer] = out
	return out, nil
}

func (s *Store) tokensOr1() int { return max(1, s.tokens) }

// minArena is the smallest arena that runs chunks of t tokens.
func (s *Store) minArena(t int) int64 {
	var n int64
	for i, k := range minSlots(s.classes, t, s.m.Cfg.NExpertUsed) {
		n += int64(k) * s.classes[i].slotSize
	}
	return n
}

// skew is where expert e's matrix starts inside its part of a slot: 0, or with direct I/O
// its offset from the aligned start of the range read.
func (s *Store) skew(t *model.ExpertTensor, e int32) int64 {
	if !s.direct {
		return 0
	}
	off := t.Offset + int64(e)*int64(t.ExpertBytes)
	return off - alignDown(off, Align)
}

// Release ends the layer's Acquire: its experts may be evicted again.
func (s *Store) Release(layer int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if layer < 0 || layer >= len(s.pinned) {
		return
	}
	s.releaseLocked(layer)
}

func (s *Store) releaseLocked(layer int) {
	c := s.layerC[layer]
	for _, j := range s.pinned[layer] {
		if c.slots[j].pins > 0 {
			c.slots[j].pins--
		}
	}
	s.pinned[layer] = s.pinned[layer][:0]
}

// Close stops the readers and closes the direct I/O descriptor. The arena is freed with
// the store.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.io == nil {
		return nil
	}
	err := s.io.close()
	s.io = nil
	return err
}

// Stats returns a copy of the counters (since New; they are never reset).
func (s *Store) Stats() Stats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

// victim is the least recently used slot no Acquire holds (the caller checked one exists).
func (c *class) victim() int32 {
	for j := c.head; j >= 0; j = c.slots[j].next {
		if c.slots[j].pins == 0 {
			return j
		}
	}
	panic("expert: no unpinned slot") // Acquire counted free slots first
}

func (c *class) unlink(j int32) {
	sl := &c.slots[j]
	if sl.prev >= 0 {
		c.slots[sl.prev].next = sl.next
	} else {
		c.head = sl.next
	}
	if sl.next >= 0 {
		c.slots[sl.next].prev = sl.prev
	} else {
		c.tail = sl.prev
	}
	sl.prev, sl.next = -1, -1
}

// touch moves slot j to the most recently used end.
func (c *class) touch(j int32) {
	if c.tail == j {
		return
	}
	c.unlink(j)
	sl := &c.slots[j]
	sl.prev = c.tail
	if c.tail >= 0 {
		c.slots[c.tail].next = j
	} else {
		c.head = j
	}
	c.tail = j
}

// toFront makes slot j the next victim (it holds nothing).
func (c *class) toFront(j int32) {
	if c.head == j {
		return
	}
	c.unlink(j)
	sl := &c.slots[j]
	sl.next = c.head
	if c.head >= 0 {
		c.slots[c.head].prev = j
	} else {
		c.tail = j
	}
	c.head = j
}

type load struct {
	slot   int32
	expert int32
}

// read loads the experts' three matrices into their slots and waits for every read. An
// expert on the prefetch shelf is adopted instead of read: its shelf buffer becomes the
// slot's (after its prefetch read is done) and the slot's old buffer goes to the shelf.
func (s *Store) read(layer int, c *class, loads []load) error {
	b := s.io.newBatch()
	t0 := time.Now()
	var n ioCount
	var adopt []adoption
	for _, ld := range loads {
		if k := c.onShelf(layer, ld.expert); k >= 0 {
			adopt = append(adopt, adoption{load: ld, entry: k})
			continue
		}
		n.add(s.submitExpert(b, layer, c, c.slots[ld.slot].data, ld.expert))
	}
	var adopted, adoptedBytes, failed, ready int64
	for _, a := range adopt {
		e := &c.shelf[a.entry]
		if e.b.finished() {
			ready++
		}
		if e.b.wait() != nil { // the prefetch failed: read the expert now
			failed += e.bytes
			e.free()
			n.add(s.submitExpert(b, layer, c, c.slots[a.slot].data, a.expert))
			continue
		}
		sl := &c.slots[a.slot]
		sl.data, e.data = e.data, sl.data
		adopted++
		adoptedBytes += e.bytes
		e.free()
	}
	err := b.wait()
	wait := time.Since(t0)
	s.statsMu.Lock()
	ph := s.phase()
	ph.Wait += wait
	ph.Reads += n.reads
	ph.PrefetchWasted += failed
	if err == nil {
		ph.BytesRead += n.payload + adoptedBytes
		ph.DeviceBytes += n.device
		ph.Adoptions += adopted
		ph.AdoptedBytes += adoptedBytes
		ph.AdoptedReady += ready
	} else {
		ph.PrefetchWasted += adoptedBytes // adopted, then dropped with the failed Acquire
	}
	s.statsMu.Unlock()
	return err
}

// ioCount counts the reads of some experts.
type ioCount struct{ reads, payload, device int64 }

func (a *ioCount) add(b ioCount) {
	a.reads, a.payload, a.device = a.reads+b.reads, a.payload+b.payload, a.device+b.device
}

// submitExpert submits the reads of expert e of the layer into dst, a slot-sized buffer,
// laid out as the class's slots are.
func (s *Store) submitExpert(b *batch, layer int, c *class, dst []byte, e int32) (n ioCount) {
	L := &s.m.Layers[layer]
	ts := [3]*model.ExpertTensor{&L.Gate, &L.Up, &L.Down}
	for i, t := range ts {
		off := t.Offset + int64(e)*int64(t.ExpertBytes)
		size := int64(t.ExpertBytes)
		start, end := off, off+size
		if s.direct {
			start, end = alignDown(off, Align), alignUp(off+size, Align)
		}
		part := dst[c.parts[i].off : c.parts[i].off+c.parts[i].cap]
		for p := start; p < end; p += s.cfg.ReadSize {
			q := min(end, p+s.cfg.ReadSize)
			// Bytes of this piece that must arrive: up to the matrix's end (a direct
			// read of the last aligned block may stop at the end of the file).
			need := int(min(q, off+size) - p)
			b.submit(request{dst: part[p-start : q-start], off: p, need: need,
				layer: layer, expert: e, tensor: t.Name})
			n.reads++
			n.device += q - p
		}
		n.payload += size
	}
	return n
}

func alignUp(x, a int64) int64   { return (x + a - 1) / a * a }
func alignDown(x, a int64) int64 { return x / a * a }

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
