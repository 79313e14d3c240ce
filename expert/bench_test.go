package expert

import (
	"testing"

	"github.com/regolith/regolith/model"
)

// Measured on the 2-core AMD EPYC dev box (shared, noisy), small-q8_0 fixture (4 layers ×
// 16 experts of 204 KiB), random token ids, 2 threads, readers 4:
//
//	go test ./expert -run XXX -bench Decode -benchtime 2s   (REGOLITH_FIXTURES set)
//	BenchmarkDecodeResident         737 tok/s
//	BenchmarkDecodeArena25          241 tok/s  28.7% hits  2.39 MB/token  2.7 ms wait/token
//	BenchmarkDecodeArena25Direct    169 tok/s  29.5% hits  2.36 MB/token  4.4 ms wait/token
//	BenchmarkDecodeArena50          354 tok/s  48.8% hits  1.71 MB/token  1.6 ms wait/token
//
// The fixtures' random router spreads tokens almost uniformly, so the hit rate is close to
// the resident fraction; FADV_DONTNEED (or O_DIRECT) makes every miss a device read.

// benchDecode runs one-token forward passes on the small Q8_0 fixture with experts from
// src (nil: the store is not used) and reports tok/s and, with a store, its hit rate, MB
// read per token and I/O wait per token over the timed tokens.
func benchDecode(b *testing.B, st func(*testing.B, *model.Model) *Store) {
	_, m := openModel(b, "qwen3moe-small-q8_0.gguf")
	opts := model.Options{Ctx: 1024, Threads: 2}
	var store *Store
	if st != nil {
		store = st(b, m)
		defer store.Close()
		opts.Experts = store
	}
	s, err := model.NewSession(m, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Warm up: fill the arena.
	for i := 0; i < 64; i++ {
		if _, err := s.Forward([]int32{int32(i * 31 % m.Cfg.NVocab)}, false); err != nil {
			b.Fatal(err)
		}
	}
	var before Stats
	if store != nil {
		before = store.Stats()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Pos() >= 1024 {
			s.Truncate(0)
		}
		if _, err := s.Forward([]int32{int32((i*7919 + 13) % m.Cfg.NVocab)}, false); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
	if store != nil {
		d := store.Stats().Sub(before).Decode
		b.ReportMetric(100*d.HitRate(), "hit%")
		b.ReportMetric(d.MBPerToken(), "MB/token")
		b.ReportMetric(float64(d.WaitPerToken().Microseconds()), "wait-µs/token")
	}
}

func BenchmarkDecodeResident(b *testing.B) { benchDecode(b, nil) }

// BenchmarkDecodeArena25 holds 16 of the 64 experts (25%), buffered reads with
// FADV_DONTNEED (so misses go to the device).
func BenchmarkDecodeArena25(b *testing.B) { benchDecode(b, arena(16, false)) }

// BenchmarkDecodeArena25Direct is the same with O_DIRECT.
func BenchmarkDecodeArena25Direct(b *testing.B) { benchDecode(b, arena(16, true)) }

// BenchmarkDecodeArena50 holds 32 of the 64 experts.
func BenchmarkDecodeArena50(b *testing.B) { benchDecode(b, arena(32, false)) }

func arena(slots int, direct bool) func(*testing.B, *model.Model) *Store {
	return func(b *testing.B, m *model.Model) *Store {
		f := m.File
		st, err := New(m, f, Config{Slots: slots, Readers: 4, DirectIO: direct})
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
}
