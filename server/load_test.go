package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"
)

// N concurrent clients for a bounded time on loopback: every response is the one its
// prompt gives alone (greedy), none lost, duplicated or mixed up.
func TestLoad(t *testing.T) {
	const clients, perClient = 6, 200
	dur := 3 * time.Second
	if testing.Short() {
		dur = time.Second
	}
	_, url := start(t, defaultPath(t), Config{MaxQueue: clients})
	prompts := []string{"func main() {", "package http\n\nimport (", "// Sum returns", "type Reader interface {", "for i := 0; i <", "if err != nil {"}
	do := func(p string) (string, string, error) {
		body, _ := json.Marshal(map[string]any{"prompt": p, "max_tokens": 8, "temperature": 0})
		resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", "", err
		}
		defer resp.Body.Close()
		var r completionResponse
		if resp.StatusCode != 200 {
			return "", "", fmt.Errorf("status %d", resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return "", "", err
		}
		return r.ID, r.Choices[0].Text, nil
	}
	want := map[string]string{}
	for _, p := range prompts {
		_, text, err := do(p)
		if err != nil {
			t.Fatal(err)
		}
		want[p] = text
	}
	var mu sync.Mutex
	ids := map[string]bool{}
	var errs []error
	n := 0
	deadline := time.Now().Add(dur)
	t0 := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := 0; i < perClient && time.Now().Before(deadline); i++ {
				p := prompts[(c+i)%len(prompts)]
				id, text, err := do(p)
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case ids[id]:
					errs = append(errs, fmt.Errorf("duplicate response id %s", id))
				case text != want[p]:
					errs = append(errs, fmt.Errorf("prompt %q got %q, alone it gives %q", p, text, want[p]))
				}
				ids[id] = true
				n++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	if len(errs) > 0 {
		t.Fatalf("%d of %d requests failed; first: %v", len(errs), n, errs[0])
	}
	if len(ids) != n || n < clients {
		t.Fatalf("%d distinct responses for %d requests", len(ids), n)
	}
	t.Logf("%d clients, %d requests in %s: %.1f requests/s (8 tokens each, greedy)", clients, n, el.Round(time.Millisecond), float64(n)/el.Seconds())
}

// TestMeasureTTFT measures time to first token of a second turn sharing a ~2,000-token
// prefix with the first: the prefix from RAM, from disk (a fresh server), and recomputed.
// Run with REGOLITH_MEASURE=1 (it takes a minute on two cores).
func TestMeasureTTFT(t *testing.T) {
	if os.Getenv("REGOLITH_MEASURE") == "" {
		t.Skip("set REGOLITH_MEASURE=1 to measure time to first token (RAM / disk / recompute)")
	}
	path := defaultPath(t)
	e := openEngine(t, path)
	files, _ := filepath.Glob("*.go")
	sort.Strings(files)
	var src []byte
	for _, f := range files {
		b, _ := os.ReadFile(f)
		src = append(src, b...)
	}
	prefix := e.Tok.Encode(string(src), true, false)[:2000]
	turn := func(s string) []int32 {
		return append(append([]int32(nil), prefix...), e.Tok.Encode(s, false, false)...)
	}
	turn1, turn2 := turn("\n// first question: what does reuse do?\n"), turn("\n// second question: and restore?\n")
	ttft := func(s *Server, p []int32) (time.Duration, *genResult) {
		res, err := s.generate(context.Background(), greedyReq(p, 1))
		if err != nil {
			t.Fatal(err)
		}
		s.afterRequest()
		return res.ttft, res
	}
	reps := 5
	var ram, disk, rec []float64
	for r := 0; r < reps+1; r++ { // interleaved; the first round is discarded
		dir := t.TempDir()
		a, _ := start(t, path, Config{Session: newSession(t, e, 4096), CacheDir: dir})
		ttft(a, turn1)
		dRAM, resRAM := ttft(a, turn2)
		b, _ := start(t, path, Config{Session: newSession(t, e, 4096), CacheDir: dir})
		dDisk, resDisk := ttft(b, turn2)
		c, _ := start(t, path, Config{Session: newSession(t, e, 4096)})
		dRec, resRec := ttft(c, turn2)
		if resRAM.source != "ram" || resDisk.source != "disk" || resRec.cachedTokens != 0 {
			t.Fatalf("sources %q %q %d", resRAM.source, resDisk.source, resRec.cachedTokens)
		}
		t.Logf("round %d: ram %v (%d cached) disk %v (%d cached) recompute %v (%d tokens)", r, dRAM, resRAM.cachedTokens, dDisk, resDisk.cachedTokens, dRec, len(turn2))
		if r > 0 {
			ram, disk, rec = append(ram, float64(dRAM)), append(disk, float64(dDisk)), append(rec, float64(dRec))
		}
	}
	med := func(x []float64) time.Duration { sort.Float64s(x); return time.Duration(x[len(x)/2]) }
	mr, md, mc := med(ram), med(disk), med(rec)
	t.Logf("TTFT, second turn, %d-token prompt sharing %d tokens: RAM %v, disk %v, recompute %v; recompute/RAM %.1fx, recompute/disk %.1fx",
		len(turn2), len(prefix), mr, md, mc, float64(mc)/float64(mr), float64(mc)/float64(md))
	if !(md < mc && mr < mc) {
		t.Errorf("reuse is not faster than recomputing")
	}
}
