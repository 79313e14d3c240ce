package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any input parses to a File or an error; a parsed file re-encodes and
// re-parses to the same structure.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.gguf")
	if d := os.Getenv("REGOLITH_FIXTURES"); d != "" {
		more, _ := filepath.Glob(filepath.Join(d, "models", "*mini*.gguf"))
		seeds = append(seeds, more...)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err == nil {
			// Seed with the header region: the data section adds nothing for the parser.
			f.Add(b[:min(len(b), 1<<16)])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse(b)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := g.Encode(&buf); err != nil {
			return // e.g. alignment padding of a truncated final tensor
		}
		h, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("re-encoded file does not parse: %v", err)
		}
		if len(h.KV) != len(g.KV) || len(h.Tensors) != len(g.Tensors) {
			t.Fatalf("re-encoded file differs: %d/%d kvs, %d/%d tensors", len(h.KV), len(g.KV), len(h.Tensors), len(g.Tensors))
		}
	})
}
