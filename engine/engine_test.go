package engine

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/regolith/regolith/defaultmodel"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/sample"
)

// The embedded default model's greedy continuations are llama.cpp's, byte for byte
// (defaultmodel/testdata/llama_greedy.json holds llama-completion's output).
func TestDefaultModelGreedyMatchesLlamaCpp(t *testing.T) {
	b, err := os.ReadFile("../defaultmodel/testdata/llama_greedy.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Prompt string `json:"prompt"`
			N      int    `json:"n"`
			Output string `json:"llama_cpp_output"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	path, err := defaultmodel.WriteTo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := model.NewSession(e.Model, model.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := sample.DefaultParams()
	p.Temp = 0
	for _, c := range ref.Cases {
		s.Truncate(0)
		ids := e.Tok.Encode(c.Prompt, true, true)
		gen, st, err := e.Generate(context.Background(), s, Request{Prompt: ids, MaxTokens: c.N, Sampler: sample.New(p, e.Model.Cfg.NVocab)})
		if err != nil {
			t.Fatal(err)
		}
		// llama-completion ends its output with newlines of its own.
		got := strings.TrimRight(c.Prompt+e.Tok.Decode(gen), "\n")
		want := strings.TrimRight(c.Output, "\n")
		if got != want {
			t.Errorf("prompt %q: regolith\n%q\nllama.cpp\n%q", c.Prompt, got, want)
		}
		if st.GeneratedTokens != c.N {
			t.Errorf("prompt %q: %d tokens, want %d (stop: %s)", c.Prompt, st.GeneratedTokens, c.N, st.StopReason)
		}
	}
}
