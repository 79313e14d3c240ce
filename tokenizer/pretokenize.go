package tokenizer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dlclark/regexp2/v2"
)

// Pre-tokenization splits a text fragment into words before BPE merges run inside each word.
// llama.cpp describes each pre-tokenizer by a list of regular expressions applied in turn: each
// one splits every current segment into its matches and the unmatched gaps between them. Three
// common expressions (GPT-2's, Llama 3's and Qwen2's) are implemented by hand-written scanners
// in llama.cpp's unicode.cpp, and the others run through std::regex on a "collapsed" text in
// which every non-ASCII code point is replaced by one byte naming its Unicode category. Both
// are reproduced here: the scanners as Go code with the same control flow, the rest with
// regexp2 on the same collapsed representation, so that \p{L} and friends and \s classify code
// points exactly as llama.cpp does (not as a Unicode-aware regex engine would).

// Regular expressions used by the pre-tokenizers (spelled as in llama.cpp's sources).
const (
	reGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
	reLlama3 = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reQwen2  = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

	reDeepseekCJK = `[一-龥ࠀ-一가-퟿]+`
	reDeepseek3   = `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_` + "`" + `{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	rePoro        = ` ?[^(\s|.,!?…。，、।۔،)]+`
)

// preType describes one pre-tokenizer and the vocabulary flags llama.cpp ties to its name.
type preType struct {
	name         string
	regexes      []string
	ignoreMerges bool // a word that is itself a token is emitted whole
	noClean      bool // clean_spaces = false (detokenization)
	addBOS       bool // default add_bos before metadata overrides it
	noBOS        bool // special_bos_id = none (chatglm)
}

var preTypes = func() map[string]*preType {
	m := map[string]*preType{}
	add := func(p preType, names ...string) {
		for _, n := range names {
			q := p
			q.name = n
			m[n] = &q
		}
	}
	def := []string{`[\p{P}\$\+<=>\^~\|]+`, reGPT2, `\p{N}+`, `[0-9][0-9][0-9]`}
	add(preType{regexes: def}, "default")
	add(preType{regexes: []string{reLlama3}, ignoreMerges: true, addBOS: true},
		"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano")
	add(preType{regexes: []string{reLlama3}}, "dbrx", "smaug-bpe")
	add(preType{regexes: []string{reLlama3}, noBOS: true}, "glm4", "chatglm-bpe")
	add(preType{regexes: []string{"[\r\n]",
		"\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A" +
			"\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC" +
			"\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF" +
			"\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]+",
		`\s?[!-/:-~！-／：-～‘-‟　-。]+`,
		`\s+$`,
		reDeepseekCJK,
		`\p{N}+`,
	}, noClean: true}, "deepseek-llm")
	add(preType{regexes: []string{"[\r\n]", `\s?\p{L}+`, `\s?\p{P}+`, reDeepseekCJK, `\p{N}`}, noClean: true}, "deepseek-coder")
	add(preType{regexes: []string{`\p{N}{1,3}`, `[一-龥぀-ゟ゠-ヿ]+`, reDeepseek3}, noClean: true},
		"deepseek-v3", "hunyuan-dense", "joyai-llm")
	add(preType{regexes: []string{`[\p{P}\$\+<=>\^~\|` + "`" + `]+`, reGPT2, `[0-9][0-9][0-9]`}}, "falcon")
	star := []string{`\p{N}`, reGPT2}
	add(preType{regexes: star}, "starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2")
	add(preType{regexes: star, noClean: true}, "command-r", "smollm")
	add(preType{regexes: []string{reGPT2}}, "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
		"jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "mpt", "olmo", "jais", "exaone4")
	add(preType{regexes: []string{reGPT2}, noClean: true}, "trillion", "granite-docling")
	add(preType{regexes: []string{reQwen2}}, "megrez", "stablelm2")
	add(preType{regexes: []string{reQwen2}, noClean: true}, "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2",
		"hunyuan", "solar-open", "grok-2")
	add(preType{regexes: []string{rePoro}, noClean: true}, "poro-chat")
	add(preType{regexes: []string{rePoro}}, "bloom", "gpt3-finnish")
	add(preType{regexes: []string{rePoro, `\p{N}`}, noClean: true}, "viking")
	add(preType{regexes: []string{`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`},
		noClean: true}, "seed-coder")
	add(preType{regexes: []string{`'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`},
		noClean: true}, "bailingmoe", "bailingmoe2", "llada-moe")
	add(preType{regexes: []string{`\p{N}{1,3}`, `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
		ignoreMerges: true}, "minicpm5")
	return m
}()

// PreTokenizers lists the supported values of tokenizer.ggml.pre, sorted.
func PreTokenizers() []string {
	names := make([]string, 0, len(preTypes))
	for n := range preTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// splitter refines a segmentation: segs holds segment lengths in code points; it returns the
// new segment lengths.
type splitter interface {
	split(cpts []uint32, flags []uint16, segs []int) []int
}

type scanKind int

const (
	scanGPT2 scanKind = iota
	scanLlama3
	scanQwen2
)

type scanSplitter struct{ kind scanKind }

type regexSplitter struct {
	re        *regexp2.Regexp
	collapsed bool // match against the category-collapsed text
}

// Category representatives of the collapsed text (as llama.cpp's unicode_regex_split).
const (
	collapsedOther  = 0xD0
	collapsedNumber = 0xD1
	collapsedLetter = 0xD2
	collapsedPunct  = 0xD3
	collapsedMark   = 0xD4
	collapsedSymbol = 0xD5
	collapsedSpace  = 0x0B
)

// ucat describes one \p{..} class: its representative and the ASCII code points in it.
var ucats = map[string]string{
	"N":  `\u00D1\x30-\x39`,
	"L":  `\u00D2\x41-\x5A\x61-\x7A`,
	"P":  `\u00D3\x21-\x23\x25-\x2A\x2C-\x2F\x3A-\x3B\x3F-\x40\x5B-\x5D\x5F\x7B\x7D`,
	"M":  `\u00D4`,
	"S":  `\u00D5\x24\x2B\x3C-\x3E\x5E\x60\x7C`,
	"Lu": `\u00D2\x41-\x5A\x61-\x7A`,
	"Ll": `\u00D2\x41-\x5A\x61-\x7A`,
	"Lt": `\u00D2\x41-\x5A\x61-\x7A`,
	"Lm": `\u00D2\x41-\x5A\x61-\x7A`,
	"Lo": `\u00D2\x41-\x5A\x61-\x7A`,
}

// ECMAScript's \s in std::regex with the C locale: ASCII whitespace only (non-ASCII
// whitespace is rewritten to \v in the text before matching).
const asciiSpace = `\t\n\x0B\f\r\x20`

// translateRegex rewrites a llama.cpp pre-tokenizer expression into a regexp2 pattern with the
// semantics std::regex gives it there; collapsed reports whether it uses \p{..} classes (and so
// must run on the collapsed text).
func translateRegex(expr string) (pattern string, collapsed bool, err error) {
	var b strings.Builder
	inside := false
	rs := []rune(expr)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\' && i+1 < len(rs):
			n := rs[i+1]
			switch n {
			case 'p':
				end := -1
				if i+2 < len(rs) && rs[i+2] == '{' {
					for j := i + 3; j < len(rs); j++ {
						if rs[j] == '}' {
							end = j
							break
						}
					}
				}
				if end < 0 {
					return "", false, fmt.Errorf("tokenizer: regex %q: malformed \\p", expr)
				}
				set, ok := ucats[string(rs[i+3:end])]
				if !ok {
					return "", false, fmt.Errorf("tokenizer: regex %q: unsupported class %s", expr, string(rs[i:end+1]))
				}
				collapsed = true
				if inside {
					b.WriteString(set)
				} else {
					b.WriteString("[" + set + "]")
				}
				i = end
				continue
			case 's':
				if inside {
					b.WriteString(asciiSpace)
				} else {
					b.WriteString("[" + asciiSpace + "]")
				}
			case 'S':
				if inside {
					return "", false, fmt.Errorf("tokenizer: regex %q: \\S inside a class is not supported", expr)
				}
				b.WriteString("[^" + asciiSpace + "]")
			case 'd':
				if inside {
					b.WriteString(`0-9`)
				} else {
					b.WriteString(`[0-9]`)
				}
			case 'w', 'W', 'D', 'b', 'B':
				return "", false, fmt.Errorf("tokenizer: regex %q: \\%c is not supported", expr, n)
			default:
				b.WriteRune(c)
				b.WriteRune(n)
			}
			i++
			continue
		case c == '[' && !inside:
			inside = true
		case c == ']' && inside:
			inside = false
		case c == '$' && !inside:
			b.WriteString(`\z`)
			continue
		}
		b.WriteRune(c)
	}
	return b.String(), collapsed, nil
}

func newSplitter(expr string) (splitter, error) {
	switch expr {
	case reGPT2:
		return scanSplitter{scanGPT2}, nil
	case reLlama3:
		return scanSplitter{scanLlama3}, nil
	case reQwen2:
		return scanSplitter{scanQwen2}, nil
	}
	pat, collapsed, err := translateRegex(expr)
	if err != nil {
		return nil, err
	}
	// No backtracking limit: std::regex has none either.
	re, err := regexp2.Compile(pat, regexp2.OptionMaxBacktrackingStackSize(-1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: compiling pre-tokenizer regex %q: %w", expr, err)
	}
	return &regexSplitter{re: re, collapsed: collapsed}, nil
}

func (s *regexSplitter) split(cpts []uint32, flags []uint16, segs []int) []int {
	rs := make([]rune, len(cpts))
	for i, c := range cpts {
		switch {
		case c < 0x80:
			rs[i] = rune(c)
		case flags[i]&flagWhitespace != 0:
			rs[i] = collapsedSpace
		case !s.collapsed:
			rs[i] = rune(c)
		default:
			switch flags[i] & maskCategory {
			case flagNumber:
				rs[i] = collapsedNumber
			case flagLetter:
				rs[i] = collapsedLetter
			case flagPunct:
				rs[i] = collapsedPunct
			case flagMark:
				rs[i] = collapsedMark
			case flagSymbol:
				rs[i] = collapsedSymbol
			default:
				rs[i] = collapsedOther
			}
		}
	}
	out := make([]int, 0, len(segs))
	start := 0
	for _, n := range segs {
		idx, err := s.re.FindAllRunesIndex(rs[start:start+n], -1)
		if err != nil {
			// Only a backtracking limit can fail; keep the segment whole.
			out = append(out, n)
			start += n
			continue
		}
		prev := 0
		for _, m := range idx {
			if m[0] > prev {
				out = append(out, m[0]-prev)
			}
			if m[1] > m[0] {
				out = append(out, m[1]-m[0])
			}
			prev = m[1]
		}
		if prev < n {
			out = append(out, n-prev)
		}
		start += n
	}
	return out
}

func (s scanSplitter) split(cpts []uint32, flags []uint16, segs []int) []int {
	out := make([]int, 0, len(segs)+len(cpts)/4)
	start := 0
	for _, n := range segs {
		seg := cpts[start : start+n]
		fl := flags[start : start+n]
		switch s.kind {
		case scanGPT2:
			out = scanGPT2Seg(seg, fl, out)
		default:
			out = scanLlama3Seg(seg, fl, s.kind == scanLlama3, out)
		}
		start += n
	}
	return out
}

const outOfRange = 0xFFFFFFFF

// scanGPT2Seg: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func scanGPT2Seg(cpts []uint32, flags []uint16, out []int) []int {
	end := len(cpts)
	cpt := func(p int) uint32 {
		if p < end {
			return cpts[p]
		}
		return outOfRange
	}
	flg := func(p int) uint16 {
		if p < end {
			return flags[p]
		}
		return 0
	}
	prev := 0
	add := func(e int) int {
		l := e - prev
		if l > 0 {
			out = append(out, l)
		}
		prev = e
		return l
	}
	for pos := 0; pos < end; {
		c := cpts[pos]
		f := flags[pos]
		if c == '\'' && pos+1 < end {
			n := cpts[pos+1]
			if n == 's' || n == 't' || n == 'm' || n == 'd' {
				pos += add(pos + 2)
				continue
			}
			if pos+2 < end {
				nn := cpts[pos+2]
				if (n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l') {
					pos += add(pos + 3)
					continue
				}
			}
		}
		f2 := f
		if c == ' ' {
			f2 = flg(pos + 1)
		}
		if f2&flagLetter != 0 {
			if c == ' ' {
				pos++
			}
			for f2&flagLetter != 0 {
				pos++
				f2 = flg(pos)
			}
			add(pos)
			continue
		}
		if f2&flagNumber != 0 {
			if c == ' ' {
				pos++
			}
			for f2&flagNumber != 0 {
				pos++
				f2 = flg(pos)
			}
			add(pos)
			continue
		}
		if f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f2 != 0 {
			if c == ' ' {
				pos++
			}
			for f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f2 != 0 {
				pos++
				f2 = flg(pos)
			}
			add(pos)
			continue
		}
		nws := 0
		for flg(pos+nws)&flagWhitespace != 0 {
			nws++
		}
		if nws > 1 && cpt(pos+nws) != outOfRange {
			pos += nws - 1
			add(pos)
			continue
		}
		if nws > 0 {
			pos += nws
			add(pos)
			continue
		}
		pos++
		add(pos)
	}
	return out
}

// scanLlama3Seg implements Llama 3's expression (numbers in runs of up to three digits) and,
// with llama3 false, Qwen2's (single digits):
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func scanLlama3Seg(cpts []uint32, flags []uint16, llama3 bool, out []int) []int {
	end := len(cpts)
	cpt := func(p int) uint32 {
		if p < end {
			return cpts[p]
		}
		return outOfRange
	}
	flg := func(p int) uint16 {
		if p < end {
			return flags[p]
		}
		return 0
	}
	prev := 0
	add := func(e int) int {
		l := e - prev
		if l > 0 {
			out = append(out, l)
		}
		prev = e
		return l
	}
	for pos := 0; pos < end; {
		c := cpts[pos]
		f := flags[pos]
		if c == '\'' && pos+1 < end {
			n := toLowerCpt(cpts[pos+1])
			if n == 's' || n == 't' || n == 'm' || n == 'd' {
				pos += add(pos + 2)
				continue
			}
			if pos+2 < end {
				nn := toLowerCpt(cpts[pos+2])
				if (n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l') {
					pos += add(pos + 3)
					continue
				}
			}
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if !(c == '\r' || c == '\n' || f&flagNumber != 0) {
			if f&flagLetter != 0 || flg(pos+1)&flagLetter != 0 {
				pos++
				for flg(pos)&flagLetter != 0 {
					pos++
				}
				add(pos)
				continue
			}
		}
		// \p{N}{1,3} or \p{N}
		if f&flagNumber != 0 {
			if llama3 {
				ini := pos
				for flg(pos)&flagNumber != 0 {
					pos++
					if pos-ini >= 3 {
						add(pos)
						ini = pos
					}
				}
				add(pos)
			} else {
				pos++
				add(pos)
			}
			continue
		}
		//  ?[^\s\p{L}\p{N}]+[\r\n]*
		f2 := f
		if c == ' ' {
			f2 = flg(pos + 1)
		}
		if f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f != 0 {
			if c == ' ' {
				pos++
			}
			for f2&(flagWhitespace|flagLetter|flagNumber) == 0 && f2 != 0 {
				pos++
				f2 = flg(pos)
			}
			c2 := cpt(pos)
			for c2 == '\r' || c2 == '\n' {
				pos++
				c2 = cpt(pos)
			}
			add(pos)
			continue
		}
		nws := 0
		lastRN := 0
		for flg(pos+nws)&flagWhitespace != 0 {
			c2 := cpt(pos + nws)
			if c2 == '\r' || c2 == '\n' {
				lastRN = pos + nws + 1
			}
			nws++
		}
		// \s*[\r\n]+
		if lastRN > 0 {
			pos = lastRN
			add(pos)
			continue
		}
		// \s+(?!\S)
		if nws > 1 && cpt(pos+nws) != outOfRange {
			pos += nws - 1
			add(pos)
			continue
		}
		if nws > 0 {
			pos += nws
			add(pos)
			continue
		}
		pos++
		add(pos)
	}
	return out
}
