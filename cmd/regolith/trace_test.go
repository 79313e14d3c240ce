package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/trace"
)

// TestTraceCommands records a short run of the small fixture with the expert store, then
// replays and sweeps it through the command line.
func TestTraceCommands(t *testing.T) {
	model := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	dir := t.TempDir()
	tf := filepath.Join(dir, "t.trace")
	prompt := filepath.Join(dir, "p.txt")
	if err := os.WriteFile(prompt, []byte("func main() { fmt.Println(\"hello, world\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	capture(t, runTrace, "record", "-m", model, "-f", prompt, "-n", "12", "-b", "8", "-c", "128", "-o", tf, "--temp", "1", "--seed", "3")

	var info traceSummary
	if err := json.Unmarshal([]byte(capture(t, runTrace, "info", tf, "--json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.Layers != 4 || info.Experts != 16 || info.K != 4 || info.TopN != 16 || info.DecodeTokens == 0 || info.PromptTokens == 0 || info.Requests != 1 {
		t.Fatalf("info %+v", info)
	}
	var r trace.Result
	if err := json.Unmarshal([]byte(capture(t, runTrace, "replay", tf, "--cache", "6", "--policy", "ema", "--moce", "0.1", "--moce-protect", "1", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Hits+r.Misses == 0 || r.Label != "ema+moce(λ=0.1,J=1)" || r.Tokens != int64(info.Tokens) {
		t.Fatalf("replay %+v", r)
	}
	keep := filepath.Join(dir, "half.json")
	os.WriteFile(keep, []byte(`{"layers": [[0,1,2,3,4,5,6,7],[0,2,4,6,8,10,12,14],[1,3,5,7,9,11,13,15],[8,9,10,11,12,13,14,15]]}`), 0o644)
	js, svg := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.svg")
	table := capture(t, runTrace, "sweep", tf, "--cache", "4,8", "--moce", "0,0.1", "--moce-protect", "1,2", "--keep", keep,
		"--json", js, "--svg", svg, "--disk-mbps", "300", "--compute-ms", "1")
	var out sweepOut
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	// 6 policies at λ = 0, 5 online ones at λ = 0.1 with protect 1 and 2: 16 settings × 2 sizes.
	if len(out.Results) != 32 || strings.Count(table, "\n") != 34 {
		t.Fatalf("%d results, table of %d lines", len(out.Results), strings.Count(table, "\n"))
	}
	for _, r := range out.Results {
		if r.Err != "" || r.Predicted == nil || r.Predicted.DecodeTPS <= 0 || r.Config.KeepName != "half" {
			t.Fatalf("%s: %+v", r.Label, r)
		}
	}
	if s, _ := os.ReadFile(svg); !strings.Contains(string(s), "belady+keep(half)") {
		t.Fatal("the plot lacks the Belady line")
	}
}
