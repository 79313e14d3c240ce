package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func firstLogits(t *testing.T, s *Server, prompt []int32) *genResult {
	t.Helper()
	g := greedyReq(prompt, 2)
	g.keepLogits = true
	res, err := s.generate(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	s.afterRequest()
	return res
}

// A second turn restored from disk by a fresh server gives the same logits (bit for bit,
// 0 KLD) as a server that recomputes it; a corrupt file is reported, removed, and the
// request recomputes, still exactly.
func TestDiskRestoreExact(t *testing.T) {
	dir := t.TempDir()
	path := defaultPath(t)
	src, _ := os.ReadFile("openai.go")
	prefix := string(src[:1500])
	s1, _ := start(t, path, Config{CacheDir: dir})
	turn1 := s1.e.Tok.Encode(prefix+"\nfunc one() {}\n", true, false)
	turn2 := s1.e.Tok.Encode(prefix+"\nfunc two() int {\n\treturn 2\n}\n", true, false)
	firstLogits(t, s1, turn1)
	files, _ := filepath.Glob(filepath.Join(dir, "*"+fileExt))
	if len(files) != 1 {
		t.Fatalf("%d session files after one request", len(files))
	}

	t0 := time.Now()
	s2, _ := start(t, path, Config{CacheDir: dir})
	if s2.disk.len() != 1 {
		t.Fatalf("index has %d files", s2.disk.len())
	}
	t.Logf("second server indexed the directory in %s (model load included)", time.Since(t0))
	restored := firstLogits(t, s2, turn2)
	if restored.source != "disk" || restored.cachedTokens < 300 {
		t.Fatalf("turn 2: %d tokens from %q", restored.cachedTokens, restored.source)
	}
	s3, _ := start(t, path, Config{})
	ref := firstLogits(t, s3, turn2)
	if ref.cachedTokens != 0 {
		t.Fatal("the reference reused state")
	}
	sameBits(t, "disk restore vs recompute", restored.firstLogits, ref.firstLogits)

	// Corrupt the payload: the next server indexes the file (its header is fine), the
	// restore fails its checksum, the file is removed, the request recomputes exactly.
	files, _ = filepath.Glob(filepath.Join(dir, "*"+fileExt))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		b[len(b)-100] ^= 1
		os.WriteFile(f, b, 0o644)
	}
	var log strings.Builder
	s4, _ := start(t, path, Config{CacheDir: dir, Log: &log})
	got := firstLogits(t, s4, turn2)
	if got.source == "disk" || !strings.Contains(log.String(), "checksum") {
		t.Fatalf("corrupt file: source %q, log %q", got.source, log.String())
	}
	if !strings.Contains(log.String(), "removed") {
		t.Fatalf("corrupt file not removed: %q", log.String())
	}
	// The request saved its state again under the same name: a good file now.
	if _, err := newSession(t, s4.e, 1024).Cache().Load(filepath.Join(dir, tokensName(turn2)), s4.fp); err != nil {
		t.Fatalf("turn 2's file after the request: %v", err)
	}
	sameBits(t, "after a corrupt file", got.firstLogits, ref.firstLogits)
	// A truncated file is caught by the index at startup.
	files, _ = filepath.Glob(filepath.Join(dir, "*"+fileExt))
	b, _ := os.ReadFile(files[0])
	os.WriteFile(files[0], b[:len(b)/2], 0o644)
	log.Reset()
	s5, _ := start(t, path, Config{CacheDir: dir, Log: &log})
	if s5.disk.len() != len(files)-1 || !strings.Contains(log.String(), "partial") {
		t.Fatalf("truncated file indexed: %d, log %q", s5.disk.len(), log.String())
	}
}

// LRU eviction beyond the size cap, and slot save/restore through HTTP.
func TestDiskLRUAndSlots(t *testing.T) {
	dir := t.TempDir()
	s, url := start(t, defaultPath(t), Config{CacheDir: dir, CacheSize: 1})
	src, _ := os.ReadFile("server.go")
	var last []int32
	for i := range 3 {
		p := s.e.Tok.Encode(string(src[i*400:i*400+400]), true, false)
		firstLogits(t, s, p)
		last = p
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+fileExt))
	if len(files) != 0 || s.disk.total() != 0 {
		t.Fatalf("cap of 1 byte keeps %d files", len(files))
	}
	if code, m := post(t, url, "/slots/0?action=save", `{"filename":"a.bin"}`); code != 200 || m["n_saved"].(float64) != float64(len(last)) {
		t.Fatalf("save: %d %v", code, m)
	}
	s.setCached(nil, false)
	s.sess.Truncate(0)
	if code, m := post(t, url, "/slots/restore", `{"filename":"a.bin"}`); code != 200 || m["n_restored"].(float64) != float64(len(last)) {
		t.Fatalf("restore: %d %v", code, m)
	}
	if !slices.Equal(s.cached, last) || s.sess.Pos() != len(last) {
		t.Fatal("restore did not bring the state back")
	}
	if code, _ := post(t, url, "/slots/restore", `{"filename":"missing.bin"}`); code != 404 {
		t.Fatalf("missing slot: %d", code)
	}
}
