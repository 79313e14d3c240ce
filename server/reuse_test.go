package server

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/regolith/regolith/sample"
)

// greedyReq is a greedy generation of n tokens.
func greedyReq(prompt []int32, n int) *genRequest {
	p := sample.DefaultParams()
	p.Temp = 0
	return &genRequest{prompt: prompt, maxTokens: n, params: p}
}

// logitsAfter positions the server's session for prompt as a request would (reuse from
// RAM or disk) and returns the logits of the prompt's remaining tokens, all positions.
func logitsAfter(t *testing.T, s *Server, prompt []int32) ([]float32, int, string) {
	t.Helper()
	n, src, err := s.reuse(prompt)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.sess.Forward(prompt[n:], true)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(l), n, src
}

// recompute runs prompt in one pass on a fresh session.
func recompute(t *testing.T, s *Server, prompt []int32) []float32 {
	t.Helper()
	fresh := newSession(t, s.e, s.sess.Ctx())
	l, err := fresh.Forward(prompt, true)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(l)
}

func sameBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d vs %d logits", what, len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: logit %d differs: %v vs %v", what, i, a[i], b[i])
		}
	}
}

// Reusing a prefix from RAM gives bit-identical logits to recomputing the whole prompt.
func TestRAMReuseExact(t *testing.T) {
	s, _ := start(t, defaultPath(t), Config{})
	tok := s.e.Tok
	a := tok.Encode("package main\n\nimport \"fmt\"\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc main() {\n\tfmt.Println(add(1, 2))\n}\n", true, false)
	b := tok.Encode("package main\n\nimport \"fmt\"\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc sub(a, b int) int {\n\treturn a - b\n}\n", true, false)
	if _, err := s.generate(context.Background(), greedyReq(a, 8)); err != nil {
		t.Fatal(err)
	}
	want := lcp(a, b)
	got, n, src := logitsAfter(t, s, b)
	if n != want || src != "ram" {
		t.Fatalf("reused %d tokens from %q, want %d from ram", n, src, want)
	}
	nv := s.e.Model.Cfg.NVocab
	ref := recompute(t, s, b)
	sameBits(t, "RAM reuse vs recompute", got, ref[n*nv:])
}

// A long prefix and a suffix of more than 64 tokens (the tiled attention path), in
// several prefill chunks: still bit-identical.
func TestRAMReuseExactLong(t *testing.T) {
	s, _ := start(t, defaultPath(t), Config{Chunk: 128})
	src, err := os.ReadFile("diskcache.go")
	if err != nil {
		t.Fatal(err)
	}
	tok := s.e.Tok
	prefix := string(src[:2000])
	a := tok.Encode(prefix+"\nfunc first() {\n\treturn\n}\n", true, false)
	b := tok.Encode(prefix+"\n"+string(src[len(src)-700:]), true, false)
	if _, err := s.generate(context.Background(), greedyReq(a, 4)); err != nil {
		t.Fatal(err)
	}
	got, n, _ := logitsAfter(t, s, b)
	if n < 300 || len(b)-n < 100 {
		t.Fatalf("want a long shared prefix and a long suffix, got %d + %d tokens", n, len(b)-n)
	}
	ref := recompute(t, s, b)
	sameBits(t, "RAM reuse vs recompute (long)", got, ref[n*s.e.Model.Cfg.NVocab:])
}

// Short prompts (under flashRows tokens, small-chunk attention) reuse small-chunk rows,
// including decoded ones, exactly; a long prompt after them recomputes them.
func TestReuseShortPrompts(t *testing.T) {
	s, _ := start(t, defaultPath(t), Config{})
	tok := s.e.Tok
	a := tok.Encode("func main() {\n\tx := 1\n", true, false)
	res, err := s.generate(context.Background(), greedyReq(a, 6))
	if err != nil {
		t.Fatal(err)
	}
	b := append(append(slices.Clone(a), res.ids[:4]...), tok.Encode("\n\ty := 2", false, false)...)
	got, n, _ := logitsAfter(t, s, b)
	if n < len(a)+3 {
		t.Fatalf("reused %d of %d tokens, want the prompt and the decoded tokens (%d)", n, len(b), len(a)+3)
	}
	sameBits(t, "short reuse", got, recompute(t, s, b)[n*s.e.Model.Cfg.NVocab:])

	src, _ := os.ReadFile("server.go")
	long := append(slices.Clone(b), tok.Encode(string(src[:600]), false, false)...)
	got, n, _ = logitsAfter(t, s, long)
	if n != 0 {
		t.Fatalf("a long prompt reused %d small-chunk positions", n)
	}
	sameBits(t, "long after short", got, recompute(t, s, long))
}
