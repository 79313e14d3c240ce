package model

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/kvcache"
)

// A qwen3next session saved to a file (keys, values, Gated DeltaNet state and its
// checkpoints) and loaded into a fresh session continues bit for bit as if it had never
// been saved (0 KLD); a prompt sharing only part of the file's tokens goes back to the
// latest saved checkpoint inside the shared part and recomputes from there, bit-identical
// to a session that computed the same chunks from scratch.
func TestQwen3NextSessionFile(t *testing.T) {
	m := openNext(t, "qwen3next-mini-f32.gguf")
	pc, _ := loadParity(t, filepath.Join(fixtures.Path(t, "parity"), "qwen3next-mini-f32.chat.json"))
	p := pc.PromptIDs
	k := len(p) / 2
	a, b, c := p[:k], p[k:len(p)-4], p[len(p)-4:]
	x, y, z := []int32{p[1]}, []int32{p[2]}, []int32{p[3]}
	newS := func() *Session {
		s, err := NewSession(m, Options{Ctx: 128, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	fp := kvcache.Fingerprint{1}
	dir := t.TempDir()

	// The saved session: prompt chunks a, b, then two decoded tokens.
	s := newS()
	forwardAll(t, s, a, b, x, y)
	all := slices.Concat(a, b, x, y)
	path := filepath.Join(dir, "s.rgkv")
	if err := s.Cache().Save(path, fp, all); err != nil {
		t.Fatal(err)
	}
	h, err := kvcache.ReadHeader(path)
	if err != nil || !slices.Equal(h.States, []int{len(a), len(a) + len(b), len(all)}) {
		t.Fatalf("header states %v, %v", h.States, err)
	}
	wantNext := append([]float32(nil), forwardAll(t, s, z)...)

	// Continuing at the file's end: the logits the saved session computes next.
	r := newS()
	forwardAll(t, r, c) // some unrelated state, replaced by the file's
	if got, err := r.Cache().Load(path, fp); err != nil || !slices.Equal(got, all) || r.Pos() != len(all) {
		t.Fatalf("load: %v, pos %d", err, r.Pos())
	}
	if got := forwardAll(t, r, z); !sameBits(got, wantNext) {
		t.Fatal("logits after a load differ from the saved session's own")
	}

	// A prompt that shares a, b and then diverges: back to the checkpoint at len(a+b).
	ref := newS()
	want := append([]float32(nil), forwardAll(t, ref, a, b, c)...)
	if _, err := r.Cache().Load(path, fp); err != nil {
		t.Fatal(err)
	}
	if n := r.Truncate(len(a) + len(b) + 1); n != len(a)+len(b) {
		t.Fatalf("Truncate inside the decoded part gave %d, want the checkpoint at %d", n, len(a)+len(b))
	}
	if got := forwardAll(t, r, c); !sameBits(got, want) {
		t.Fatal("logits after restoring the file's checkpoint at a+b differ from a fresh session's")
	}
	// Sharing only part of b: back to the checkpoint at len(a).
	if _, err := r.Cache().Load(path, fp); err != nil {
		t.Fatal(err)
	}
	if n := r.Truncate(len(a) + 2); n != len(a) {
		t.Fatalf("Truncate inside b gave %d, want the checkpoint at %d", n, len(a))
	}
	if got := forwardAll(t, r, b, c); !sameBits(got, want) {
		t.Fatal("logits after restoring the file's checkpoint at a differ from a fresh session's")
	}

	// A file may end only where a state is: the prompt's end (a checkpoint) is saveable
	// after decoding past it, a decoded position without a checkpoint is not.
	if n := s.Cache().Resumable(len(all) - 1); n != len(a)+len(b) {
		t.Fatalf("Resumable(%d) = %d", len(all)-1, n)
	}
	short := filepath.Join(dir, "short.rgkv")
	if err := s.Cache().Save(short, fp, all[:len(a)+len(b)]); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Cache().Load(short, fp); err != nil || r.Pos() != len(a)+len(b) {
		t.Fatalf("load of the prompt-end file: %v", err)
	}
	if got := forwardAll(t, r, c); !sameBits(got, want) {
		t.Fatal("logits after the prompt-end file differ from a fresh session's")
	}
	if err := s.Cache().Save(short, fp, all[:len(all)-1]); err == nil {
		t.Fatal("saved a position without a recurrent state")
	}
}
