package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

// readVocabTests parses a .inp/.out pair the way llama.cpp's test-tokenizer-0 does: inputs are
// separated by "\n__ggml_vocab_test__\n" (a final separator ends the list), outputs are one
// line of space-separated ids per input.
func readVocabTests(t testing.TB, inp, out string) (texts []string, want [][]int32) {
	t.Helper()
	raw, err := os.ReadFile(inp)
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	s := string(raw)
	for pos := 0; pos < len(s); {
		next := strings.Index(s[pos:], sep)
		if next < 0 {
			texts = append(texts, s[pos:])
			break
		}
		texts = append(texts, s[pos:pos+next])
		pos += next + len(sep)
	}
	ob, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(ob), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		var ids []int32
		for _, f := range strings.Fields(l) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			ids = append(ids, int32(v))
		}
		want = append(want, ids)
	}
	if len(texts) != len(want) {
		t.Fatalf("%s: %d inputs but %d outputs", inp, len(texts), len(want))
	}
	return texts, want
}

func loadTokenizer(t testing.TB, path string) *Tokenizer {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tok
}

func idsString(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(int(id)))
	}
	return b.String()
}

// TestVocabFixtures reproduces every expected line of every .inp/.out pair exactly, and checks
// that decoding gives the input back.
func TestVocabFixtures(t *testing.T) {
	for _, path := range fixtures.Glob(t, "vocab/ggml-vocab-*.gguf") {
		name := strings.TrimSuffix(filepath.Base(path), ".gguf")
		t.Run(name, func(t *testing.T) {
			tok := loadTokenizer(t, path)
			texts, want := readVocabTests(t, path+".inp", path+".out")
			pass := 0
			for i, text := range texts {
				got := tok.Encode(text, false, false)
				if idsString(got) != idsString(want[i]) {
					t.Errorf("input %d %q:\n got  %s\n want %s", i, text, idsString(got), idsString(want[i]))
					continue
				}
				pass++
				if !utf8.ValidString(text) {
					continue
				}
				dec := tok.Decode(got)
				exp := text
				if tok.Type() == TypeSPM {
					// llama.cpp's SPM round trip: "▁" in the input comes back as a space.
					exp = strings.ReplaceAll(text, "\u2581", " ")
				}
				if dec != exp {
					t.Errorf("input %d %q: decodes to %q", i, text, dec)
				}
			}
			t.Logf("%s: %d/%d lines match", name, pass, len(texts))
		})
	}
}

// TestParityPrompts tokenizes every parity prompt with special tokens parsed and no BOS and
// requires llama.cpp's prompt_ids exactly (all parity models use the vocab-qwen3-4k vocabulary).
func TestParityPrompts(t *testing.T) {
	tok := loadTokenizer(t, fixtures.Path(t, "vocab", "vocab-qwen3-4k.gguf"))
	checked := 0
	for _, path := range fixtures.Glob(t, "parity/*.json") {
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		prompt := base[strings.LastIndexByte(base, '.')+1:]
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			PromptIDs []int32 `json:"prompt_ids"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		text, err := os.ReadFile(fixtures.Path(t, "parity", "prompts", prompt+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		got := tok.Encode(string(text), false, true)
		if idsString(got) != idsString(rec.PromptIDs) {
			t.Errorf("%s: prompt %q tokenizes to\n %v\nwant\n %v", base, prompt, got, rec.PromptIDs)
			continue
		}
		if dec := tok.Decode(got); dec != string(text) {
			t.Errorf("%s: decodes to %q", base, dec)
		}
		// Every "<|...|>" in the prompt became one control token, and nothing else did.
		controls := 0
		for _, id := range got {
			if tok.IsControl(id) {
				controls++
			}
		}
		if n := strings.Count(string(text), "<|im_"); controls != n {
			t.Errorf("%s: %d control tokens for %d <|im_...|> markers", base, controls, n)
		}
		checked++
	}
	if checked != 24 {
		t.Errorf("checked %d parity prompts, want 24 (6 models x 4 prompts)", checked)
	}
	// The chat prompt's markers are <|im_start|> = 4097 and <|im_end|> = 4098.
	ids := tok.Encode("<|im_start|>user\nhi<|im_end|>", false, true)
	start, _ := tok.TokenID("<|im_start|>")
	end, _ := tok.TokenID("<|im_end|>")
	if len(ids) != 6 || ids[0] != start || ids[5] != end || start != 4097 || end != 4098 {
		t.Errorf("special tokens: %v (<|im_start|> = %d, <|im_end|> = %d)", ids, start, end)
	}
}

// BenchmarkEncodeParityLong tokenizes the long parity prompt (898 tokens of Go source) with
// the 4k vocabulary and with the full Qwen3 vocabulary.
func BenchmarkEncodeParityLong(b *testing.B) {
	text, err := os.ReadFile(fixtures.Path(b, "parity", "prompts", "long.txt"))
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []string{"vocab-qwen3-4k.gguf", "ggml-vocab-qwen3.gguf"} {
		b.Run(v, func(b *testing.B) {
			tok := loadTokenizer(b, fixtures.Path(b, "vocab", v))
			n := len(tok.Encode(string(text), false, true))
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				tok.Encode(string(text), false, true)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
