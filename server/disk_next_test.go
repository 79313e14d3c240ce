package server

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/kvcache"
)

// qwen3next (recurrent Gated DeltaNet state): the disk tier saves the state with its
// checkpoints, and a fresh server restores it bit-identically to recomputing (0 KLD), also
// for a prompt that shares only part of the saved prefix (it resumes at the latest saved
// checkpoint inside the shared part and recomputes the rest); RAM reuse and slot files
// likewise.
func TestDiskRestoreExactQwen3Next(t *testing.T) {
	dir := t.TempDir()
	path := fixtures.Path(t, "models", "qwen3next-mini-f32.gguf")
	src, _ := os.ReadFile("openai.go")
	prefix := string(src[:1500])
	cfg := Config{CacheDir: dir, Chunk: 128} // prompt chunks of >= 128: a checkpoint after each
	s1, _ := start(t, path, cfg)
	turn1 := s1.e.Tok.Encode(prefix+"\nfunc one() {}\n", true, false)
	turn2 := s1.e.Tok.Encode(prefix+"\nfunc two() int {\n\treturn 2\n}\n", true, false)
	// turn3 diverges inside the prefix: only an earlier checkpoint is usable.
	cut := len(turn1) * 2 / 3
	turn3 := append(slices.Clone(turn1[:cut]), turn2[len(turn2)-20:]...)
	ref1 := firstLogits(t, s1, turn1)
	files, _ := filepath.Glob(filepath.Join(dir, "*"+fileExt))
	if len(files) != 1 {
		t.Fatalf("%d session files after one request", len(files))
	}
	h, err := kvcache.ReadHeader(files[0])
	if err != nil || h.RecLayers == 0 || len(h.States) < 3 || h.States[len(h.States)-1] != len(turn1) {
		t.Fatalf("file of turn 1 (%d tokens): states %v, %v", len(turn1), h.States, err)
	}
	t.Logf("turn 1: %d tokens, file %d bytes, states at %v", len(turn1), h.FileBytes(), h.States)

	ref := func(prompt []int32) *genResult {
		s, _ := start(t, path, Config{Chunk: 128})
		r := firstLogits(t, s, prompt)
		if r.cachedTokens != 0 {
			t.Fatal("the reference reused state")
		}
		return r
	}
	lastState := func(m int) int {
		u := 0
		for _, p := range h.States {
			if p <= m {
				u = p
			}
		}
		return u
	}
	for _, tc := range []struct {
		name   string
		prompt []int32
	}{{"turn 2 (shares the prefix)", turn2}, {"turn 3 (shares 2/3 of it)", turn3}} {
		s, _ := start(t, path, cfg)
		got := firstLogits(t, s, tc.prompt)
		m := min(lcp(turn1, tc.prompt), len(tc.prompt)-flashRows)
		if got.source != "disk" || got.cachedTokens != lastState(m) || got.cachedTokens == 0 {
			t.Fatalf("%s: %d tokens from %q, want %d (latest state at or before %d)", tc.name, got.cachedTokens, got.source, lastState(m), m)
		}
		t.Logf("%s: shares %d tokens, restored %d from disk", tc.name, lcp(turn1, tc.prompt), got.cachedTokens)
		sameBits(t, tc.name+": disk restore vs recompute", got.firstLogits, ref(tc.prompt).firstLogits)
		// Back to turn 1 on the same server: RAM reuse from its checkpoints (or disk).
		again := firstLogits(t, s, turn1)
		if again.cachedTokens == 0 {
			t.Fatalf("%s: turn 1 again reused nothing", tc.name)
		}
		sameBits(t, tc.name+": turn 1 again", again.firstLogits, ref1.firstLogits)
	}

	// Slot files: save, forget, restore, continue exactly.
	s, url := start(t, path, Config{CacheDir: t.TempDir(), Chunk: 128})
	firstLogits(t, s, turn1)
	if code, m := post(t, url, "/slots/0?action=save", `{"filename":"a.bin"}`); code != 200 || m["n_saved"].(float64) != float64(len(turn1)) {
		t.Fatalf("save: %d %v", code, m)
	}
	s.setCached(nil, false)
	s.sess.Truncate(0)
	if code, m := post(t, url, "/slots/restore", `{"filename":"a.bin"}`); code != 200 || m["n_restored"].(float64) != float64(len(turn1)) {
		t.Fatalf("restore: %d %v", code, m)
	}
	got := firstLogits(t, s, turn2)
	if got.source != "ram" || got.cachedTokens == 0 {
		t.Fatalf("after a slot restore: %d tokens from %q", got.cachedTokens, got.source)
	}
	sameBits(t, "after a slot restore", got.firstLogits, ref(turn2).firstLogits)
}
