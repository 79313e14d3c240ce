package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
)

// --save-session then --load-session: the restored run reuses all but the last prompt
// token and generates what the fresh run generated; a damaged file or another model's
// file is refused with a clear error.
func TestRunSessionSaveLoad(t *testing.T) {
	dir := t.TempDir()
	ses := filepath.Join(dir, "a.ses")
	args := []string{"-p", "func main() {", "-n", "16", "--temp", "0", "-t", "2", "--json"}
	var fresh, restored runResult
	if err := json.Unmarshal([]byte(capture(t, runRun, append(args, "--save-session", ses)...)), &fresh); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(capture(t, runRun, append(args, "--load-session", ses)...)), &restored); err != nil {
		t.Fatal(err)
	}
	if restored.ReusedTokens != len(fresh.PromptIDs)-1 || fresh.ReusedTokens != 0 {
		t.Fatalf("reused %d of %d prompt tokens (fresh run: %d)", restored.ReusedTokens, len(fresh.PromptIDs), fresh.ReusedTokens)
	}
	if !slices.Equal(restored.GeneratedIDs, fresh.GeneratedIDs) {
		t.Fatalf("restored run generated %v, fresh run %v", restored.GeneratedIDs, fresh.GeneratedIDs)
	}

	b, err := os.ReadFile(ses)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	bad := filepath.Join(dir, "bad.ses")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runRun(append(args, "--load-session", bad)); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("damaged session file: %v", err)
	}
	other := []string{"-m", fixtures.Path(t, "models", "qwen3moe-mini-f32.gguf"), "-p", "hello", "-n", "1", "--json", "--load-session", ses}
	if err := runRun(other); err == nil {
		t.Fatal("another model's session file was loaded")
	}
}
