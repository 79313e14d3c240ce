package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/regolith/regolith/expert"
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

// Without -b the prefill chunk is 512, or with --mem the one sized from the budget
// (expert.AutoChunk); -b overrides both.
func TestChunkFromBudget(t *testing.T) {
	model := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	for _, c := range []struct {
		args []string
		want int // 0: expert.AutoChunk's choice
	}{
		{nil, 512},
		{[]string{"--mem", "24MiB"}, 0},
		{[]string{"--mem", "24MiB", "-b", "32"}, 32},
	} {
		fs := newFlags("t", "", "")
		g := addGenFlags(fs)
		if _, err := parseFlags(fs, append([]string{"-m", model, "-t", "2", "-c", "256"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		e, s, st, err := g.open()
		if err != nil {
			t.Fatal(err)
		}
		want := c.want
		if want == 0 {
			want = expert.AutoChunk(e.Model, e.File, 24<<20, expert.PlanOptions{Ctx: 256, Threads: 2})
			if want <= 1 {
				t.Fatalf("--mem 24MiB: auto chunk %d", want)
			}
		}
		if *g.batch != want || (st != nil && st.Describe() == "") {
			t.Fatalf("%v: chunk %d, want %d", c.args, *g.batch, want)
		}
		s.Close()
		st.Close()
		e.Close()
	}
}
