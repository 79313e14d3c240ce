package expert

import "github.com/regolith/regolith/model"

// The prefetch shelf (DESIGN §4). In decode the session predicts, after each layer's FFN,
// the experts the next layer will route to (model.Prefetcher); the store reads the
// predicted experts that are not resident onto the shelf, a few slot-sized buffers per
// size class allocated apart from the arena, with reads that wait behind every demand read.
//
// The shelf never changes what is resident: the residency map (where, and so Resident and
// cache-aware routing) and the LRU order change only in Acquire, exactly as without a
// shelf. When an Acquire misses an expert that is on the shelf, the miss is still a demand
// miss, with the same victim slot; the store waits for the shelf's read (if it is still in
// flight) and swaps buffers, so the slot gets the shelf's bytes and the shelf the victim's
// old buffer, instead of reading. Either way the slot holds the file's bytes, so the
// output is bit-identical with the shelf on or off. When a layer's Acquire is done, the
// shelf entries for that layer it did not adopt are dropped and their bytes counted as
// wasted; a dropped entry whose read is still in flight is reused only once it lands.
//
// Measured on gomoe (the default model: 8 layers, top-4 of 64 experts of 51 KiB), decode of
// 128 tokens after random prompts. Prediction (expert package's TestPredictionQuality with
// REGOLITH_PREFETCH_MODEL): the top 4 predicted from the residual after layer l hold 85.5%
// of layer l+1's experts (top 8: 97.7%); predicted from layer l's FFN input instead (one
// FFN earlier, more lead time) 73.2%. Speed: bench -p 0 -n 128 -c 512 -b 64 --mem 32MiB
// --direct-io (arena 132 of 512 experts; 128 or 124 with a shelf of 4 or 8), interleaved
// A/B, median of paired tok/s ratios, on 2 cores shared with other jobs (load 6-9, so
// single pairs ranged 0.58-1.70): --prefetch 4 hid 76% of decode misses, read 0.70 MB/token
// onto the shelf of which 0.14 wasted (demand without shelf 0.73 MB/token), ratio 0.80 (3
// pairs at light load), 1.09 (6 pairs), 1.14 (5 pairs, loaded); --prefetch 8 hid 88% but
// read 1.61 MB/token (0.93 wasted): ratio 0.37-0.73, the disk (≈250 MB/s with O_DIRECT)
// spends its time on wrong guesses. The lead time is one layer's attention, small on
// gomoe, so an adopted read is often still in flight (about half had landed). Default off.

var _ model.Prefetcher = (*Store)(nil)

// shelfEntry is one slot-sized buffer of the shelf.
type shelfEntry struct {
	data   []byte
	layer  int32 // -1: free
	expert int32
	bytes  int64  // the expert's bytes (its three matrices)
	b      *batch // the last prefetch read into data; reusable when nil or finished
}

func (e *shelfEntry) free() { e.layer, e.expert = -1, -1 }

// layoutShelf allocates Config.Prefetch shelf entries per size class (at most its layers'
// experts).
func (s *Store) layoutShelf() error {
	if s.cfg.Prefetch <= 0 {
		return nil
	}
	var total int64
	for _, c := range s.classes {
		total += int64(min(s.cfg.Prefetch, c.maxN)) * c.slotSize
	}
	buf, err := allocAligned(total)
	if err != nil {
		return err
	}
	s.shelf = buf
	var off int64
	for _, c := range s.classes {
		c.shelf = make([]shelfEntry, min(s.cfg.Prefetch, c.maxN))
		for j := range c.shelf {
			c.shelf[j] = shelfEntry{data: buf[off : off+c.slotSize : off+c.slotSize], layer: -1, expert: -1}
			off += c.slotSize
		}
	}
	return nil
}

// ShelfBytes is the prefetch shelf's size (0 without prefetch).
func (s *Store) ShelfBytes() int64 { return int64(len(s.shelf)) }

// shelfReads bounds the prefetch reads that can be queued at once: every shelf entry's
// pieces (Config.ReadSize each, one more per matrix for an unaligned start).
func (s *Store) shelfReads() int {
	n := 0
	for _, c := range s.classes {
		per := 0
		for _, p := range c.parts {
			per += int((p.cap+s.cfg.ReadSize-1)/s.cfg.ReadSize) + 1
		}
		n += len(c.shelf) * per
	}
	return n
}

// PrefetchWidth is how many experts per layer the store wants predicted (Config.Prefetch;
// 0: none). It implements model.Prefetcher.
func (s *Store) PrefetchWidth() int { return s.cfg.Prefetch }

// Prefetch starts reading the listed experts of the layer that are neither resident nor on
// the shelf onto the shelf, in the order given (most likely first), as long as it has a
// free entry. It does not wait for the reads and changes nothing Acquire or Resident
// report. It implements model.Prefetcher.
func (s *Store) Prefetch(layer int, experts []int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.io == nil || layer < 0 || layer >= len(s.layerC) {
		return
	}
	c := s.layerC[layer]
	if len(c.shelf) == 0 {
		return
	}
	where := s.where[layer]
	var n ioCount
	var started, skipped, stale int64
	for _, e := range experts {
		if e < 0 || int(e) >= len(where) || where[e] >= 0 || c.onShelf(layer, e) >= 0 {
			continue
		}
		k, dropped := c.shelfEntryFor(layer)
		stale += dropped
		if k < 0 {
			skipped++
			continue
		}
		ent := &c.shelf[k]
		b := s.io.newSpecBatch()
		got := s.submitExpert(b, layer, c, ent.data, e)
		ent.layer, ent.expert, ent.bytes, ent.b = int32(layer), e, got.payload, b
		n.add(got)
		started++
	}
	s.statsMu.Lock()
	ph := s.phase()
	ph.PrefetchExperts += started
	ph.PrefetchReads += n.reads
	ph.PrefetchBytes += n.payload
	ph.PrefetchSkipped += skipped
	ph.PrefetchWasted += stale
	s.statsMu.Unlock()
}

// onShelf is the index of the shelf entry holding expert e of the layer, or -1.
func (c *class) onShelf(layer int, e int32) int {
	for k := range c.shelf {
		if c.shelf[k].layer == int32(layer) && c.shelf[k].expert == e {
			return k
		}
	}
	return -1
}

// shelfEntryFor picks a shelf entry to prefetch an expert of the layer into: a free one
// whose last read has landed, else one left by another layer (stale: the Acquire it was
// for never came), which it drops, returning its bytes as wasted. -1 when every entry
// holds this layer's experts or a read in flight.
func (c *class) shelfEntryFor(layer int) (k int, wasted int64) {
	stale := -1
	for k := range c.shelf {
		e := &c.shelf[k]
		if e.b != nil && !e.b.finished() {
			continue
		}
		if e.layer < 0 {
			return k, 0
		}
		if e.layer != int32(layer) && stale < 0 {
			stale = k
		}
	}
	if stale < 0 {
		return -1, 0
	}
	wasted = c.shelf[stale].bytes
	c.shelf[stale].free()
	return stale, wasted
}

// dropShelf drops the layer's shelf entries (after its Acquire: not adopted) and counts
// their bytes as wasted (mu held).
func (s *Store) dropShelf(layer int) {
	c := s.layerC[layer]
	var wasted int64
	for k := range c.shelf {
		if e := &c.shelf[k]; e.layer == int32(layer) {
			wasted += e.bytes
			e.free()
		}
	}
	if wasted > 0 {
		s.statsMu.Lock()
		s.phase().PrefetchWasted += wasted
		s.statsMu.Unlock()
	}
}

// adoption is a miss that a shelf entry serves.
type adoption struct {
	load
	entry int
}
