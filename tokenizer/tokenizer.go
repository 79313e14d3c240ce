// Package tokenizer converts text to token ids and back for GGUF vocabularies, reproducing
// llama.cpp's tokenizers exactly (same ids for the same text).
//
// Two vocabulary types are supported:
//
//   - byte-level BPE (tokenizer.ggml.model = "gpt2"), with the pre-tokenizer named by
//     tokenizer.ggml.pre (see PreTokenizers for the supported names);
//   - SentencePiece (tokenizer.ggml.model = "llama"), with scores, byte fallback (<0xXX>) and
//     the "▁" space handling.
//
// Usage:
//
//	f, _ := gguf.Open(path)
//	tok, err := tokenizer.FromGGUF(f)
//	ids := tok.Encode("<|im_start|>user\nhi<|im_end|>", true, true)
//	text := tok.Decode(ids)
//
// Encode(text, addSpecial, parseSpecial) is llama_tokenize: addSpecial adds BOS/EOS as the
// vocabulary's metadata asks (tokenizer.ggml.add_bos_token / add_eos_token, with llama.cpp's
// defaults), parseSpecial recognises control tokens written in the text. User-defined tokens
// are always recognised, as in llama.cpp. Decode concatenates the pieces (control tokens are
// rendered as their text) and, for SentencePiece, drops the space the encoder prefixed; it does
// not apply llama.cpp's clean_spaces heuristics, so Decode(Encode(s)) == s for valid UTF-8
// (see Detokenize for the exact llama_detokenize behaviour). Decoder streams text token by
// token without splitting UTF-8 sequences.
//
// A Tokenizer is immutable after FromGGUF and safe for concurrent use.
package tokenizer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regolith/regolith/gguf"
)

// Attr is a token attribute bit set (llama.cpp's llama_token_attr).
type Attr uint16

// Token attributes.
const (
	AttrUnknown     Attr = 1 << 0
	AttrUnused      Attr = 1 << 1
	AttrNormal      Attr = 1 << 2
	AttrControl     Attr = 1 << 3
	AttrUserDefined Attr = 1 << 4
	AttrByte        Attr = 1 << 5
	AttrNormalized  Attr = 1 << 6
	AttrLStrip      Attr = 1 << 7
	AttrRStrip      Attr = 1 << 8
	AttrSingleWord  Attr = 1 << 9
)

// Type is the vocabulary type.
type Type int

// Vocabulary types.
const (
	TypeBPE Type = iota // byte-level BPE ("gpt2")
	TypeSPM             // SentencePiece ("llama")
)

func (t Type) String() string {
	if t == TypeSPM {
		return "SPM"
	}
	return "BPE"
}

// None is the id returned for absent special tokens.
const None int32 = -1

type mergeKey struct{ a, b string }

// Tokenizer is a loaded vocabulary.
type Tokenizer struct {
	typ      Type
	model    string // tokenizer.ggml.model
	pre      *preType
	tokens   []string
	scores   []float32
	attrs    []Attr
	toID     map[string]int32
	ranks    map[mergeKey]int32
	splitter []splitter
	pieces   []string // token_to_piece(id, special=true)

	special []int32 // control/user-defined/unknown tokens, longest text first

	bos, eos, eot, eom, unk, sep, pad, mask int32
	fimPre, fimSuf, fimMid, fimPad, fimRep  int32
	fimSep                                  int32
	eog                                     map[int32]bool

	addBOS, addEOS, addSpacePrefix bool
	ignoreMerges, cleanSpaces      bool
}

// SupportedModels lists the supported values of tokenizer.ggml.model.
func SupportedModels() []string { return []string{"gpt2", "llama"} }

// FromGGUF loads the vocabulary stored in a GGUF file's tokenizer.* metadata.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, ok := f.String("tokenizer.ggml.model")
	if !ok {
		return nil, fmt.Errorf("tokenizer: missing tokenizer.ggml.model")
	}
	t := &Tokenizer{model: model,
		eot: None, eom: None, sep: None, pad: None, mask: None,
		fimPre: None, fimSuf: None, fimMid: None, fimPad: None, fimRep: None, fimSep: None}
	preName, _ := f.String("tokenizer.ggml.pre")
	switch model {
	case "llama":
		t.typ = TypeSPM
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addSpacePrefix = true
		t.addBOS = true
	case "gpt2":
		t.typ = TypeBPE
		t.bos, t.eos, t.unk = 11, 11, None
		t.cleanSpaces = true
		name := preName
		if name == "" {
			name = "default" // llama.cpp warns and uses the default pre-tokenizer
		}
		p, ok := preTypes[name]
		if !ok {
			return nil, fmt.Errorf("tokenizer: unknown pre-tokenizer %q (tokenizer.ggml.pre); supported: %s",
				preName, strings.Join(PreTokenizers(), ", "))
		}
		t.pre = p
		t.ignoreMerges = p.ignoreMerges
		t.cleanSpaces = !p.noClean
		t.addBOS = p.addBOS
		if p.noBOS {
			t.bos = None
		}
		for _, e := range p.regexes {
			s, err := newSplitter(e)
			if err != nil {
				return nil, err
			}
			t.splitter = append(t.splitter, s)
		}
		merges, ok := f.Strings("tokenizer.ggml.merges")
		if !ok {
			return nil, fmt.Errorf("tokenizer: BPE vocabulary without tokenizer.ggml.merges")
		}
		t.ranks = make(map[mergeKey]int32, len(merges))
		for i, m := range merges {
			var k mergeKey
			if p := strings.IndexByte(m[min(1, len(m)):], ' '); p >= 0 {
				p += min(1, len(m))
				k = mergeKey{m[:p], m[p+1:]}
			}
			if _, dup := t.ranks[k]; !dup {
				t.ranks[k] = int32(i)
			}
		}
	default:
		return nil, fmt.Errorf("tokenizer: unsupported tokenizer model %q (tokenizer.ggml.model); supported: %s",
			model, strings.Join(SupportedModels(), ", "))
	}
	if v, ok := f.Bool("tokenizer.ggml.add_space_prefix"); ok {
		t.addSpacePrefix = v
	}

	tokens, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(tokens) == 0 {
		return nil, fmt.Errorf("tokenizer: missing tokenizer.ggml.tokens")
	}
	n := len(tokens)
	t.tokens = make([]string, n)
	t.attrs = make([]Attr, n)
	t.scores = make([]float32, n)
	t.toID = make(map[string]int32, n)
	if a, ok := f.Array("tokenizer.ggml.scores"); ok {
		s, ok := a.Data.([]float32)
		if !ok || len(s) < n {
			return nil, fmt.Errorf("tokenizer: tokenizer.ggml.scores has %d float32 entries for %d tokens", a.Len(), n)
		}
		copy(t.scores, s)
	}
	var types []int32
	if a, ok := f.Array("tokenizer.ggml.token_type"); ok {
		types, ok = a.Data.([]int32)
		if !ok || len(types) < n {
			return nil, fmt.Errorf("tokenizer: tokenizer.ggml.token_type has %d int32 entries for %d tokens", a.Len(), n)
		}
	}
	for i, w := range tokens {
		if w == "" {
			w = fmt.Sprintf("[EMPTY_%d]", i)
		}
		t.tokens[i] = w
		t.toID[w] = int32(i)
		t.attrs[i] = AttrNormal
		if types != nil {
			switch types[i] {
			case 1:
				t.attrs[i] = AttrNormal
			case 2:
				t.attrs[i] = AttrUnknown
			case 3:
				t.attrs[i] = AttrControl
			case 4:
				t.attrs[i] = AttrUserDefined
			case 5:
				t.attrs[i] = AttrUnused
			case 6:
				t.attrs[i] = AttrByte
			default:
				t.attrs[i] = 0
			}
		}
	}

	ids := []struct {
		key string
		dst *int32
	}{
		{"bos_token_id", &t.bos}, {"eos_token_id", &t.eos}, {"eot_token_id", &t.eot},
		{"eom_token_id", &t.eom}, {"unknown_token_id", &t.unk}, {"seperator_token_id", &t.sep},
		{"padding_token_id", &t.pad}, {"mask_token_id", &t.mask},
		{"fim_pre_token_id", &t.fimPre}, {"fim_suf_token_id", &t.fimSuf}, {"fim_mid_token_id", &t.fimMid},
		{"fim_pad_token_id", &t.fimPad}, {"fim_rep_token_id", &t.fimRep}, {"fim_sep_token_id", &t.fimSep},
		{"prefix_token_id", &t.fimPre}, {"suffix_token_id", &t.fimSuf}, {"middle_token_id", &t.fimMid},
	}
	for _, e := range ids {
		if v, ok := f.Uint("tokenizer.ggml." + e.key); ok && v < uint64(n) {
			*e.dst = int32(v)
		}
	}
	if v, ok := f.Bool("tokenizer.ggml.add_bos_token"); ok {
		t.addBOS = v
	}
	if v, ok := f.Bool("tokenizer.ggml.add_eos_token"); ok {
		t.addEOS = v
	}
	if t.addBOS && t.bos == None {
		return nil, fmt.Errorf("tokenizer: vocabulary asks for a BOS token but has none")
	}
	if t.addEOS && t.eos == None {
		return nil, fmt.Errorf("tokenizer: vocabulary asks for an EOS token but has none")
	}
	name, _ := f.String("general.name")
	t.fixAttributes(strings.ToLower(name))

	for id := range t.tokens {
		if t.attrs[id]&(AttrControl|AttrUserDefined|AttrUnknown) != 0 {
			t.special = append(t.special, int32(id))
		}
	}
	sort.SliceStable(t.special, func(i, j int) bool {
		return len(t.tokens[t.special[i]]) > len(t.tokens[t.special[j]])
	})
	if name := strings.ToLower(name); strings.Contains(name, "phi-3") || strings.Contains(name, "phi3") {
		// llama.cpp: Phi-3's special tokens swallow the whitespace that follows them.
		for _, id := range t.special {
			t.attrs[id] |= AttrRStrip
		}
		t.setAttr("</s>", AttrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			t.setAttr(s, AttrRStrip, false)
		}
	}
	t.pieces = make([]string, n)
	for id := range t.tokens {
		t.pieces[id] = t.piece(int32(id))
	}
	return t, nil
}

func (t *Tokenizer) setAttr(text string, a Attr, on bool) {
	if id, ok := t.toID[text]; ok {
		if on {
			t.attrs[id] |= a
		} else {
			t.attrs[id] &^= a
		}
	}
}

// fixAttributes applies llama.cpp's text-based detection of end-of-turn, fill-in-the-middle
// and end-of-generation tokens (making them control tokens) and its model-specific fixes.
// Where llama.cpp picks the first match in hash-map order, the first name listed wins here.
func (t *Tokenizer) fixAttributes(name string) {
	pick := func(dst *int32, names ...string) {
		if *dst != None {
			return
		}
		for _, s := range names {
			if id, ok := t.toID[s]; ok {
				*dst = id
				t.attrs[id] |= AttrControl
				return
			}
		}
	}
	pick(&t.eot, "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
		"<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>")
	pick(&t.eom, "<|eom_id|>")
	pick(&t.fimPre, "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
		"<|code_prefix|>", "<|prefix|>")
	pick(&t.fimSuf, "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
		"<|code_suffix|>", "<|suffix|>")
	pick(&t.fimMid, "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
		"<|code_middle|>", "<|middle|>")
	pick(&t.fimPad, "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")
	pick(&t.fimRep, "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")
	pick(&t.fimSep, "<|file_sep|>")

	for id, a := range t.attrs {
		if a&AttrControl != 0 && a&AttrUnused == 0 && strings.Contains(t.tokens[id], "unused") {
			t.attrs[id] |= AttrUnused
		}
	}

	t.eog = map[int32]bool{}
	for _, id := range []int32{t.fimPad, t.fimRep, t.fimSep} {
		if id != None {
			t.eog[id] = true
		}
	}
	for _, s := range []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
		"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
		"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>"} {
		if id, ok := t.toID[s]; ok {
			t.eog[id] = true
			t.attrs[id] |= AttrControl
		}
	}
	for _, s := range []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"} {
		if id, ok := t.toID[s]; ok {
			t.attrs[id] = AttrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id != None {
			t.eog[id] = true
		}
	}
	has := func(s string) (int32, bool) {
		id, ok := t.toID[s]
		return id, ok && t.eog[id]
	}
	_, ret := has("<|return|>")
	_, call := has("<|call|>")
	_, calls := has("<|calls|>")
	_, flush := has("<|flush|>")
	if end, ok := has("<|end|>"); ok && ((ret && (call || calls)) || ((call || calls) && flush)) {
		delete(t.eog, end)
		t.attrs[end] = AttrUserDefined
	}
	if s, ok := has("</s>"); ok {
		if _, tr := has("<|tool_response>"); tr {
			delete(t.eog, s)
			t.attrs[s] = AttrNormal
		}
	}
}

// Type returns the vocabulary type.
func (t *Tokenizer) Type() Type { return t.typ }

// Model returns tokenizer.ggml.model.
func (t *Tokenizer) Model() string { return t.model }

// PreTokenizer returns the pre-tokenizer name ("" for SentencePiece).
func (t *Tokenizer) PreTokenizer() string {
	if t.pre == nil {
		return ""
	}
	return t.pre.name
}

// NumTokens returns the vocabulary size.
func (t *Tokenizer) NumTokens() int { return len(t.tokens) }

// BOS returns the beginning-of-sequence token (None if the vocabulary has none). As in
// llama.cpp, BPE vocabularies without metadata default to 11 and SentencePiece ones to 1.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence token.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT returns the end-of-turn token (None if none).
func (t *Tokenizer) EOT() int32 { return t.eot }

// Unknown returns the unknown token (None if none).
func (t *Tokenizer) Unknown() int32 { return t.unk }

// Pad returns the padding token (None if none).
func (t *Tokenizer) Pad() int32 { return t.pad }

// AddBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

// AddSpacePrefix reports whether SentencePiece encoding prefixes text with a space.
func (t *Tokenizer) AddSpacePrefix() bool { return t.addSpacePrefix }

// CleanSpaces reports whether llama.cpp's detokenizer applies clean_up_tokenization_spaces.
func (t *Tokenizer) CleanSpaces() bool { return t.cleanSpaces }

// IsEOG reports whether id ends generation (EOS, EOT, EOM and the tokens llama.cpp recognises
// by name, such as <|im_end|> and <|endoftext|>).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

func (t *Tokenizer) valid(id int32) bool { return id >= 0 && int(id) < len(t.tokens) }

// Attr returns a token's attributes (0 for ids out of range).
func (t *Tokenizer) Attr(id int32) Attr {
	if !t.valid(id) {
		return 0
	}
	return t.attrs[id]
}

// IsControl reports whether id is a control token.
func (t *Tokenizer) IsControl(id int32) bool { return t.Attr(id)&AttrControl != 0 }

// Text returns the token's text as stored in the vocabulary ("" for ids out of range).
func (t *Tokenizer) Text(id int32) string {
	if !t.valid(id) {
		return ""
	}
	return t.tokens[id]
}

// Score returns the token's score (SentencePiece merge priority).
func (t *Tokenizer) Score(id int32) float32 {
	if !t.valid(id) {
		return 0
	}
	return t.scores[id]
}

// TokenID looks a token up by its vocabulary text (e.g. "<|im_end|>").
func (t *Tokenizer) TokenID(text string) (int32, bool) {
	id, ok := t.toID[text]
	return id, ok
}
