package kvcache

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func filled(t *testing.T, n int) *Cache {
	t.Helper()
	c, err := New(3, 64, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for l := range c.K {
		for i := range c.K[l][:n*c.Dim] {
			c.K[l][i], c.V[l][i] = uint16(r.Uint32()), uint16(r.Uint32())
		}
	}
	c.N = n
	return c
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	c := filled(t, 40)
	fp := Fingerprint{1, 2, 3}
	toks := make([]int32, 30) // a prefix of the filled positions
	for i := range toks {
		toks[i] = int32(i * 7)
	}
	path := filepath.Join(dir, "s.rgkv")
	if err := c.Save(path, fp, toks); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(path)
	if err != nil || !slices.Equal(h.Tokens, toks) || h.Layers != 3 || h.Dim != 8 || h.Fingerprint != fp {
		t.Fatalf("header %+v %v", h, err)
	}
	d, _ := New(3, 64, 8, 0)
	d.N = 5
	got, err := d.Load(path, fp)
	if err != nil || !slices.Equal(got, toks) || d.N != 30 {
		t.Fatalf("load: %v %v N=%d", got, err, d.N)
	}
	for l := range c.K {
		if !slices.Equal(c.K[l][:30*8], d.K[l][:30*8]) || !slices.Equal(c.V[l][:30*8], d.V[l][:30*8]) {
			t.Fatalf("layer %d differs", l)
		}
	}
	if _, err := d.Load(path, Fingerprint{9}); err == nil || IsCorrupt(err) {
		t.Fatalf("fingerprint mismatch: %v", err)
	}
	small, _ := New(3, 16, 8, 0)
	if _, err := small.Load(path, fp); err == nil {
		t.Fatal("loaded 30 positions into a context of 16")
	}
	if err := c.Save(path, fp, make([]int32, 41)); err == nil {
		t.Fatal("saved more tokens than positions")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// Every single-byte flip and every truncation of a file is detected: never loaded, and
// the error is a CorruptError (or the fingerprint check, for flips inside it).
func TestCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	c := filled(t, 4)
	fp := Fingerprint{7}
	path := filepath.Join(dir, "s.rgkv")
	if err := c.Save(path, fp, []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	bad := filepath.Join(dir, "bad.rgkv")
	d, _ := New(3, 64, 8, 0)
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x10
		os.WriteFile(bad, b, 0o644)
		if _, err := d.Load(bad, fp); err == nil {
			t.Fatalf("flip at byte %d loaded", i)
		} else if !IsCorrupt(err) && !(i >= 24 && i < 56) {
			t.Fatalf("flip at byte %d: %v is not a CorruptError", i, err)
		}
		if d.N != 0 {
			t.Fatalf("flip at %d: cache left with N=%d", i, d.N)
		}
	}
	for n := 0; n < len(good); n += 7 {
		os.WriteFile(bad, good[:n], 0o644)
		if _, err := d.Load(bad, fp); !IsCorrupt(err) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
		if _, err := ReadHeader(bad); !IsCorrupt(err) {
			t.Fatalf("header of truncated file (%d): %v", n, err)
		}
	}
	// A header claiming 2^24 tokens in a tiny file allocates nothing big.
	b := slices.Clone(good)
	b[20], b[21], b[22], b[23] = 0, 0, 0, 1
	os.WriteFile(bad, b, 0o644)
	if _, err := ReadHeader(bad); !IsCorrupt(err) {
		t.Fatalf("huge token count: %v", err)
	}
}

func TestSaveErrors(t *testing.T) {
	c := filled(t, 2)
	if err := c.Save(filepath.Join(t.TempDir(), "missing", "x"), Fingerprint{}, []int32{1}); err == nil {
		t.Fatal("saved into a missing directory")
	}
}
