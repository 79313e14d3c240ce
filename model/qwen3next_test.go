package model

import (
	"path/filepath"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

func openNext(t *testing.T, name string) *Model {
	t.Helper()
	f, err := gguf.Open(fixtures.Path(t, "models", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func forwardAll(t *testing.T, s *Session, chunks ...[]int32) []float32 {
	t.Helper()
	var out []float32
	for _, c := range chunks {
		l, err := s.Forward(c, false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out[:0], l...)
	}
	return out
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The Gated DeltaNet state follows the cache: truncation goes back to the latest
// checkpoint inside the kept prefix, and recomputing from there gives the logits of a
// fresh session bit for bit (session files: qwen3next_session_test.go).
func TestQwen3NextRecurrentCheckpoints(t *testing.T) {
	m := openNext(t, "qwen3next-small-q8_0.gguf")
	pc, _ := loadParity(t, filepath.Join(fixtures.Path(t, "parity"), "qwen3next-small-q8_0.chat.json"))
	p := pc.PromptIDs
	k := len(p) / 2
	a, b, c := p[:k], p[k:len(p)-3], p[len(p)-3:]

	ref, err := NewSession(m, Options{Ctx: 512, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	want := forwardAll(t, ref, a, b, c)

	s, err := NewSession(m, Options{Ctx: 512, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	forwardAll(t, s, a, b, []int32{7, 8, 9}, []int32{10}, []int32{11})
	rec := s.Cache().Rec
	if cp := rec.Checkpoints(); len(cp) != 3 || cp[0] != len(a) || cp[1] != len(a)+len(b) || cp[2] != len(a)+len(b)+3 {
		t.Fatalf("checkpoints at %v", cp)
	}
	// A prompt sharing a prefix up to inside b: back to the checkpoint after a.
	if n := s.Truncate(len(a) + 2); n != len(a) {
		t.Fatalf("Truncate to %d gave %d, want the checkpoint at %d", len(a)+2, n, len(a))
	}
	if got := forwardAll(t, s, b, c); !sameBits(got, want) {
		t.Fatal("logits after restoring the checkpoint differ from a fresh session's")
	}
	// Before the first checkpoint: the empty state.
	if n := s.Truncate(len(a) - 1); n != 0 {
		t.Fatalf("Truncate below the first checkpoint gave %d", n)
	}
	if got := forwardAll(t, s, a, b, c); !sameBits(got, want) {
		t.Fatal("logits after a reset differ from a fresh session's")
	}
	// A forward pass that does not continue the state is refused.
	s.Cache().N = len(a)
	if _, err := s.Forward(c, false); err == nil {
		t.Fatal("Forward on a state of another position succeeded")
	}
}

// Prefill in one chunk and token by token run the same delta-rule recurrence (llama.cpp's
// fused op walks the tokens either way); only the matrix products differ (tinyBLAS GEMM
// vs per-row dot products), so the logits agree to float32 noise with the same argmax.
func TestQwen3NextChunkedVsRecurrent(t *testing.T) {
	m := openNext(t, "qwen3next-mini-f32.gguf")
	pc, _ := loadParity(t, filepath.Join(fixtures.Path(t, "parity"), "qwen3next-mini-f32.prose.json"))
	p := pc.PromptIDs
	one, err := NewSession(m, Options{Ctx: 256, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	want := forwardAll(t, one, p)
	step, err := NewSession(m, Options{Ctx: 256, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer step.Close()
	var got []float32
	for i := range p {
		got = forwardAll(t, step, p[i:i+1])
	}
	var maxd float64
	for i := range want {
		d := float64(want[i] - got[i])
		maxd = max(maxd, d, -d)
	}
	if maxd > 1e-3 || argmax(want) != argmax(got) {
		t.Fatalf("token-by-token prefill differs from one chunk by %.3g (argmax %d vs %d)", maxd, argmax(got), argmax(want))
	}
	t.Logf("one chunk vs token by token: max |Δlogit| %.3g", maxd)
}
