package tokenizer

import (
	"sync"
	"unicode"
)

// Code point flags, as llama.cpp's pre-tokenizers classify code points: one general-category
// bit (the first letter of the Unicode category; unassigned code points are "undefined") plus
// a whitespace bit (the Unicode White_Space property).
const (
	flagUndefined  uint16 = 1 << iota
	flagNumber            // \p{N}
	flagLetter            // \p{L}
	flagSeparator         // \p{Z}
	flagMark              // \p{M}
	flagPunct             // \p{P}
	flagSymbol            // \p{S}
	flagControl           // \p{C} except Cn
	flagWhitespace        // \s

	maskCategory = flagUndefined | flagNumber | flagLetter | flagSeparator | flagMark | flagPunct | flagSymbol | flagControl
)

const maxCodepoint = 0x110000

// categoryTable maps every code point to its category flag (one byte: the flag's bit index).
var categoryTable = sync.OnceValue(func() []uint8 {
	t := make([]uint8, maxCodepoint) // 0 = undefined (bit 0)
	set := func(rt *unicode.RangeTable, bit uint8) {
		for _, r := range rt.R16 {
			for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
				t[c] = bit
			}
		}
		for _, r := range rt.R32 {
			for c := r.Lo; c <= r.Hi; c += r.Stride {
				t[c] = bit
			}
		}
	}
	set(unicode.N, 1)
	set(unicode.L, 2)
	set(unicode.Z, 3)
	set(unicode.M, 4)
	set(unicode.P, 5)
	set(unicode.S, 6)
	for _, rt := range []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs} {
		set(rt, 7)
	}
	// Go's tables are Unicode 15.0; llama.cpp's are 15.1, which added these code points.
	for c := 0x2FFC; c <= 0x2FFF; c++ {
		t[c] = 6 // So: ideographic description characters
	}
	t[0x31EF] = 6                         // So: CJK stroke HXG
	for c := 0x2EBF0; c <= 0x2EE5D; c++ { // Lo: CJK Unified Ideographs Extension I
		t[c] = 2
	}
	return t
})

// isWhitespaceCpt is the Unicode White_Space property (the set llama.cpp uses for \s).
func isWhitespaceCpt(c uint32) bool {
	switch {
	case c >= 0x09 && c <= 0x0D, c == 0x20, c == 0x85, c == 0xA0, c == 0x1680,
		c >= 0x2000 && c <= 0x200A, c == 0x2028, c == 0x2029, c == 0x202F, c == 0x205F, c == 0x3000:
		return true
	}
	return false
}

// cptFlags returns the flags of code point c; code points beyond U+10FFFF are undefined.
func cptFlags(c uint32) uint16 {
	if c >= maxCodepoint {
		return flagUndefined
	}
	f := uint16(1) << categoryTable()[c]
	if isWhitespaceCpt(c) {
		f |= flagWhitespace
	}
	return f
}

// utf8Len is the sequence length announced by a UTF-8 lead byte (llama.cpp's unicode_len_utf8:
// continuation and invalid bytes count as 1).
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// decodeCpts splits text into code points the way llama.cpp does: a well-formed-looking
// sequence (lead byte plus the right number of continuation bytes) decodes to its value even
// when overlong or a surrogate; any other byte becomes U+FFFD and is skipped alone.
func decodeCpts(text string, dst []uint32) []uint32 {
	dst = dst[:0]
	for i := 0; i < len(text); {
		b := text[i]
		switch {
		case b < 0x80:
			dst = append(dst, uint32(b))
			i++
			continue
		case b&0xE0 == 0xC0:
			if i+1 < len(text) && text[i+1]&0xC0 == 0x80 {
				dst = append(dst, uint32(b&0x1F)<<6|uint32(text[i+1]&0x3F))
				i += 2
				continue
			}
		case b&0xF0 == 0xE0:
			if i+2 < len(text) && text[i+1]&0xC0 == 0x80 && text[i+2]&0xC0 == 0x80 {
				dst = append(dst, uint32(b&0x0F)<<12|uint32(text[i+1]&0x3F)<<6|uint32(text[i+2]&0x3F))
				i += 3
				continue
			}
		case b&0xF8 == 0xF0:
			if i+3 < len(text) && text[i+1]&0xC0 == 0x80 && text[i+2]&0xC0 == 0x80 && text[i+3]&0xC0 == 0x80 {
				dst = append(dst, uint32(b&0x07)<<18|uint32(text[i+1]&0x3F)<<12|uint32(text[i+2]&0x3F)<<6|uint32(text[i+3]&0x3F))
				i += 4
				continue
			}
		}
		dst = append(dst, 0xFFFD)
		i++
	}
	return dst
}

// appendCpt encodes c as UTF-8 without rejecting surrogates (as llama.cpp does); values beyond
// U+10FFFF, which llama.cpp cannot encode, become U+FFFD.
func appendCpt(dst []byte, c uint32) []byte {
	switch {
	case c <= 0x7F:
		return append(dst, byte(c))
	case c <= 0x7FF:
		return append(dst, 0xC0|byte(c>>6), 0x80|byte(c&0x3F))
	case c <= 0xFFFF:
		return append(dst, 0xE0|byte(c>>12), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	case c <= 0x10FFFF:
		return append(dst, 0xF0|byte(c>>18), 0x80|byte(c>>12&0x3F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
	}
	return append(dst, 0xEF, 0xBF, 0xBD)
}

// toLowerCpt lower-cases one code point (simple case mapping).
func toLowerCpt(c uint32) uint32 {
	if c < 0x80 {
		if c >= 'A' && c <= 'Z' {
			return c + 32
		}
		return c
	}
	if c >= maxCodepoint {
		return c
	}
	return uint32(unicode.ToLower(rune(c)))
}

// GPT-2 byte-level encoding: every byte maps to one printable code point.
var (
	byteToCpt [256]uint32
	cptToByte = map[uint32]byte{}
	byteToStr [256]string
)

func init() {
	n := uint32(0)
	for b := 0; b < 256; b++ {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToCpt[b] = uint32(b)
		} else {
			byteToCpt[b] = 256 + n
			n++
		}
		cptToByte[byteToCpt[b]] = byte(b)
		byteToStr[b] = string(appendCpt(nil, byteToCpt[b]))
	}
}
