package convert

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/regolith/regolith/gguf"
)

// llama.cpp's token types (enum llama_token_type).
const (
	TokenNormal      = 1
	TokenUnknown     = 2
	TokenControl     = 3
	TokenUserDefined = 4
	TokenUnused      = 5
	TokenByte        = 6
)

// Qwen2Pattern is the split regex of Qwen2/Qwen3's tokenizer.json, which llama.cpp implements
// as the pre-tokenizer "qwen2".
const Qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// knownPre maps split regexes of tokenizer.json to llama.cpp's pre-tokenizer names.
var knownPre = map[string]string{Qwen2Pattern: "qwen2"}

// Vocab is a byte-level BPE vocabulary in the shape of GGUF's tokenizer.ggml.* keys.
type Vocab struct {
	Tokens       []string
	Types        []int32
	Merges       []string
	Pre          string
	BOS, EOS     int // -1: none
	PAD, UNK     int
	AddBOS       *bool
	AddEOS       *bool
	ChatTemplate string
}

type hfTokenizer struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type   string          `json:"type"`
		Vocab  map[string]int  `json:"vocab"`
		Merges json.RawMessage `json:"merges"`
	} `json:"model"`
}

// LoadVocab reads dir/tokenizer.json (and tokenizer_config.json or chat_template.jinja when
// present) as llama.cpp's converter does: every id below vocab_size gets a token (missing ids
// become "[PADn]", unused), added tokens are control tokens when special or when they look
// like <|...|>, else user-defined; merges are written "a b". pre overrides the detected
// pre-tokenizer name.
func LoadVocab(dir string, c *Config, pre string) (*Vocab, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, err
	}
	var t hfTokenizer
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if t.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer.json: model type %q, only byte-level BPE is supported", t.Model.Type)
	}
	if pre == "" {
		pre, err = detectPre(t.PreTokenizer)
		if err != nil {
			return nil, err
		}
	}
	n := c.VocabSize
	maxID := -1
	for _, id := range t.Model.Vocab {
		maxID = max(maxID, id)
	}
	for _, a := range t.AddedTokens {
		maxID = max(maxID, a.ID)
	}
	if maxID >= n {
		return nil, fmt.Errorf("tokenizer.json has token id %d, config.json's vocab_size is %d", maxID, n)
	}
	v := &Vocab{Tokens: make([]string, n), Types: make([]int32, n), Pre: pre, BOS: -1, EOS: -1, PAD: -1, UNK: -1}
	set := make([]bool, n)
	for s, id := range t.Model.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("tokenizer.json: negative id for %q", s)
		}
		if set[id] {
			return nil, fmt.Errorf("tokenizer.json: id %d used twice", id)
		}
		v.Tokens[id], v.Types[id], set[id] = s, TokenNormal, true
	}
	byContent := map[string]int{}
	for s, id := range t.Model.Vocab {
		byContent[s] = id
	}
	for _, a := range t.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("tokenizer.json: negative id for added token %q", a.Content)
		}
		typ := int32(TokenUserDefined)
		if a.Special || looksSpecial(a.Content) {
			typ = TokenControl
		}
		v.Tokens[a.ID], v.Types[a.ID], set[a.ID] = a.Content, typ, true
		byContent[a.Content] = a.ID
	}
	for i := range v.Tokens {
		if !set[i] {
			v.Tokens[i], v.Types[i] = fmt.Sprintf("[PAD%d]", i), TokenUnused
		}
	}
	if v.Merges, err = parseMerges(t.Model.Merges); err != nil {
		return nil, err
	}
	if err := v.loadSpecial(dir, c, byContent); err != nil {
		return nil, err
	}
	return v, nil
}

func looksSpecial(s string) bool {
	return (strings.HasPrefix(s, "<|") && strings.HasSuffix(s, "|>")) ||
		(strings.HasPrefix(s, "<｜") && strings.HasSuffix(s, "｜>"))
}

// detectPre finds the split regexes in a pre_tokenizer and names the one llama.cpp knows.
func detectPre(raw json.RawMessage) (string, error) {
	var tree any
	if len(raw) == 0 || json.Unmarshal(raw, &tree) != nil {
		return "", fmt.Errorf("tokenizer.json: no pre_tokenizer; name one with the pre option")
	}
	var found []string
	var walk func(any)
	walk = func(x any) {
		switch y := x.(type) {
		case map[string]any:
			if r, ok := y["Regex"].(string); ok {
				found = append(found, r)
			}
			keys := make([]string, 0, len(y))
			for k := range y {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(y[k])
			}
		case []any:
			for _, z := range y {
				walk(z)
			}
		}
	}
	walk(tree)
	for _, r := range found {
		if name, ok := knownPre[r]; ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("tokenizer.json: pre-tokenizer regexes %q are not one llama.cpp names here; name one with the pre option", found)
}

// parseMerges accepts both serializations: ["a b", ...] and [["a", "b"], ...].
func parseMerges(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err == nil {
		return ss, nil
	}
	var pairs [][]string
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, fmt.Errorf("tokenizer.json: merges: %w", err)
	}
	out := make([]string, len(pairs))
	for i, p := range pairs {
		if len(p) != 2 {
			return nil, fmt.Errorf("tokenizer.json: merge %d has %d parts", i, len(p))
		}
		out[i] = p[0] + " " + p[1]
	}
	return out, nil
}

// tokenName is a tokenizer_config.json token entry: a string, {"content": ...}, or null.
func tokenName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}

// firstID reads a config.json token id: an integer or a list of them.
func firstID(raw json.RawMessage) int {
	var i int
	if json.Unmarshal(raw, &i) == nil {
		return i
	}
	var l []int
	if json.Unmarshal(raw, &l) == nil && len(l) > 0 {
		return l[0]
	}
	return -1
}

// loadSpecial sets the special token ids, add_bos/add_eos and the chat template the way
// llama.cpp's SpecialVocab does: tokenizer_config.json first, config.json for ids still unset.
func (v *Vocab) loadSpecial(dir string, c *Config, byContent map[string]int) error {
	var tc struct {
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
		PAD          json.RawMessage `json:"pad_token"`
		UNK          json.RawMessage `json:"unk_token"`
		AddBOS       *bool           `json:"add_bos_token"`
		AddEOS       *bool           `json:"add_eos_token"`
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err == nil {
		if err := json.Unmarshal(b, &tc); err != nil {
			return fmt.Errorf("tokenizer_config.json: %w", err)
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	look := func(raw json.RawMessage) int {
		if s := tokenName(raw); s != "" {
			if id, ok := byContent[s]; ok {
				return id
			}
		}
		return -1
	}
	v.BOS, v.EOS, v.PAD, v.UNK = look(tc.BOS), look(tc.EOS), look(tc.PAD), look(tc.UNK)
	if v.BOS < 0 {
		v.BOS = firstID(c.BOSTokenID)
	}
	if v.EOS < 0 {
		v.EOS = firstID(c.EOSTokenID)
	}
	for _, id := range []*int{&v.BOS, &v.EOS, &v.PAD, &v.UNK} {
		if *id >= len(v.Tokens) {
			*id = -1
		}
	}
	v.AddBOS, v.AddEOS = tc.AddBOS, tc.AddEOS
	var tmpl string
	if json.Unmarshal(tc.ChatTemplate, &tmpl) != nil {
		var named []struct {
			Name     string `json:"name"`
			Template string `json:"template"`
		}
		if json.Unmarshal(tc.ChatTemplate, &named) == nil {
			for _, n := range named {
				if n.Name == "default" {
					tmpl = n.Template
				}
			}
		}
	}
	if tmpl == "" {
		if jb, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
			tmpl = string(jb)
		}
	}
	v.ChatTemplate = tmpl
	return nil
}

// KVs are the tokenizer.ggml.* metadata entries, in the order llama.cpp's converter writes them.
func (v *Vocab) KVs() []gguf.KV {
	kvs := []gguf.KV{
		str("tokenizer.ggml.model", "gpt2"),
		str("tokenizer.ggml.pre", v.Pre),
		{Key: "tokenizer.ggml.tokens", Type: gguf.TypeArray, Value: gguf.Array{Elem: gguf.TypeString, Data: v.Tokens}},
		{Key: "tokenizer.ggml.token_type", Type: gguf.TypeArray, Value: gguf.Array{Elem: gguf.TypeInt32, Data: v.Types}},
	}
	if len(v.Merges) > 0 {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml.merges", Type: gguf.TypeArray, Value: gguf.Array{Elem: gguf.TypeString, Data: v.Merges}})
	}
	for _, s := range []struct {
		key string
		id  int
	}{{"bos", v.BOS}, {"eos", v.EOS}, {"unknown", v.UNK}, {"padding", v.PAD}} {
		if s.id >= 0 {
			kvs = append(kvs, u32("tokenizer.ggml."+s.key+"_token_id", s.id))
		}
	}
	if v.AddBOS != nil {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml.add_bos_token", Type: gguf.TypeBool, Value: *v.AddBOS})
	}
	if v.AddEOS != nil {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml.add_eos_token", Type: gguf.TypeBool, Value: *v.AddEOS})
	}
	if v.ChatTemplate != "" {
		kvs = append(kvs, str("tokenizer.chat_template", v.ChatTemplate))
	}
	return kvs
}
