package model

import (
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

// BenchmarkDecode measures one-token forward passes (decode) on the small Q8_0 fixture.
func BenchmarkDecode(b *testing.B) {
	f, err := gguf.Open(fixtures.Path(b, "models", "qwen3moe-small-q8_0.gguf"))
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
}

// BenchmarkPrefill512 measures a 512-token chunk.
func BenchmarkPrefill512(b *testing.B) {
	f, err := gguf.Open(fixtures.Path(b, "models", "qwen3moe-small-q8_0.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m, _ := Load(f)
	s, _ := NewSession(m, Options{Ctx: 4096, Threads: 2})
	defer s.Close()
	toks := make([]int32, 512)
	for i := range toks {
		toks[i] = int32(i * 7 % m.Cfg.NVocab)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.Truncate(0)
		if _, err := s.Forward(toks, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(512*b.N)/b.Elapsed().Seconds(), "tok/s")
}
