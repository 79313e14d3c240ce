package server

import (
	"os"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
)

// qwen3next: the same prompt sent again resumes flashRows tokens before its end (the
// checkpoint where the server split off the prompt's last chunk), from RAM, with the same
// logits as the first time; so does a fresh server that recomputes it.
func TestSamePromptQwen3Next(t *testing.T) {
	path := fixtures.Path(t, "models", "qwen3next-mini-f32.gguf")
	s, _ := start(t, path, Config{Chunk: 128})
	src, _ := os.ReadFile("openai.go")
	prompt := s.e.Tok.Encode(string(src[:1200]), true, false)
	first := firstLogits(t, s, prompt)
	if first.cachedTokens != 0 {
		t.Fatalf("first request reused %d tokens", first.cachedTokens)
	}
	again := firstLogits(t, s, prompt)
	if again.cachedTokens != len(prompt)-flashRows || again.source != "ram" {
		t.Fatalf("same prompt again: %d tokens from %q, want %d from ram", again.cachedTokens, again.source, len(prompt)-flashRows)
	}
	sameBits(t, "same prompt again", again.firstLogits, first.firstLogits)
	fresh, _ := start(t, path, Config{Chunk: 128})
	sameBits(t, "same prompt on a fresh server", firstLogits(t, fresh, prompt).firstLogits, first.firstLogits)
}
