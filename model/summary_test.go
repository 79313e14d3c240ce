package model

import (
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

func TestSummarizeFixture(t *testing.T) {
	f, err := gguf.Open(fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := Summarize(f)
	// 4 layers × 16 experts; one expert is three 256×256 Q8_0 matrices: 3 × 65536/32 × 34 bytes.
	const perExpert = 3 * 65536 / 32 * 34
	if len(s.ExpertLayers) != 4 || s.TotalExperts != 64 || s.ExpertsPerLayer != 16 {
		t.Fatalf("layers %d, experts %d / %d per layer", len(s.ExpertLayers), s.TotalExperts, s.ExpertsPerLayer)
	}
	for _, ls := range s.ExpertLayers {
		if ls.BytesPerExp != perExpert {
			t.Errorf("layer %d: %d bytes per expert, want %d", ls.Layer, ls.BytesPerExp, perExpert)
		}
	}
	if s.ExpertBytes != 64*perExpert || s.DenseBytes+s.ExpertBytes != s.TotalBytes {
		t.Errorf("expert bytes %d (want %d), dense %d, total %d", s.ExpertBytes, 64*perExpert, s.DenseBytes, s.TotalBytes)
	}
	if got := s.ExpertsThatFit(10*perExpert + perExpert/2); got != 10 {
		t.Errorf("10.5 experts of room holds %d", got)
	}
}
