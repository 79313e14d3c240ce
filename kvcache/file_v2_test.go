package kvcache

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recFilled is a cache of n positions with a recurrent state of 2 layers × (3 + 5) floats
// whose values encode the position, checkpointed at every position in ckpts and live at n.
func recFilled(t *testing.T, n int, ckpts ...int) *Cache {
	t.Helper()
	c := filled(t, 0)
	r, err := c.AttachRecurrent(2, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for l := range c.K {
		for i := range c.K[l][:n*c.Dim] {
			c.K[l][i], c.V[l][i] = uint16(rng.Uint32()), uint16(rng.Uint32())
		}
	}
	for _, p := range append(ckpts, n) {
		setState(r, p)
		c.N = p
		r.Advanced(p, 2)
	}
	return c
}

func setState(r *Recurrent, p int) {
	for l := range r.Conv {
		for i := range r.Conv[l] {
			r.Conv[l][i] = float32(p*1000 + l*100 + i)
		}
		for i := range r.SSM[l] {
			r.SSM[l][i] = -float32(p*1000 + l*100 + i)
		}
	}
}

func stateIs(r *Recurrent, p int) bool {
	for l := range r.Conv {
		for i := range r.Conv[l] {
			if r.Conv[l][i] != float32(p*1000+l*100+i) {
				return false
			}
		}
		for i := range r.SSM[l] {
			if r.SSM[l][i] != -float32(p*1000+l*100+i) {
				return false
			}
		}
	}
	return true
}

// A file of a cache with recurrent state holds the state at its end and the checkpoints
// before it; loading restores them, and truncating inside the file's prefix goes back to
// the latest saved checkpoint.
func TestSaveLoadRecurrent(t *testing.T) {
	dir := t.TempDir()
	c := recFilled(t, 30, 10, 20, 25)
	fp := Fingerprint{4}
	toks := make([]int32, 30)
	for i := range toks {
		toks[i] = int32(i + 100)
	}
	// The file may end at the live state or a checkpoint, not elsewhere.
	if got := c.Resumable(24); got != 20 {
		t.Fatalf("Resumable(24) = %d", got)
	}
	if got := c.Resumable(99); got != 30 {
		t.Fatalf("Resumable(99) = %d", got)
	}
	path := filepath.Join(dir, "s.rgkv")
	if err := c.Save(path, fp, toks[:24]); err == nil || !strings.Contains(err.Error(), "no recurrent state at position 24") {
		t.Fatalf("save at a position without state: %v", err)
	}
	if err := c.Save(path, fp, toks[:25]); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(path)
	if err != nil || h.Version != 2 || !slices.Equal(h.States, []int{10, 20, 25}) || h.RecLayers != 2 || h.ConvFloats != 3 || h.SSMFloats != 5 {
		t.Fatalf("header %+v %v", h, err)
	}
	fi, _ := os.Stat(path)
	if fi.Size() != h.FileBytes() {
		t.Fatalf("size %d, FileBytes %d", fi.Size(), h.FileBytes())
	}

	d := recFilled(t, 7, 3) // an unrelated state, replaced by the file's
	got, err := d.Load(path, fp)
	if err != nil || !slices.Equal(got, toks[:25]) || d.N != 25 || d.Rec.N != 25 || !stateIs(d.Rec, 25) {
		t.Fatalf("load: %v N=%d rec N=%d", err, d.N, d.Rec.N)
	}
	if !slices.Equal(d.Rec.Checkpoints(), []int{10, 20, 25}) {
		t.Fatalf("checkpoints after load %v", d.Rec.Checkpoints())
	}
	for l := range c.K {
		if !slices.Equal(c.K[l][:25*8], d.K[l][:25*8]) || !slices.Equal(c.V[l][:25*8], d.V[l][:25*8]) {
			t.Fatalf("layer %d differs", l)
		}
	}
	d.Truncate(22)
	if d.N != 20 || !stateIs(d.Rec, 20) {
		t.Fatalf("Truncate(22) after load: N %d", d.N)
	}
	d.Truncate(15)
	if d.N != 10 || !stateIs(d.Rec, 10) {
		t.Fatalf("Truncate(15) after load: N %d", d.N)
	}
	d.Truncate(9)
	if d.N != 0 || d.Rec.N != 0 || len(d.Rec.Checkpoints()) != 0 {
		t.Fatalf("Truncate(9) after load: N %d", d.N)
	}

	// A session with fewer checkpoints allowed keeps the first and the latest.
	e := recFilled(t, 0)
	e.Rec.MaxCheckpoints = 2
	if _, err := e.Load(path, fp); err != nil || !slices.Equal(e.Rec.Checkpoints(), []int{10, 25}) {
		t.Fatalf("load with 2 checkpoints: %v %v", err, e.Rec.Checkpoints())
	}

	// Other recurrent geometries and caches without recurrent state are refused (not
	// corrupt), and leave the cache as it was.
	other, _ := New(3, 64, 8, 0)
	other.AttachRecurrent(2, 3, 6)
	if _, err := other.Load(path, fp); err == nil || IsCorrupt(err) || !strings.Contains(err.Error(), "recurrent state") {
		t.Fatalf("other recurrent geometry: %v", err)
	}
	plain := filled(t, 5)
	if _, err := plain.Load(path, fp); err == nil || IsCorrupt(err) || plain.N != 5 {
		t.Fatalf("recurrent file into a plain cache: %v", err)
	}

	// The fingerprint covers the recurrent geometry, and a plain cache's is unchanged.
	var model [32]byte
	a, b := filled(t, 0), filled(t, 0)
	fa := SessionFingerprint(model, a)
	b.AttachRecurrent(2, 3, 5)
	fb := SessionFingerprint(model, b)
	b.Rec = nil
	b.AttachRecurrent(2, 3, 6)
	if fa == fb || fb == SessionFingerprint(model, b) || fa != SessionFingerprint(model, filled(t, 0)) {
		t.Fatal("fingerprint does not separate recurrent geometries")
	}
}

// A recurrent cache's file: every single-byte flip and every truncation is detected; the
// cache is left empty (N 0, recurrent state reset), never half-loaded.
func TestCorruptFilesRecurrent(t *testing.T) {
	dir := t.TempDir()
	c := recFilled(t, 4, 2)
	fp := Fingerprint{7}
	path := filepath.Join(dir, "s.rgkv")
	if err := c.Save(path, fp, []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	bad := filepath.Join(dir, "bad.rgkv")
	// After a failed load the cache holds its old state (the header was refused) or nothing
	// (N 0, recurrent state reset), never part of the file.
	check := func(d *Cache, what string) {
		t.Helper()
		old := d.N == 3 && d.Rec.N == 3 && stateIs(d.Rec, 3) && slices.Equal(d.Rec.Checkpoints(), []int{1, 3})
		empty := d.N == 0 && d.Rec.N == 0 && len(d.Rec.Checkpoints()) == 0 && slices.Max(d.Rec.Conv[1]) == 0 && slices.Min(d.Rec.SSM[1]) == 0
		if !old && !empty {
			t.Fatalf("%s: cache left with N=%d, rec N=%d, checkpoints %v", what, d.N, d.Rec.N, d.Rec.Checkpoints())
		}
	}
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x10
		os.WriteFile(bad, b, 0o644)
		d := recFilled(t, 3, 1)
		if _, err := d.Load(bad, fp); err == nil {
			t.Fatalf("flip at byte %d loaded", i)
		} else if !IsCorrupt(err) && !(i >= 24 && i < 56) {
			t.Fatalf("flip at byte %d: %v is not a CorruptError", i, err)
		}
		check(d, fmt.Sprintf("flip at byte %d", i))
	}
	d := recFilled(t, 3, 1)
	for n := 0; n < len(good); n += 3 {
		os.WriteFile(bad, good[:n], 0o644)
		if _, err := d.Load(bad, fp); !IsCorrupt(err) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
		if _, err := ReadHeader(bad); !IsCorrupt(err) {
			t.Fatalf("header of truncated file (%d): %v", n, err)
		}
	}
	// The good file still loads into the same cache after all that.
	if _, err := d.Load(path, fp); err != nil || d.N != 4 || !stateIs(d.Rec, 4) {
		t.Fatalf("good file: %v", err)
	}
	// Huge state counts and geometries in a tiny file allocate nothing big.
	for _, off := range []int{56, 60, 64, 68} {
		b := slices.Clone(good)
		binary.LittleEndian.PutUint32(b[off:], 1<<12)
		os.WriteFile(bad, b, 0o644)
		if _, err := ReadHeader(bad); !IsCorrupt(err) {
			t.Fatalf("huge field at %d: %v", off, err)
		}
	}
}

// toV1 rewrites a version 2 file of a cache without recurrent state as version 1 would
// have written it.
func toV1(t *testing.T, v2 []byte) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(v2[20:]))
	hdrEnd := headerFixed + recFixed + 4*n
	b := slices.Clone(v2[:headerFixed])
	binary.LittleEndian.PutUint32(b[8:], 1)
	b = append(b, v2[headerFixed+recFixed:hdrEnd]...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return append(b, v2[hdrEnd+4:]...)
}

// Version 1 files (written before recurrent state was saved) still load into a cache
// without recurrent state, and are refused clearly by one with.
func TestVersion1Files(t *testing.T) {
	dir := t.TempDir()
	c := filled(t, 20)
	fp := Fingerprint{5}
	path := filepath.Join(dir, "v2.rgkv")
	if err := c.Save(path, fp, make([]int32, 20)); err != nil {
		t.Fatal(err)
	}
	v2, _ := os.ReadFile(path)
	v1path := filepath.Join(dir, "v1.rgkv")
	os.WriteFile(v1path, toV1(t, v2), 0o644)
	h, err := ReadHeader(v1path)
	if err != nil || h.Version != 1 || len(h.Tokens) != 20 || h.States != nil {
		t.Fatalf("v1 header %+v %v", h, err)
	}
	d, _ := New(3, 64, 8, 0)
	if _, err := d.Load(v1path, fp); err != nil || d.N != 20 {
		t.Fatalf("v1 load: %v", err)
	}
	for l := range c.K {
		if !slices.Equal(c.K[l][:20*8], d.K[l][:20*8]) || !slices.Equal(c.V[l][:20*8], d.V[l][:20*8]) {
			t.Fatalf("layer %d differs", l)
		}
	}
	r := recFilled(t, 3)
	if _, err := r.Load(v1path, fp); err == nil || IsCorrupt(err) || !strings.Contains(err.Error(), "version 1") || r.N != 3 {
		t.Fatalf("v1 file into a recurrent cache: %v", err)
	}
}
