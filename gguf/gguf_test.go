package gguf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/quant"
)

func allFixtureFiles(t *testing.T) []string {
	files := fixtures.Glob(t, "models/*.gguf")
	return append(files, fixtures.Glob(t, "vocab/*.gguf")...)
}

// Reading any file llama.cpp wrote and writing it back gives identical bytes.
func TestRoundTripFixtures(t *testing.T) {
	files := append([]string{"testdata/vocab-qwen3-4k.gguf"}, allFixtureFiles(t)...)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := f.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), orig) {
				n := 0
				for n < min(buf.Len(), len(orig)) && buf.Bytes()[n] == orig[n] {
					n++
				}
				t.Fatalf("rewrite differs: %d vs %d bytes, first difference at %d", buf.Len(), len(orig), n)
			}
		})
	}
}

func TestRoundTripQuickNoFixtures(t *testing.T) {
	b, err := os.ReadFile("testdata/vocab-qwen3-4k.gguf")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Arch() != "qwen3moe" && f.Arch() != "" {
		t.Logf("arch %q", f.Arch())
	}
	toks, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(toks) != 4116 {
		t.Fatalf("tokenizer.ggml.tokens: %d strings, ok=%v; want 4116", len(toks), ok)
	}
	if pre, _ := f.String("tokenizer.ggml.pre"); pre != "qwen2" {
		t.Fatalf("tokenizer.ggml.pre = %q, want qwen2", pre)
	}
	var buf bytes.Buffer
	if err := f.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), b) {
		t.Fatal("rewrite differs")
	}
}

// Known values of the fixture models (from shared/fixtures/README.md).
func TestFixtureModelMetadata(t *testing.T) {
	f, err := Open(fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Arch() != "qwen3moe" {
		t.Fatalf("arch %q", f.Arch())
	}
	for key, want := range map[string]uint64{"block_count": 4, "embedding_length": 256, "expert_count": 16,
		"expert_used_count": 4, "attention.head_count": 8, "attention.head_count_kv": 2, "expert_feed_forward_length": 256} {
		if got, err := f.RequireArchUint(key); err != nil || got != want {
			t.Errorf("%s = %d (%v), want %d", key, got, err, want)
		}
	}
	ti, ok := f.Tensor("blk.0.ffn_gate_exps.weight")
	if !ok {
		t.Fatal("no blk.0.ffn_gate_exps.weight")
	}
	if ti.Type != quant.Q8_0 || len(ti.Dims) != 3 || ti.Dims[0] != 256 || ti.Dims[1] != 256 || ti.Dims[2] != 16 {
		t.Fatalf("blk.0.ffn_gate_exps.weight: %s %v", ti.Type, ti.Dims)
	}
	if want := uint64(256 * 256 * 16 / 32 * 34); ti.Size != want || uint64(len(f.Data(ti))) != want {
		t.Fatalf("size %d, want %d", ti.Size, want)
	}
	// A positional read gives the same bytes as the view.
	off, size := f.Range(ti)
	p := make([]byte, size)
	if _, err := f.ReadAt(p, off); err != nil || !bytes.Equal(p, f.Data(ti)) {
		t.Fatalf("ReadAt differs from the view (%v)", err)
	}
}

// Every truncation of a valid file is an error, never a panic.
func TestTruncated(t *testing.T) {
	b, err := os.ReadFile("testdata/vocab-qwen3-4k.gguf")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b)-64; n += 1 + n/50 {
		_, err := Parse(b[:n])
		if err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
		if n >= 4 && !errors.Is(err, ErrTruncated) {
			t.Fatalf("truncated to %d bytes: %v does not wrap ErrTruncated", n, err)
		}
	}
}

// Hostile counts and sizes are refused before allocating.
func TestHostile(t *testing.T) {
	header := func(nt, nkv uint64) []byte {
		var buf bytes.Buffer
		e := &encoder{w: bufioWriter(&buf)}
		e.u32(Magic)
		e.u32(3)
		e.u64(nt)
		e.u64(nkv)
		e.w.Flush()
		return buf.Bytes()
	}
	cases := map[string][]byte{
		"bad magic":         []byte("GGUX\x03\x00\x00\x00"),
		"version 1":         append([]byte("GGUF\x01\x00\x00\x00"), make([]byte, 16)...),
		"huge kv count":     header(0, 1<<62),
		"huge tensor count": header(1<<62, 0),
	}
	// A string array that claims 2^60 elements.
	{
		b := header(0, 1)
		var buf bytes.Buffer
		e := &encoder{w: bufioWriter(&buf)}
		e.str("k")
		e.u32(uint32(TypeArray))
		e.u32(uint32(TypeString))
		e.u64(1 << 60)
		e.w.Flush()
		cases["huge array"] = append(b, buf.Bytes()...)
	}
	// A string whose length is 2^63.
	{
		b := header(0, 1)
		var buf bytes.Buffer
		e := &encoder{w: bufioWriter(&buf)}
		e.u64(1 << 63)
		e.w.Flush()
		cases["huge key"] = append(b, buf.Bytes()...)
	}
	// A tensor whose dimensions overflow, and one past the end of the file.
	for name, dims := range map[string][]uint64{"overflowing dims": {1 << 40, 1 << 40}, "tensor past end": {1024, 1024}} {
		var buf bytes.Buffer
		if err := Write(&buf, nil, []WriteTensor{{Name: "w", Type: quant.F32, Dims: []uint64{4}, Data: make([]byte, 16)}}); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		f, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		_ = f
		// Patch the dims in place: header(24) + name(8+1) + ndims(4) then dims.
		b2 := append([]byte(nil), b...)
		b2 = patchDims(b2, dims)
		cases[name] = b2
	}
	for name, b := range cases {
		if _, err := Parse(b); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func TestWriteRejectsMismatch(t *testing.T) {
	err := Write(&bytes.Buffer{}, nil, []WriteTensor{{Name: "w", Type: quant.Q8_0, Dims: []uint64{32}, Data: make([]byte, 33)}})
	if err == nil || !strings.Contains(err.Error(), "34-byte") {
		t.Fatalf("got %v", err)
	}
}
