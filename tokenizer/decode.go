package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// piece computes llama.cpp's token_to_piece(id, special=true) without lstrip.
func (t *Tokenizer) piece(id int32) string {
	a := t.attrs[id]
	text := t.tokens[id]
	switch {
	case a&(AttrUnknown|AttrControl|AttrUserDefined) != 0:
		return text
	case a&AttrNormal != 0:
		if t.typ == TypeSPM {
			return strings.ReplaceAll(text, "\u2581", " ")
		}
		return decodeByteLevel(text)
	case a&AttrByte != 0:
		if len(text) >= 5 {
			var v byte
			ok := true
			for _, c := range []byte(text[3:5]) {
				switch {
				case c >= '0' && c <= '9':
					v = v<<4 | (c - '0')
				case c >= 'a' && c <= 'f':
					v = v<<4 | (c - 'a' + 10)
				case c >= 'A' && c <= 'F':
					v = v<<4 | (c - 'A' + 10)
				default:
					ok = false
				}
			}
			if ok {
				return string([]byte{v})
			}
		}
		return ""
	}
	return ""
}

// decodeByteLevel maps GPT-2 byte-level characters back to bytes; characters outside the
// mapping are written as llama.cpp does, "[UNK_BYTE_0x..text]".
func decodeByteLevel(text string) string {
	var b []byte
	var cpts []uint32
	for _, c := range decodeCpts(text, cpts) {
		if v, ok := cptToByte[c]; ok {
			b = append(b, v)
			continue
		}
		b = append(b, "[UNK_BYTE_0x"...)
		for _, x := range appendCpt(nil, c) {
			b = append(b, fmt.Sprintf("%02x", x)...)
		}
		b = append(b, text...)
		b = append(b, ']')
	}
	return string(b)
}

// Piece returns the text of one token as llama.cpp's token_to_piece shows it with special
// tokens rendered: bytes for byte tokens, the decoded byte-level text for BPE tokens, "▁"
// replaced by a space for SentencePiece tokens, the raw text for control and user-defined
// tokens. It may be an incomplete UTF-8 sequence. Ids out of range give "".
func (t *Tokenizer) Piece(id int32) string {
	if !t.valid(id) {
		return ""
	}
	return t.pieces[id]
}

// Decode converts ids back to text: the concatenated pieces with control tokens rendered, and
// for vocabularies that prefix a space when encoding (SentencePiece), one leading space of the
// first piece removed. Out-of-range ids are skipped. Decode(Encode(s, false, false)) == s.
func (t *Tokenizer) Decode(ids []int32) string {
	return t.Detokenize(ids, DetokenizeOptions{RenderSpecial: true})
}

// DetokenizeOptions selects the behaviour of llama_detokenize.
type DetokenizeOptions struct {
	RemoveSpecial bool // drop a leading BOS / trailing EOS that Encode would add
	RenderSpecial bool // write control tokens as their text (otherwise they vanish)
	CleanSpaces   bool // apply clean_up_tokenization_spaces when the vocabulary asks for it
}

// Detokenize is llama.cpp's llama_detokenize with the given options.
func (t *Tokenizer) Detokenize(ids []int32, o DetokenizeOptions) string {
	removeSpace := t.addSpacePrefix
	if o.RemoveSpecial && t.addBOS && len(ids) > 0 && ids[0] == t.bos {
		removeSpace = false
		ids = ids[1:]
	}
	if o.RemoveSpecial && t.addEOS && len(ids) > 0 && ids[len(ids)-1] == t.eos {
		ids = ids[:len(ids)-1]
	}
	var b []byte
	for _, id := range ids {
		if !t.valid(id) {
			continue
		}
		p := t.pieces[id]
		if !o.RenderSpecial && t.attrs[id]&(AttrControl|AttrUnknown) != 0 {
			p = ""
		}
		if removeSpace && strings.HasPrefix(p, " ") {
			p = p[1:]
		}
		removeSpace = false
		b = append(b, p...)
	}
	if o.CleanSpaces && t.cleanSpaces {
		b = cleanSpaces(b)
	}
	return string(b)
}

// cleanSpaces reproduces llama.cpp's three clean-up passes: " ?", " !", " .", " ," lose the
// space; a lone " ' " loses both spaces; " 's", " 'm", " 're", " 've" lose the space.
func cleanSpaces(text []byte) []byte {
	if len(text) == 0 {
		return text
	}
	out := text[:1]
	for i := 1; i < len(text); i++ {
		x := text[i]
		if text[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') {
			out = out[:len(out)-1]
		}
		out = append(out, x)
	}
	text = out
	out = text[:1]
	for i := 1; i < len(text); i++ {
		x := text[i]
		if x == '\'' && i+1 < len(text) && text[i-1] == ' ' && text[i+1] == ' ' {
			out = out[:len(out)-1]
			i++ // the next space is dropped too
			out = append(out, x)
			continue
		}
		out = append(out, x)
	}
	text = out
	out = text[:1]
	for i := 1; i < len(text); i++ {
		x := text[i]
		if text[i-1] == ' ' && x == '\'' && i+1 < len(text) {
			x1 := text[i+1]
			if x1 == 's' || x1 == 'm' {
				out = out[:len(out)-1]
			} else if i+2 < len(text) {
				x2 := text[i+2]
				if (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e') {
					out = out[:len(out)-1]
				}
			}
		}
		out = append(out, x)
	}
	return out
}

// Decoder turns a stream of token ids into text without ever splitting a UTF-8 character:
// bytes of a character whose encoding continues in a later token are held back until it is
// complete. Use one Decoder per stream; it is not safe for concurrent use.
type Decoder struct {
	t           *Tokenizer
	pending     []byte
	removeSpace bool
}

// NewDecoder starts a stream. Like Decode, it drops the leading space SentencePiece adds.
func (t *Tokenizer) NewDecoder() *Decoder {
	return &Decoder{t: t, removeSpace: t.addSpacePrefix}
}

// Add appends a token and returns the text that is complete so far (possibly "").
func (d *Decoder) Add(id int32) string {
	p := d.t.Piece(id)
	if d.removeSpace && d.t.valid(id) {
		p = strings.TrimPrefix(p, " ")
		d.removeSpace = false
	}
	d.pending = append(d.pending, p...)
	n := completePrefix(d.pending)
	if n == 0 {
		return ""
	}
	s := string(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return s
}

// Flush returns whatever is held back (an incomplete sequence at the end of the stream) and
// resets the decoder's buffer.
func (d *Decoder) Flush() string {
	s := string(d.pending)
	d.pending = d.pending[:0]
	return s
}

// completePrefix returns the length of b without a trailing incomplete (but so far valid)
// UTF-8 sequence. Invalid bytes are not held back: they can never complete.
func completePrefix(b []byte) int {
	n := len(b)
	// Look at the last up-to-3 bytes for the start of an unfinished sequence.
	for i := n - 1; i >= 0 && i >= n-3; i-- {
		c := b[i]
		if c < 0x80 {
			return n
		}
		if c >= 0xC0 { // lead byte
			need := utf8Len(c)
			if c >= 0xF8 || i+need <= n {
				return n
			}
			if !utf8.FullRune(b[i:]) && validPrefix(b[i:]) {
				return i
			}
			return n
		}
	}
	return n
}

// validPrefix reports whether b could begin a valid UTF-8 encoding.
func validPrefix(b []byte) bool {
	// Complete with continuation bytes and check the smallest/largest completions.
	need := utf8Len(b[0])
	lo := append([]byte{}, b...)
	hi := append([]byte{}, b...)
	for len(lo) < need {
		lo = append(lo, 0x80)
		hi = append(hi, 0xBF)
	}
	r1, _ := utf8.DecodeRune(lo)
	r2, _ := utf8.DecodeRune(hi)
	return r1 != utf8.RuneError || r2 != utf8.RuneError
}
