package expert

import (
	"fmt"
	"strings"
	"time"
)

// PhaseStats count the store's work in one phase: prefill (chunks of more than one token)
// or decode (one token per chunk, or chunks the store was not told about).
type PhaseStats struct {
	Tokens      int64         `json:"tokens"`       // tokens of the chunks (BeginChunk)
	Acquires    int64         `json:"acquires"`     // per-layer requests
	Lookups     int64         `json:"lookups"`      // experts asked for
	Hits        int64         `json:"hits"`         // of them already resident
	Misses      int64         `json:"misses"`       // of them read from the file
	Reads       int64         `json:"reads"`        // positional read requests issued
	BytesRead   int64         `json:"bytes_read"`   // experts' bytes loaded (misses × expert bytes), adopted ones included
	DeviceBytes int64         `json:"device_bytes"` // bytes requested from the file, with direct I/O alignment (demand reads)
	Wait        time.Duration `json:"wait_ns"`      // time Acquire blocked on reads (and on shelf reads it adopts)

	// The prefetch shelf (shelf.go). Adoptions are misses served from the shelf instead of
	// a demand read: they count as misses, and their bytes are in BytesRead (not read
	// again) and in AdoptedBytes. The bytes read from the file are BytesRead −
	// AdoptedBytes + PrefetchBytes. PrefetchBytes = AdoptedBytes + PrefetchWasted + the
	// bytes on the shelf now.
	Adoptions       int64 `json:"shelf_adoptions"`       // misses served from the shelf
	AdoptedBytes    int64 `json:"shelf_adopted_bytes"`   // their bytes
	AdoptedReady    int64 `json:"shelf_adopted_ready"`   // adoptions whose read had landed (no wait)
	PrefetchExperts int64 `json:"prefetch_experts"`      // experts read onto the shelf
	PrefetchReads   int64 `json:"prefetch_reads"`        // positional read requests for them
	PrefetchBytes   int64 `json:"prefetch_bytes"`        // their bytes
	PrefetchWasted  int64 `json:"prefetch_wasted_bytes"` // prefetched bytes dropped unused (or whose read failed)
	PrefetchSkipped int64 `json:"prefetch_skipped"`      // predicted, not resident, but no free shelf entry
}

// Stats are the store's counters since it was made; nothing resets them. Take two
// snapshots and Sub them to measure an interval.
type Stats struct {
	Prefill PhaseStats `json:"prefill"`
	Decode  PhaseStats `json:"decode"`
	Errors  int64      `json:"errors"` // Acquires that failed on a read
}

// HitRate is hits per lookup (0 without lookups).
func (p PhaseStats) HitRate() float64 { return ratio(p.Hits, p.Lookups) }

// MBPerToken is megabytes (1e6) of experts read per token.
func (p PhaseStats) MBPerToken() float64 { return ratio(p.BytesRead, p.Tokens) / 1e6 }

// WaitPerToken is the I/O wait per token.
func (p PhaseStats) WaitPerToken() time.Duration {
	if p.Tokens == 0 {
		return 0
	}
	return p.Wait / time.Duration(p.Tokens)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// HiddenFraction is the fraction of misses the prefetch shelf served (0 without misses).
func (p PhaseStats) HiddenFraction() float64 { return ratio(p.Adoptions, p.Misses) }

// FileBytes is the experts' bytes read from the file: demand reads and prefetch reads.
func (p PhaseStats) FileBytes() int64 { return p.BytesRead - p.AdoptedBytes + p.PrefetchBytes }

func (p PhaseStats) add(q PhaseStats, sign int64) PhaseStats {
	return PhaseStats{p.Tokens + sign*q.Tokens, p.Acquires + sign*q.Acquires, p.Lookups + sign*q.Lookups,
		p.Hits + sign*q.Hits, p.Misses + sign*q.Misses, p.Reads + sign*q.Reads, p.BytesRead + sign*q.BytesRead,
		p.DeviceBytes + sign*q.DeviceBytes, p.Wait + time.Duration(sign)*q.Wait,
		p.Adoptions + sign*q.Adoptions, p.AdoptedBytes + sign*q.AdoptedBytes, p.AdoptedReady + sign*q.AdoptedReady,
		p.PrefetchExperts + sign*q.PrefetchExperts,
		p.PrefetchReads + sign*q.PrefetchReads, p.PrefetchBytes + sign*q.PrefetchBytes,
		p.PrefetchWasted + sign*q.PrefetchWasted, p.PrefetchSkipped + sign*q.PrefetchSkipped}
}

// Total is prefill and decode together.
func (s Stats) Total() PhaseStats { return s.Prefill.add(s.Decode, 1) }

// Add is the sum of two intervals' counters.
func (s Stats) Add(o Stats) Stats {
	return Stats{s.Prefill.add(o.Prefill, 1), s.Decode.add(o.Decode, 1), s.Errors + o.Errors}
}

// Sub is the counters of the interval between an earlier snapshot prev and s.
func (s Stats) Sub(prev Stats) Stats {
	return Stats{s.Prefill.add(prev.Prefill, -1), s.Decode.add(prev.Decode, -1), s.Errors - prev.Errors}
}

func (p PhaseStats) String() string {
	s := fmt.Sprintf("%d tokens, %d lookups, %d hits (%.1f%%), %d misses, %d reads, %.1f MB read (%.3f MB/token), I/O wait %s (%s/token)",
		p.Tokens, p.Lookups, p.Hits, 100*p.HitRate(), p.Misses, p.Reads, float64(p.BytesRead)/1e6, p.MBPerToken(),
		p.Wait.Round(time.Microsecond), p.WaitPerToken().Round(time.Microsecond))
	if p.PrefetchExperts > 0 || p.Adoptions > 0 {
		s += "; " + p.PrefetchString()
	}
	return s
}

// PrefetchString reports the prefetch shelf's work.
func (p PhaseStats) PrefetchString() string {
	return fmt.Sprintf("prefetch: %d experts read (%.1f MB), %d adopted (%.1f%% of misses hidden; %d had landed), %.1f MB wasted (%.1f%% of prefetched), %d skipped",
		p.PrefetchExperts, float64(p.PrefetchBytes)/1e6, p.Adoptions, 100*p.HiddenFraction(), p.AdoptedReady,
		float64(p.PrefetchWasted)/1e6, 100*ratio(p.PrefetchWasted, p.PrefetchBytes), p.PrefetchSkipped)
}

// String is a report for stderr: one line per phase.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "expert store, prefill: %s\n", s.Prefill)
	fmt.Fprintf(&b, "expert store, decode:  %s", s.Decode)
	if s.Errors > 0 {
		fmt.Fprintf(&b, "\nexpert store: %d failed reads", s.Errors)
	}
	return b.String()
}
