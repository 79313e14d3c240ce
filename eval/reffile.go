package eval

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/regolith/regolith/internal/f16"
)

// Saved reference logits (--save-ref, --ref-logits).
//
// A file is the magic "RGLLOGIT", a little-endian uint32 version (1), then one DEFLATE
// stream holding: uint32 encoding, uint32 vocabulary size, a string (uint32 length + bytes)
// naming the reference model, then windows: uint32 1, the document name (string), uint32
// start, uint32 n, n int32 tokens, and n − 1 rows of logits (the positions that predict
// tokens 1…n−1); after the last window uint32 0.
//
// Row encodings:
//
//   - EncodingF16 (the default): float32 m = max z, then z_i − m as IEEE half floats, stored
//     byte-plane by byte-plane (all low bytes, then all high bytes) so that DEFLATE finds the
//     high bytes' redundancy. Bounded, not exact: the values that carry the probability mass
//     are near 0, where half floats are finest (an absolute error ≤ |z_i − m|·2⁻¹¹: ≤ 0.0005
//     nats within 1 nat of the top, ≤ 0.004 at 8 nats). Reading it back and comparing with
//     the model that wrote it gives a small positive KL (the floor of this encoding, measured
//     in the tests and reported in docs/quality.md); about 1.4 bytes per vocabulary entry.
//   - EncodingF32: the float32 logits bit for bit, four byte planes. Exact: a saved reference
//     compared with the same model gives KL = 0 exactly; about 3.5 bytes per entry.
//
// Top-K logits plus a log-sum-exp are not enough for full-vocabulary KL, so rows are whole.
const (
	EncodingF16 uint32 = 1
	EncodingF32 uint32 = 2

	refMagic   = "RGLLOGIT"
	refVersion = 1
	maxVocab   = 1 << 22
	maxWindow  = 1 << 24
)

// ParseEncoding reads "f16" or "f32".
func ParseEncoding(s string) (uint32, error) {
	switch s {
	case "f16":
		return EncodingF16, nil
	case "f32":
		return EncodingF32, nil
	}
	return 0, fmt.Errorf("eval: reference encoding %q (want f16 or f32)", s)
}

// RefWriter writes saved reference logits.
type RefWriter struct {
	bw  *bufio.Writer
	zw  *flate.Writer
	out *bufio.Writer
	enc uint32
	n   int
	h   []uint16
	b   []byte
	tmp []float32
	err error
}

// NewRefWriter starts a saved-reference file on w.
func NewRefWriter(w io.Writer, enc uint32, vocab int, model string) (*RefWriter, error) {
	if enc != EncodingF16 && enc != EncodingF32 {
		return nil, fmt.Errorf("eval: unknown reference encoding %d", enc)
	}
	out := bufio.NewWriter(w)
	out.WriteString(refMagic)
	binary.Write(out, binary.LittleEndian, uint32(refVersion))
	zw, err := flate.NewWriter(out, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	r := &RefWriter{zw: zw, out: out, enc: enc, n: vocab, bw: bufio.NewWriterSize(zw, 1<<20)}
	r.u32(enc)
	r.u32(uint32(vocab))
	r.str(model)
	return r, nil
}

func (r *RefWriter) u32(v uint32) {
	if r.err == nil {
		r.err = binary.Write(r.bw, binary.LittleEndian, v)
	}
}

func (r *RefWriter) str(s string) {
	r.u32(uint32(len(s)))
	if r.err == nil {
		_, r.err = r.bw.WriteString(s)
	}
}

// Window writes one window's tokens and its len(tokens)−1 rows of logits ([rows × vocab]).
func (r *RefWriter) Window(w Window, logits []float32) error {
	rows := len(w.Tokens) - 1
	if len(logits) < rows*r.n {
		return fmt.Errorf("eval: %d logits for %d rows of %d", len(logits), rows, r.n)
	}
	r.u32(1)
	r.str(w.Doc)
	r.u32(uint32(w.Start))
	r.u32(uint32(len(w.Tokens)))
	for _, t := range w.Tokens {
		r.u32(uint32(t))
	}
	for i := 0; i < rows && r.err == nil; i++ {
		r.row(logits[i*r.n : (i+1)*r.n])
	}
	return r.err
}

func (r *RefWriter) row(z []float32) {
	n := len(z)
	switch r.enc {
	case EncodingF16:
		m := z[0]
		for _, v := range z {
			m = max(m, v)
		}
		r.u32(math.Float32bits(m))
		if len(r.h) < n {
			r.h = make([]uint16, n)
		}
		if len(r.tmp) < n {
			r.tmp = make([]float32, n)
		}
		for i, v := range z {
			r.tmp[i] = v - m
		}
		f16.ToF16(r.h[:n], r.tmp[:n])
		r.b = grow8(r.b, 2*n)
		for i, v := range r.h[:n] {
			r.b[i], r.b[n+i] = byte(v), byte(v>>8)
		}
	case EncodingF32:
		r.b = grow8(r.b, 4*n)
		for i, v := range z {
			u := math.Float32bits(v)
			r.b[i], r.b[n+i], r.b[2*n+i], r.b[3*n+i] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
	}
	if r.err == nil {
		_, r.err = r.bw.Write(r.b)
	}
}

func grow8(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// Close ends the file (it does not close the underlying writer).
func (r *RefWriter) Close() error {
	r.u32(0)
	if r.err == nil {
		r.err = r.bw.Flush()
	}
	if r.err == nil {
		r.err = r.zw.Close()
	}
	if r.err == nil {
		r.err = r.out.Flush()
	}
	return r.err
}

// RefReader reads saved reference logits window by window.
type RefReader struct {
	br       *bufio.Reader
	Encoding uint32
	Vocab    int
	Model    string
	h        []uint16
	b        []byte
	done     bool
}

// NewRefReader reads a saved-reference file's header.
func NewRefReader(rd io.Reader) (*RefReader, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(rd, hdr[:]); err != nil {
		return nil, fmt.Errorf("eval: saved reference: %w", err)
	}
	if string(hdr[:8]) != refMagic {
		return nil, errors.New("eval: not a saved-reference file (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != refVersion {
		return nil, fmt.Errorf("eval: saved-reference version %d (this build reads %d)", v, refVersion)
	}
	r := &RefReader{br: bufio.NewReaderSize(flate.NewReader(rd), 1<<20)}
	enc, err := r.u32()
	if err != nil {
		return nil, err
	}
	if enc != EncodingF16 && enc != EncodingF32 {
		return nil, fmt.Errorf("eval: saved reference has unknown encoding %d", enc)
	}
	v, err := r.u32()
	if err != nil {
		return nil, err
	}
	if v == 0 || v > maxVocab {
		return nil, fmt.Errorf("eval: saved reference has a vocabulary of %d", v)
	}
	r.Encoding, r.Vocab = enc, int(v)
	if r.Model, err = r.str(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *RefReader) u32() (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r.br, b[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, fmt.Errorf("eval: saved reference: %w", err)
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func (r *RefReader) str() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if n > 1<<16 {
		return "", fmt.Errorf("eval: saved reference: string of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.br, b); err != nil {
		return "", fmt.Errorf("eval: saved reference: %w", err)
	}
	return string(b), nil
}

// Next reads the next window and its logits into buf (grown as needed; [rows × Vocab]).
// It returns ok = false after the last window.
func (r *RefReader) Next(buf []float32) (w Window, logits []float32, ok bool, err error) {
	if r.done {
		return w, buf, false, nil
	}
	tag, err := r.u32()
	if err != nil {
		return w, buf, false, err
	}
	if tag == 0 {
		r.done = true
		return w, buf, false, nil
	}
	if tag != 1 {
		return w, buf, false, fmt.Errorf("eval: saved reference: bad record tag %d", tag)
	}
	if w.Doc, err = r.str(); err != nil {
		return w, buf, false, err
	}
	s, err := r.u32()
	if err != nil {
		return w, buf, false, err
	}
	n, err := r.u32()
	if err != nil {
		return w, buf, false, err
	}
	if n < 2 || n > maxWindow {
		return w, buf, false, fmt.Errorf("eval: saved reference: window of %d tokens", n)
	}
	w.Start = int(s)
	w.Tokens = make([]int32, n)
	for i := range w.Tokens {
		v, err := r.u32()
		if err != nil {
			return w, buf, false, err
		}
		w.Tokens[i] = int32(v)
	}
	V := r.Vocab
	rows := int(n) - 1
	if cap(buf) < rows*V {
		buf = make([]float32, rows*V)
	}
	buf = buf[:rows*V]
	for i := 0; i < rows; i++ {
		if err := r.row(buf[i*V : (i+1)*V]); err != nil {
			return w, buf, false, err
		}
	}
	return w, buf, true, nil
}

func (r *RefReader) row(z []float32) error {
	n := len(z)
	switch r.Encoding {
	case EncodingF16:
		mb, err := r.u32()
		if err != nil {
			return err
		}
		m := math.Float32frombits(mb)
		r.b = grow8(r.b, 2*n)
		if _, err := io.ReadFull(r.br, r.b); err != nil {
			return fmt.Errorf("eval: saved reference: %w", err)
		}
		if len(r.h) < n {
			r.h = make([]uint16, n)
		}
		for i := range r.h[:n] {
			r.h[i] = uint16(r.b[i]) | uint16(r.b[n+i])<<8
		}
		f16.ToF32(z, r.h[:n])
		for i := range z {
			z[i] += m
		}
	case EncodingF32:
		r.b = grow8(r.b, 4*n)
		if _, err := io.ReadFull(r.br, r.b); err != nil {
			return fmt.Errorf("eval: saved reference: %w", err)
		}
		for i := range z {
			z[i] = math.Float32frombits(uint32(r.b[i]) | uint32(r.b[n+i])<<8 | uint32(r.b[2*n+i])<<16 | uint32(r.b[3*n+i])<<24)
		}
	}
	return nil
}
