package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
)

// With --mem the experts stream through the store: the same greedy tokens as the resident
// run, with the store's counters in the JSON; a budget below the dense weights is an error
// that states the minimum.
func TestRunMemSameTokens(t *testing.T) {
	model := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	args := []string{"-m", model, "-p", "func main() { fmt.Println(", "-n", "24", "--temp", "0", "--json", "-t", "2", "-c", "256", "-b", "8"}
	var ref, got runResult
	if err := json.Unmarshal([]byte(capture(t, runRun, args...)), &ref); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{{"--mem", "24MiB"}, {"--mem", "24MiB", "--direct-io", "--io-threads", "3"}} {
		if err := json.Unmarshal([]byte(capture(t, runRun, append(append([]string{}, args...), extra...)...)), &got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ids(got.GeneratedIDs), ids(ref.GeneratedIDs)) {
			t.Fatalf("%v: generated %v, resident %v", extra, got.GeneratedIDs, ref.GeneratedIDs)
		}
		st := got.ExpertStore
		if st == nil || st.Decode.Tokens != 23 || st.Prefill.Tokens != int64(len(got.PromptIDs)) || st.Total().Misses == 0 {
			t.Fatalf("%v: store stats %+v", extra, st)
		}
	}
	err := runRun(append(append([]string{}, args...), "--mem", "2MiB"))
	if err == nil || !strings.Contains(err.Error(), "too small") || !strings.Contains(err.Error(), "at least") {
		t.Fatalf("--mem 2MiB: %v", err)
	}
}
