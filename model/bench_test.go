package model

import (
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

// benchSession opens a fixture model and a session for a benchmark or test.
func benchSession(b testing.TB, name string) (*Model, *Session) {
	f, err := gguf.Open(fixtures.Path(b, "models", name))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSession(m, Options{Ctx: 4096, Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return m, s
}

// benchDecode runs one-token forward passes over positions 0…1023, again and again.
func benchDecode(b *testing.B, name string) {
	m, s := benchSession(b, name)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Pos() >= 1024 {
			s.Truncate(0)
		}
		if _, err := s.Forward([]int32{int32(i % m.Cfg.NVocab)}, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}

// A decode step allocates nothing once the session is warm, in every format and
// architecture of the fixtures (kernels, closures and scratch are made once).
func TestDecodeAllocatesNothing(t *testing.T) {
	for _, name := range []string{"qwen3moe-small-q8_0.gguf", "qwen3moe-small-q4_k_m.gguf", "qwen3moe-mini-f32.gguf",
		"qwen3next-small-q8_0.gguf", "qwen3next-small-q4_k_m.gguf"} {
		m, s := benchSession(t, name)
		i := 0
		step := func() {
			if _, err := s.Forward([]int32{int32(i % m.Cfg.NVocab)}, false); err != nil {
				t.Fatal(err)
			}
			i++
		}
		for range 300 { // past the first decode checkpoints (qwen3next) and buffer growth
			step()
		}
		if a := testing.AllocsPerRun(20, step); a != 0 {
			t.Errorf("%s: %.1f allocations per decode step", name, a)
		}
	}
}

// BenchmarkDecode measures decode on the small Q8_0 fixture.
func BenchmarkDecode(b *testing.B) { benchDecode(b, "qwen3moe-small-q8_0.gguf") }

// BenchmarkDecodeQ4_K_M is BenchmarkDecode on the small Q4_K_M fixture (Q4_K through
// llama.cpp's repacked GEMV order, Q6_K through its vec_dot order).
func BenchmarkDecodeQ4_K_M(b *testing.B) { benchDecode(b, "qwen3moe-small-q4_k_m.gguf") }

// BenchmarkPrefill512 measures a 512-token chunk.
func BenchmarkPrefill512(b *testing.B) {
	m, s := benchSession(b, "qwen3moe-small-q8_0.gguf")
	toks := make([]int32, 512)
	for i := range toks {
		toks[i] = int32(i * 7 % m.Cfg.NVocab)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Truncate(0)
		if _, err := s.Forward(toks, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(512*b.N)/b.Elapsed().Seconds(), "tok/s")
}
