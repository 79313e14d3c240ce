package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
)

// capture runs a command in-process and returns what it printed on stdout.
func capture(t *testing.T, run func([]string) error, args ...string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	err = run(args)
	w.Close()
	os.Stdout = old
	out := <-done
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return string(out)
}

func TestInspectJSON(t *testing.T) {
	path := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	var r inspectReport
	if err := json.Unmarshal([]byte(capture(t, runInspect, path, "--json", "--mem", "8MiB")), &r); err != nil {
		t.Fatal(err)
	}
	const perExpert = 3 * 65536 / 32 * 34
	if r.Arch != "qwen3moe" || len(r.Tensors) != 51 || r.Summary.TotalExperts != 64 {
		t.Fatalf("arch %q, %d tensors, %d experts", r.Arch, len(r.Tensors), r.Summary.TotalExperts)
	}
	if want := int((8<<20 - r.Summary.DenseBytes) / perExpert); r.FitExperts != want {
		t.Fatalf("experts that fit in 8MiB: %d, want %d", r.FitExperts, want)
	}
}

// Greedy generation through the CLI gives llama.cpp's greedy continuation (fixture).
func TestRunGreedyMatchesLlamaCpp(t *testing.T) {
	var pc struct {
		PromptIDs []int32 `json:"prompt_ids"`
		GreedyIDs []int32 `json:"greedy_ids"`
	}
	b, err := os.ReadFile(fixtures.Path(t, "parity", "qwen3moe-mini-f32.code.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pc); err != nil {
		t.Fatal(err)
	}
	out := capture(t, runRun, "-m", fixtures.Path(t, "models", "qwen3moe-mini-f32.gguf"),
		"-f", fixtures.Path(t, "parity", "prompts", "code.txt"), "-n", "32", "--temp", "0", "--json", "-t", "2")
	var r runResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ids(r.PromptIDs), ids(pc.PromptIDs)) {
		t.Fatalf("prompt ids %v, llama.cpp %v", r.PromptIDs, pc.PromptIDs)
	}
	if !bytes.Equal(ids(r.GeneratedIDs), ids(pc.GreedyIDs)) {
		t.Fatalf("greedy ids %v, llama.cpp %v", r.GeneratedIDs, pc.GreedyIDs)
	}
}

func ids(s []int32) []byte {
	b, _ := json.Marshal(s)
	return b
}
