package tokenizer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/regolith/regolith/gguf"
)

const qwen4k = "testdata/vocab-qwen3-4k.gguf"

// Expected ids for testdata/vocab-qwen3-4k.gguf, produced by llama.cpp's llama-tokenize
// (commit 0a50d99, --no-escape --ids, no BOS) with special tokens parsed and not parsed.
var qwen4kGolden = []struct {
	text               string
	special, noSpecial []int32
}{
	{"Hello world", []int32{39, 301, 385, 1879}, nil},
	{" Hello, y'all! How're you 😁 ?我想在apple工作1314151天～", []int32{472, 301, 385, 11, 379, 6, 541, 0, 2585, 2299, 498, 220, 172, 253, 246, 223, 937, 162, 230, 239, 162, 225, 111, 161, 250, 101, 676, 273, 161, 115, 98, 160, 121, 250, 16, 18, 16, 19, 16, 20, 16, 161, 97, 102, 171, 121, 252}, nil},
	{"   leading and trailing   \n\n\t tabs  ", []int32{256, 512, 2228, 323, 489, 604, 287, 262, 271, 197, 259, 3435, 256}, nil},
	{"3333333 numbers 12.5e-3", []int32{18, 18, 18, 18, 18, 18, 18, 1629, 1902, 220, 16, 17, 13, 20, 68, 12, 18}, nil},
	{"<|im_start|>user\nhi<|im_end|>", []int32{4097, 872, 198, 71, 72, 4098}, []int32{27, 91, 318, 1261, 471, 91, 29, 872, 198, 71, 72, 27, 91, 318, 62, 408, 91, 29}},
	{"Ünïcödé ñ 🦙 ÄPFEL", []int32{127, 250, 77, 127, 107, 66, 2956, 67, 963, 1683, 109, 220, 172, 253, 99, 247, 1683, 226, 47, 37, 2749}, nil},
	{"func main() {\n\tfmt.Println(\"hi\")\n}\n", []int32{2830, 1887, 368, 341, 1166, 2501, 1069, 1586, 2261, 445, 71, 72, 1138, 532}, nil},
}

func TestQwen4kGolden(t *testing.T) {
	tok := loadTokenizer(t, qwen4k)
	if tok.NumTokens() != 4116 || tok.Type() != TypeBPE || tok.PreTokenizer() != "qwen2" {
		t.Fatalf("loaded %d tokens, type %v, pre %q", tok.NumTokens(), tok.Type(), tok.PreTokenizer())
	}
	for _, g := range qwen4kGolden {
		noSpecial := g.noSpecial
		if noSpecial == nil {
			noSpecial = g.special
		}
		if got := tok.Encode(g.text, false, true); idsString(got) != idsString(g.special) {
			t.Errorf("Encode(%q, special) = %v, want %v", g.text, got, g.special)
		}
		if got := tok.Encode(g.text, false, false); idsString(got) != idsString(noSpecial) {
			t.Errorf("Encode(%q, no special) = %v, want %v", g.text, got, noSpecial)
		}
		// add_bos_token is false and there is no add_eos_token: addSpecial changes nothing.
		if got := tok.Encode(g.text, true, true); idsString(got) != idsString(g.special) {
			t.Errorf("Encode(%q, addSpecial) = %v, want %v", g.text, got, g.special)
		}
		if dec := tok.Decode(g.special); dec != g.text {
			t.Errorf("Decode(Encode(%q)) = %q", g.text, dec)
		}
	}
}

func TestQwen4kSpecialTokens(t *testing.T) {
	tok := loadTokenizer(t, qwen4k)
	start, ok1 := tok.TokenID("<|im_start|>")
	end, ok2 := tok.TokenID("<|im_end|>")
	if !ok1 || !ok2 || start != 4097 || end != 4098 {
		t.Fatalf("TokenID: <|im_start|> = %d %v, <|im_end|> = %d %v", start, ok1, end, ok2)
	}
	if !tok.IsControl(start) || !tok.IsControl(end) || tok.IsControl(872) {
		t.Errorf("IsControl wrong")
	}
	if tok.EOS() != 4098 || tok.EOT() != 4098 || tok.AddBOS() || tok.AddEOS() {
		t.Errorf("EOS %d EOT %d addBOS %v addEOS %v", tok.EOS(), tok.EOT(), tok.AddBOS(), tok.AddEOS())
	}
	if !tok.IsEOG(4098) || !tok.IsEOG(4096) || tok.IsEOG(4097) {
		t.Errorf("IsEOG wrong")
	}
	if tok.Piece(start) != "<|im_start|>" || tok.Piece(198) != "\n" || tok.Piece(220) != " " {
		t.Errorf("pieces: %q %q %q", tok.Piece(start), tok.Piece(198), tok.Piece(220))
	}
	if tok.Piece(-1) != "" || tok.Piece(4116) != "" {
		t.Errorf("out-of-range pieces not empty")
	}
	// Control tokens vanish when not rendered.
	ids := tok.Encode("<|im_start|>user\nhi<|im_end|>", false, true)
	if s := tok.Detokenize(ids, DetokenizeOptions{}); s != "user\nhi" {
		t.Errorf("Detokenize without specials = %q", s)
	}
}

// TestRoundTrip checks Decode(Encode(s)) == s on assorted valid UTF-8.
func TestRoundTrip(t *testing.T) {
	tok := loadTokenizer(t, qwen4k)
	for _, s := range roundTripSeeds {
		for _, special := range []bool{false, true} {
			if dec := tok.Decode(tok.Encode(s, false, special)); dec != s {
				t.Errorf("special=%v: %q -> %q", special, s, dec)
			}
		}
	}
}

var roundTripSeeds = []string{
	"", " ", "\n", "  \n\n  x", "it's 'S 'LL 'Ve", "a\r\nb\rc", "\u00a0\u2000x\u3000y", "\u0085",
	"ʼn ǅ ǈ", "e\u0301\u0327", "🦙🦙🦙 👩‍👩‍👧", "１２３ ٣٤ Ⅻ", "\x00\x01\x7f", "<|im_start|><|im_start|>",
	"<|im_end", "x<|endoftext|>y", "\uFFFD\uFFFE", "\U0010FFFF", "日本語のテキスト", "한국어", "ﷺ",
	strings.Repeat("a", 3000), strings.Repeat(" ", 100), strings.Repeat("1", 50),
}

// TestDecoderStreaming feeds tokens one at a time and checks that every chunk is valid UTF-8
// and that the chunks reassemble the text, including characters split across byte tokens.
func TestDecoderStreaming(t *testing.T) {
	tok := loadTokenizer(t, qwen4k)
	for _, s := range []string{"Ünïcödé ñ 🦙 ÄPFEL", "我想在apple工作1314151天～", "👩‍👩‍👧 x", "ab"} {
		ids := tok.Encode(s, false, true)
		d := tok.NewDecoder()
		var b strings.Builder
		split := 0
		for _, id := range ids {
			if !utf8.ValidString(tok.Piece(id)) {
				split++
			}
			chunk := d.Add(id)
			if !utf8.ValidString(chunk) {
				t.Errorf("%q: chunk %q is not valid UTF-8", s, chunk)
			}
			b.WriteString(chunk)
		}
		if rest := d.Flush(); rest != "" {
			t.Errorf("%q: Flush returned %q after complete text", s, rest)
		}
		if b.String() != s {
			t.Errorf("stream gives %q, want %q", b.String(), s)
		}
		if s != "ab" && split == 0 {
			t.Errorf("%q: no token held a partial character; the test exercises nothing", s)
		}
	}
	// An incomplete character at the end comes out of Flush.
	d := tok.NewDecoder()
	ids := tok.Encode("🦙", false, false)
	var got string
	for _, id := range ids[:len(ids)-1] {
		got += d.Add(id)
	}
	if got != "" {
		t.Errorf("partial character emitted early: %q", got)
	}
	if rest := d.Flush(); rest != "🦙"[:len(rest)] || len(rest) != 3 {
		t.Errorf("Flush = %q", rest)
	}
}

func TestCompletePrefix(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"a", 1}, {"a\xf0", 1}, {"a\xf0\x9f", 1}, {"a\xf0\x9f\xa6", 1}, {"a\xf0\x9f\xa6\x99", 5},
		{"\xc3", 0}, {"\xc3\xa9", 2}, {"\xc0", 1}, {"\xe0\x80", 2}, {"\xed\xa0", 2}, {"\x80\x80\x80", 3},
		{"\xf4\x90", 2}, {"\xf5", 1}, {"\xe2\x82", 0},
	} {
		if got := completePrefix([]byte(c.in)); got != c.want {
			t.Errorf("completePrefix(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// buildGGUF writes metadata to an in-memory GGUF file and parses it back.
func buildGGUF(t testing.TB, kvs ...gguf.KV) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kvs, nil); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func kvString(k, v string) gguf.KV { return gguf.KV{Key: k, Type: gguf.TypeString, Value: v} }
func kvStrings(k string, v []string) gguf.KV {
	return gguf.KV{Key: k, Type: gguf.TypeArray, Value: gguf.Array{Elem: gguf.TypeString, Data: v}}
}
func kvBool(k string, v bool) gguf.KV { return gguf.KV{Key: k, Type: gguf.TypeBool, Value: v} }

func TestUnknownNames(t *testing.T) {
	base := []gguf.KV{kvStrings("tokenizer.ggml.tokens", []string{"a", "b"}), kvStrings("tokenizer.ggml.merges", []string{"a b"})}
	_, err := FromGGUF(buildGGUF(t, append([]gguf.KV{kvString("tokenizer.ggml.model", "gpt2"), kvString("tokenizer.ggml.pre", "no-such-pre")}, base...)...))
	if err == nil || !strings.Contains(err.Error(), "no-such-pre") || !strings.Contains(err.Error(), "qwen2") || !strings.Contains(err.Error(), "llama-bpe") {
		t.Errorf("unknown pre-tokenizer: %v", err)
	}
	_, err = FromGGUF(buildGGUF(t, append([]gguf.KV{kvString("tokenizer.ggml.model", "t5")}, base...)...))
	if err == nil || !strings.Contains(err.Error(), "t5") || !strings.Contains(err.Error(), "gpt2") || !strings.Contains(err.Error(), "llama") {
		t.Errorf("unknown model: %v", err)
	}
	// Every listed pre-tokenizer compiles.
	for _, name := range PreTokenizers() {
		tok, err := FromGGUF(buildGGUF(t, append([]gguf.KV{kvString("tokenizer.ggml.model", "gpt2"), kvString("tokenizer.ggml.pre", name)}, base...)...))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := tok.Decode(tok.Encode("ab", false, false)); got != "ab" {
			t.Errorf("%s: round trip gives %q", name, got)
		}
	}
}

// A small SentencePiece vocabulary: control tokens, 256 byte tokens and a few pieces.
func spmVocab(t testing.TB, extra ...gguf.KV) *Tokenizer {
	t.Helper()
	toks := []string{"<unk>", "<s>", "</s>"}
	types := []int32{2, 3, 3}
	for b := 0; b < 256; b++ {
		toks = append(toks, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6)
	}
	var scores []float32
	for range toks {
		scores = append(scores, 0)
	}
	// Merge path ll -> llo -> ello -> Hello -> ▁Hello; "el" and "▁H" are lower-scored decoys.
	for _, p := range []struct {
		s     string
		score float32
	}{
		{"▁", -10}, {"H", -10}, {"e", -10}, {"l", -10}, {"o", -10}, {"w", -10}, {"r", -10}, {"d", -10}, {"é", -10},
		{"ll", 5}, {"llo", 4}, {"ello", 3}, {"Hello", 2}, {"▁Hello", 1}, {"el", 0.5}, {"▁H", 0.8},
		{"▁w", 1.5}, {"or", 1.4}, {"ld", 1.3}, {"<tag>", 0},
	} {
		toks = append(toks, p.s)
		types = append(types, 1)
		scores = append(scores, p.score)
	}
	types[len(types)-1] = 4 // <tag> is user-defined
	kvs := []gguf.KV{
		kvString("tokenizer.ggml.model", "llama"),
		kvStrings("tokenizer.ggml.tokens", toks),
		{Key: "tokenizer.ggml.scores", Type: gguf.TypeArray, Value: gguf.Array{Elem: gguf.TypeFloat32, Data: scores}},
		{Key: "tokenizer.ggml.token_type", Type: gguf.TypeArray, Value: gguf.Array{Elem: gguf.TypeInt32, Data: types}},
	}
	tok, err := FromGGUF(buildGGUF(t, append(kvs, extra...)...))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSPMSynthetic(t *testing.T) {
	tok := spmVocab(t)
	id := func(s string) int32 {
		v, ok := tok.TokenID(s)
		if !ok {
			t.Fatalf("no token %q", s)
		}
		return v
	}
	byteID := func(b byte) int32 { return id(fmt.Sprintf("<0x%02X>", b)) }
	if tok.Type() != TypeSPM || !tok.AddBOS() || tok.BOS() != 1 || tok.EOS() != 2 || !tok.AddSpacePrefix() {
		t.Fatalf("SPM defaults wrong")
	}
	cases := []struct {
		text       string
		want       []int32 // with BOS
		decode     string  // Decode(Encode(text, false, false))
		detokenize string  // Detokenize(Encode(text, true, false)) removing BOS
	}{
		// "wörld": ö has no piece -> byte fallback.
		{"Hello world", []int32{1, id("▁Hello"), id("▁w"), id("or"), id("ld")}, "Hello world", " Hello world"},
		{"Hello wörld", []int32{1, id("▁Hello"), id("▁w"), byteID(0xC3), byteID(0xB6), id("r"), id("ld")}, "Hello wörld", " Hello wörld"},
		{"é", []int32{1, id("▁"), id("é")}, "é", " é"},
		// Text after a special token gets the space prefix again; user-defined tokens split
		// even without parse_special.
		{"Hello<tag>Hello", []int32{1, id("▁Hello"), id("<tag>"), id("▁Hello")}, "Hello<tag> Hello", " Hello<tag> Hello"},
	}
	for _, c := range cases {
		got := tok.Encode(c.text, true, false)
		if idsString(got) != idsString(c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
		if dec := tok.Detokenize(got, DetokenizeOptions{RemoveSpecial: true, RenderSpecial: true}); dec != c.detokenize {
			t.Errorf("Detokenize(%q) = %q, want %q", c.text, dec, c.detokenize)
		}
		if dec := tok.Decode(tok.Encode(c.text, false, false)); dec != c.decode {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", c.text, dec, c.decode)
		}
	}
	// <s> in text is parsed only with parseSpecial.
	if got := tok.Encode("<s>Hello", false, true); idsString(got) != idsString([]int32{1, id("▁Hello")}) {
		t.Errorf("parse special: %v", got)
	}
	// Streaming over byte-fallback tokens.
	d := tok.NewDecoder()
	var out string
	for _, x := range tok.Encode("Hello wörld", false, false) {
		c := d.Add(x)
		if !utf8.ValidString(c) {
			t.Errorf("invalid chunk %q", c)
		}
		out += c
	}
	if out+d.Flush() != "Hello wörld" {
		t.Errorf("stream = %q", out)
	}
	// add_space_prefix = false.
	tok2 := spmVocab(t, kvBool("tokenizer.ggml.add_space_prefix", false), kvBool("tokenizer.ggml.add_bos_token", false))
	if got := tok2.Encode("Hello", true, false); idsString(got) != idsString([]int32{id("Hello")}) {
		t.Errorf("no space prefix: %v", got)
	}
}

func TestCleanSpaces(t *testing.T) {
	for in, want := range map[string]string{
		"a , b . c ? d !": "a, b. c? d!",
		"a ' b":           "a'b",
		"it 's I 'm we 're they 've I 'll don 't": "it's I'm we're they've I 'll don 't",
		"": "", " ": " ",
	} {
		if got := string(cleanSpaces([]byte(in))); got != want {
			t.Errorf("cleanSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkEncodeLong(b *testing.B) {
	tok := loadTokenizer(b, qwen4k)
	text := strings.Repeat(qwen4kGolden[6].text+qwen4kGolden[1].text+qwen4kGolden[2].text, 40)
	n := len(tok.Encode(text, false, true))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		tok.Encode(text, false, true)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}
