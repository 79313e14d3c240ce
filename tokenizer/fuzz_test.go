package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRoundTrip checks, on arbitrary valid UTF-8 with the 4k Qwen3 vocabulary, that
// Decode(Encode(s)) == s with and without special-token parsing (for invalid UTF-8: the
// text as llama.cpp reads it, invalid bytes as U+FFFD), that every id is in range,
// and that the streaming decoder emits only valid UTF-8 and reassembles the same text.
// Seeds: the fixture .inp strings when REGOLITH_FIXTURES is set, plus built-in strings.
//
//	go test -fuzz FuzzRoundTrip -fuzztime 60s ./tokenizer
func FuzzRoundTrip(f *testing.F) {
	for _, s := range roundTripSeeds {
		f.Add(s)
	}
	for _, g := range qwen4kGolden {
		f.Add(g.text)
	}
	if dir := os.Getenv("REGOLITH_FIXTURES"); dir != "" {
		inps, _ := filepath.Glob(filepath.Join(dir, "vocab", "*.inp"))
		for _, p := range inps {
			raw, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			for _, s := range strings.Split(string(raw), "\n__ggml_vocab_test__\n") {
				f.Add(s)
			}
		}
	}
	tok := loadTokenizer(f, qwen4k)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			// As in llama.cpp, each byte that does not start a well-formed sequence reads as
			// U+FFFD; the ids must still be in range and decode to that reading.
			want := string(appendCpts(nil, decodeCpts(s, nil)))
			for _, special := range []bool{false, true} {
				ids := tok.Encode(s, false, special)
				for _, id := range ids {
					if id < 0 || int(id) >= tok.NumTokens() {
						t.Fatalf("%q: id %d out of range", s, id)
					}
				}
				if dec := tok.Decode(ids); dec != want {
					t.Fatalf("special=%v: %q -> %q, want %q", special, s, dec, want)
				}
			}
			return
		}
		for _, special := range []bool{false, true} {
			ids := tok.Encode(s, false, special)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.NumTokens() {
					t.Fatalf("%q: id %d out of range", s, id)
				}
				if !special && tok.IsControl(id) {
					t.Fatalf("%q: control token %d without parseSpecial", s, id)
				}
			}
			if dec := tok.Decode(ids); dec != s {
				t.Fatalf("special=%v: %q -> %v -> %q", special, s, ids, dec)
			}
			d := tok.NewDecoder()
			var b strings.Builder
			for _, id := range ids {
				c := d.Add(id)
				if !utf8.ValidString(c) {
					t.Fatalf("%q: decoder chunk %q invalid", s, c)
				}
				b.WriteString(c)
			}
			if rest := d.Flush(); rest != "" {
				t.Fatalf("%q: decoder held back %q", s, rest)
			}
			if b.String() != s {
				t.Fatalf("%q: stream gives %q", s, b.String())
			}
		}
	})
}

func appendCpts(dst []byte, cpts []uint32) []byte {
	for _, c := range cpts {
		dst = appendCpt(dst, c)
	}
	return dst
}
