package tokenizer

import "strings"

// fragment is a piece of the input: raw text still to tokenize, or one special token.
type fragment struct {
	text string
	tok  int32 // None for text
}

// partition splits text around special tokens (llama.cpp's tokenizer_st_partition): every
// user-defined token, and with parseSpecial also every control and unknown token, is cut out of
// the text wherever it occurs, longest token texts first.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, tok: None}}
	for _, id := range t.special {
		a := t.attrs[id]
		if !parseSpecial && a&(AttrControl|AttrUnknown) != 0 {
			continue
		}
		st := t.tokens[id]
		var out []fragment
		changed := false
		for fi, fr := range frags {
			if fr.tok != None || !strings.Contains(fr.text, st) {
				if changed {
					out = append(out, fr)
				}
				continue
			}
			if !changed {
				out = append(out, frags[:fi]...)
				changed = true
			}
			rest := fr.text
			for {
				m := strings.Index(rest, st)
				if m < 0 {
					if rest != "" {
						out = append(out, fragment{text: rest, tok: None})
					}
					break
				}
				left := rest[:m]
				if a&AttrLStrip != 0 {
					left = strings.TrimRight(left, cSpace)
				}
				if left != "" {
					out = append(out, fragment{text: left, tok: None})
				}
				out = append(out, fragment{tok: id})
				rest = rest[m+len(st):]
				if a&AttrRStrip != 0 {
					rest = strings.TrimLeft(rest, cSpace)
				}
			}
		}
		if changed {
			frags = out
		}
	}
	return frags
}

// cSpace is C's isspace set.
const cSpace = " \t\n\v\f\r"

// Encode tokenizes text. addSpecial adds BOS/EOS as the vocabulary's metadata says;
// parseSpecial turns control-token texts (e.g. "<|im_start|>") into their ids instead of
// tokenizing them as text.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	var frags []fragment
	if text != "" {
		frags = t.partition(text, parseSpecial)
	}
	out := make([]int32, 0, len(text)/3+2)
	if addSpecial && t.addBOS {
		out = append(out, t.bos)
	}
	switch t.typ {
	case TypeSPM:
		var s spmSession
		prevSpecial := true
		for _, fr := range frags {
			if fr.tok != None {
				out = append(out, fr.tok)
				prevSpecial = true
				continue
			}
			txt := fr.text
			if t.addSpacePrefix && prevSpecial {
				txt = " " + txt
			}
			out = s.tokenize(t, strings.ReplaceAll(txt, " ", "\u2581"), out)
			prevSpecial = false
		}
	default:
		var s bpeSession
		for _, fr := range frags {
			if fr.tok != None {
				out = append(out, fr.tok)
				continue
			}
			out = s.tokenize(t, fr.text, out)
		}
	}
	if addSpecial && t.addEOS {
		out = append(out, t.eos)
	}
	return out
}

// preTokenize splits text into byte-level-encoded words.
func (t *Tokenizer) preTokenize(s *bpeSession, text string) []string {
	s.cpts = decodeCpts(text, s.cpts)
	cpts := s.cpts
	if cap(s.flags) < len(cpts) {
		s.flags = make([]uint16, len(cpts))
	}
	flags := s.flags[:len(cpts)]
	for i, c := range cpts {
		flags[i] = cptFlags(c)
	}
	segs := append(s.segs[:0], len(cpts))
	for _, sp := range t.splitter {
		segs = sp.split(cpts, flags, segs)
	}
	s.segs = segs
	// Byte-level encode the whole text once; words are substrings of it.
	buf := s.buf[:0]
	ends := s.ends[:0]
	start := 0
	for _, n := range segs {
		for _, c := range cpts[start : start+n] {
			var tmp [4]byte
			for _, b := range appendCpt(tmp[:0], c) {
				buf = append(buf, byteToStr[b]...)
			}
		}
		ends = append(ends, len(buf))
		start += n
	}
	s.buf, s.ends = buf, ends
	all := string(buf)
	words := s.words[:0]
	prev := 0
	for _, e := range ends {
		words = append(words, all[prev:e])
		prev = e
	}
	s.words = words
	return words
}

type bpeSymbol struct {
	start, n   int // byte range in the word; n == 0 once merged away
	prev, next int
}

type bpeBigram struct {
	left, right int
	rank        int32
	size        int
}

func (a bpeBigram) less(b bpeBigram) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}

// A binary min-heap over a slice (no interface boxing, unlike container/heap).
type lesser[T any] interface{ less(T) bool }

func heapPush[T lesser[T]](h []T, x T) []T {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop[T lesser[T]](h []T) (T, []T) {
	x := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		m := 2*i + 1
		if m >= n {
			break
		}
		if r := m + 1; r < n && h[r].less(h[m]) {
			m = r
		}
		if !h[m].less(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return x, h
}

// bpeSession holds scratch buffers reused across the fragments of one Encode call.
type bpeSession struct {
	cpts  []uint32
	flags []uint16
	segs  []int
	words []string
	buf   []byte
	ends  []int
	syms  []bpeSymbol
	queue []bpeBigram
}

func (s *bpeSession) tokenize(t *Tokenizer, text string, out []int32) []int32 {
	for _, word := range t.preTokenize(s, text) {
		out = s.mergeWord(t, word, out)
	}
	return out
}

// mergeWord applies the BPE merges to one word, lowest rank first (leftmost on ties), and
// appends the resulting tokens.
func (s *bpeSession) mergeWord(t *Tokenizer, word string, out []int32) []int32 {
	if t.ignoreMerges {
		if id, ok := t.toID[word]; ok {
			return append(out, id)
		}
	}
	syms := s.syms[:0]
	for off := 0; off < len(word); {
		n := min(utf8Len(word[off]), len(word)-off)
		syms = append(syms, bpeSymbol{start: off, n: n, prev: len(syms) - 1, next: len(syms) + 1})
		off += n
	}
	if len(syms) == 0 {
		return out
	}
	syms[len(syms)-1].next = -1
	s.queue = s.queue[:0]
	add := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		a, b := syms[l], syms[r]
		rank, ok := t.ranks[mergeKey{word[a.start : a.start+a.n], word[b.start : b.start+b.n]}]
		if !ok {
			return
		}
		s.queue = heapPush(s.queue, bpeBigram{left: l, right: r, rank: rank, size: a.n + b.n})
	}
	for i := 1; i < len(syms); i++ {
		add(i-1, i)
	}
	for len(s.queue) > 0 {
		var bg bpeBigram
		bg, s.queue = heapPop(s.queue)
		l, r := &syms[bg.left], &syms[bg.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != bg.size {
			continue // outdated
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		add(l.prev, bg.left)
		add(bg.left, l.next)
	}
	for i := range syms {
		sy := syms[i]
		if sy.n == 0 {
			continue
		}
		str := word[sy.start : sy.start+sy.n]
		if id, ok := t.toID[str]; ok {
			out = append(out, id)
			continue
		}
		// Not a token: llama.cpp falls back to single bytes of the encoded text, which only
		// exist for printable ASCII.
		for j := 0; j < len(str); j++ {
			if id, ok := t.toID[str[j:j+1]]; ok {
				out = append(out, id)
			}
		}
	}
	s.syms = syms
	return out
}

// SentencePiece.

type spmBigram struct {
	left, right int
	score       float32
	size        int
}

// less orders the SentencePiece queue: highest score first, leftmost on ties.
func (a spmBigram) less(b spmBigram) bool {
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}

type spmSession struct {
	syms  []bpeSymbol
	queue []spmBigram
}

// tokenize runs llama.cpp's SentencePiece merge on text (spaces already escaped as "▁"):
// highest-scoring adjacent pair that forms a token first; leftovers become byte tokens.
func (s *spmSession) tokenize(t *Tokenizer, text string, out []int32) []int32 {
	syms := s.syms[:0]
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		syms = append(syms, bpeSymbol{start: off, n: n, prev: len(syms) - 1, next: len(syms) + 1})
		off += n
	}
	if len(syms) == 0 {
		return out
	}
	syms[len(syms)-1].next = -1
	s.queue = s.queue[:0]
	add := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		a, b := syms[l], syms[r]
		id, ok := t.toID[text[a.start:b.start+b.n]]
		if !ok {
			return
		}
		s.queue = heapPush(s.queue, spmBigram{left: l, right: r, score: t.scores[id], size: a.n + b.n})
	}
	for i := 1; i < len(syms); i++ {
		add(i-1, i)
	}
	for len(s.queue) > 0 {
		var bg spmBigram
		bg, s.queue = heapPop(s.queue)
		l, r := &syms[bg.left], &syms[bg.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != bg.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		add(l.prev, bg.left)
		add(bg.left, l.next)
	}
	for i := 0; i != -1; i = syms[i].next {
		sy := syms[i]
		str := text[sy.start : sy.start+sy.n]
		if id, ok := t.toID[str]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(str); j++ {
			if id := t.byteToken(str[j]); id != None {
				out = append(out, id)
			}
		}
	}
	s.syms = syms
	return out
}

const hexDigits = "0123456789ABCDEF"

// byteToken returns the byte-fallback token of b: <0xXX> for SentencePiece (or the one-byte
// token if that is missing), the byte-level character for BPE.
func (t *Tokenizer) byteToken(b byte) int32 {
	if t.typ == TypeSPM {
		if id, ok := t.toID[string([]byte{'<', '0', 'x', hexDigits[b>>4], hexDigits[b&15], '>'})]; ok {
			return id
		}
		if id, ok := t.toID[string([]byte{b})]; ok {
			return id
		}
		return None
	}
	if id, ok := t.toID[byteToStr[b]]; ok {
		return id
	}
	return None
}
