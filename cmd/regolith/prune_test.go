package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regolith/regolith/eval"
	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/prune"
	"github.com/regolith/regolith/trace"
)

// calibrate → apply → the pruned GGUF runs; its keep-map reads in trace replay's reader;
// eval: the model against itself is 0, --test-keep equals the pruned file, and a saved f32
// reference gives the same report as the live reference.
func TestPruneAndEvalCommands(t *testing.T) {
	model := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	dir := t.TempDir()
	code, prose := filepath.Join(dir, "code"), filepath.Join(dir, "prose")
	os.Mkdir(code, 0o755)
	os.Mkdir(prose, 0o755)
	os.WriteFile(filepath.Join(code, "a.go"), []byte(strings.Repeat("func main() {\n\tfmt.Println(\"hello, world\", x+1)\n}\n", 8)), 0o644)
	os.WriteFile(filepath.Join(prose, "b.txt"), []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)), 0o644)
	sal := filepath.Join(dir, "sal.json")
	capture(t, runPrune, "calibrate", "-m", model, "--corpus", code+","+prose, "--tokens", "200", "-c", "64", "-t", "2", "-o", sal)
	s, err := prune.ReadSaliency(sal)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sources) != 2 || s.Sources[0].Tokens != s.Sources[1].Tokens || s.Tokens != 200 {
		t.Fatalf("sources %+v, %d tokens", s.Sources, s.Tokens)
	}
	out := filepath.Join(dir, "pruned.gguf")
	capture(t, runPrune, "apply", "-m", model, "--scores", sal, "--keep", "75%", "--score", "hybrid", "-o", out)
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := f.ArchUint("expert_count")
	f.Close()
	if n != 12 {
		t.Fatalf("expert_count %d, want 12 (75%% of 16)", n)
	}
	km := filepath.Join(dir, "pruned.keep.json")
	if _, err := trace.ReadKeep(km, s.NLayer, s.NExpert); err != nil {
		t.Fatal(err)
	}
	var rr runResult
	if err := json.Unmarshal([]byte(capture(t, runRun, "-m", out, "-p", "func main() {", "-n", "8", "--temp", "0", "-t", "2", "--json")), &rr); err != nil {
		t.Fatal(err)
	}
	if len(rr.GeneratedIDs) != 8 {
		t.Fatalf("pruned model generated %v", rr.GeneratedIDs)
	}

	evalJSON := func(args ...string) eval.Report {
		var r eval.Report
		args = append(args, "--corpus", code+","+prose, "-c", "48", "--max-tokens", "150", "-t", "2", "--json")
		if err := json.Unmarshal([]byte(capture(t, runEval, args...)), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	self := evalJSON("--ref", model, "--test", model)
	if self.KLDMean != 0 || self.Flips != 0 || self.Positions == 0 {
		t.Fatalf("model against itself: kld_mean %v, flips %s", self.KLDMean, self.FlipsText)
	}
	ref := filepath.Join(dir, "ref.logits")
	file := evalJSON("--ref", model, "--test", out, "--save-ref", ref, "--ref-encoding", "f32")
	keep := evalJSON("--ref", model, "--test", model, "--test-keep", km)
	saved := evalJSON("--ref-logits", ref, "--test", out)
	if file.KLDMean <= 0 || file.Positions != self.Positions {
		t.Fatalf("pruned: kld_mean %v over %d positions", file.KLDMean, file.Positions)
	}
	if keep.KLD != file.KLD || keep.Top1 != file.Top1 || saved.KLD != file.KLD || saved.NLLRef != file.NLLRef {
		t.Fatalf("KLD: pruned file %+v, --test-keep %+v, saved reference %+v", file.KLD, keep.KLD, saved.KLD)
	}
	t.Logf("75%% hybrid on the fixture: KLD %.4f, top-1 %.3f, flips %s", file.KLDMean, file.Top1.Mean, file.FlipsText)

	// --trace records the test side's routing over the same windows: one request per window,
	// with -b 1 every scored position a decode step; it refuses --moce.
	tf := filepath.Join(dir, "eval.trace")
	traced := evalJSON("--ref-logits", ref, "--test", model, "-b", "1", "--test-slots", "20", "--trace", tf)
	var info traceSummary
	if err := json.Unmarshal([]byte(capture(t, runTrace, "info", tf, "--json")), &info); err != nil {
		t.Fatal(err)
	}
	// --max-tokens 150 in windows: every window scores all its tokens but the last.
	if windows := 150 - traced.Positions; info.Tokens != traced.Positions || info.DecodeTokens != traced.Positions || info.Requests != windows {
		t.Fatalf("trace %+v for %d positions in %d windows", info, traced.Positions, windows)
	}
	if err := runEval([]string{"--ref-logits", ref, "--test", model, "-b", "1", "--test-slots", "20", "--moce", "0.1",
		"--trace", filepath.Join(dir, "moce.trace")}); err == nil || !strings.Contains(err.Error(), "--trace") {
		t.Fatalf("--trace with --moce: %v", err)
	}
}
