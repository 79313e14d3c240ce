package model

import (
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

// BenchmarkDecodeQ4_K_M is BenchmarkDecode on the small Q4_K_M fixture (Q4_K through
// llama.cpp's repacked GEMV order, Q6_K through its vec_dot order).
func BenchmarkDecodeQ4_K_M(b *testing.B) {
	f, err := gguf.Open(fixtures.Path(b, "models", "qwen3moe-small-q4_k_m.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m, err := Load(f)
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSession(m, Options{Ctx: 4096, Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
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
