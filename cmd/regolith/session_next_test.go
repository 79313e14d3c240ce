package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
)

// qwen3next: --save-session writes the Gated DeltaNet state with its checkpoints, and
// --load-session resumes at the latest checkpoint before the prompt's last token (the
// last prompt chunk's start here) and generates what the fresh run generated.
func TestRunSessionSaveLoadQwen3Next(t *testing.T) {
	ses := filepath.Join(t.TempDir(), "next.ses")
	args := []string{"-m", fixtures.Path(t, "models", "qwen3next-mini-f32.gguf"),
		"-p", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfor i := 0; i < 10; i++ {\n\t\tfmt.Println(i * i)\n\t}\n}\n",
		"-b", "16", "-n", "8", "--temp", "0", "-t", "2", "--json"}
	var fresh, restored runResult
	if err := json.Unmarshal([]byte(capture(t, runRun, append(args, "--save-session", ses)...)), &fresh); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(capture(t, runRun, append(args, "--load-session", ses)...)), &restored); err != nil {
		t.Fatal(err)
	}
	n := len(fresh.PromptIDs)
	if want := (n - 1) / 16 * 16; n <= 16 || restored.ReusedTokens != want || fresh.ReusedTokens != 0 {
		t.Fatalf("reused %d of %d prompt tokens, want %d (the last checkpoint before the last prompt token)", restored.ReusedTokens, n, want)
	}
	if !slices.Equal(restored.GeneratedIDs, fresh.GeneratedIDs) {
		t.Fatalf("restored run generated %v, fresh run %v", restored.GeneratedIDs, fresh.GeneratedIDs)
	}
	// The other fixture model's file is refused.
	other := []string{"-m", fixtures.Path(t, "models", "qwen3moe-mini-f32.gguf"), "-p", "hello", "-n", "1", "--json", "--load-session", ses}
	if err := runRun(other); err == nil {
		t.Fatal("another model's session file was loaded")
	}
}
