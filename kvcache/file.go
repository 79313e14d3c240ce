package kvcache

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"unsafe"
)

// Session files hold a cache's filled positions and the token ids they came from
// (DESIGN §11):
//
//	header:  magic "RGKVSES1" | version u32 | layers u32 | dim u32 | n u32 |
//	         fingerprint [32]byte | n × token id i32 | CRC-32C of the above u32
//	payload: for each layer, K then V: n×dim F16 values (little endian) | CRC-32C u32
//	trailer: "RGKVEND1"
//
// A file is written under a temporary name, synced, and renamed into place, so a reader
// sees either the whole old file or the whole new one. Every section is checksummed; a
// file that fails a check is reported as *CorruptError.

const (
	fileMagic   = "RGKVSES1"
	fileTrailer = "RGKVEND1"
	fileVersion = 1
	// MaxFileTokens bounds the token count a header may claim (no unbounded allocation on
	// a hostile file).
	MaxFileTokens = 1 << 24
	headerFixed   = 8 + 4*4 + 32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrRecurrent is returned by Save and Load for a cache with a recurrent state (qwen3next):
// the file format (version 1) holds keys and values only, and a session restored without
// its Gated DeltaNet state would compute wrong logits. Such sessions reuse prompts from RAM
// (checkpoints, see Recurrent) until the format has a recurrent section.
var ErrRecurrent = errors.New("kvcache: session files do not hold recurrent (Gated DeltaNet) state yet: saving and restoring qwen3next sessions is not supported")

// Fingerprint identifies the model (and cache geometry) a session belongs to.
type Fingerprint [32]byte

// Header is a session file's header.
type Header struct {
	Version     uint32
	Layers, Dim int
	Fingerprint Fingerprint
	Tokens      []int32 // one per cached position
}

// PayloadBytes is the size of the K/V payload the header describes.
func (h *Header) PayloadBytes() int64 {
	return int64(h.Layers) * 2 * (int64(len(h.Tokens))*int64(h.Dim)*2 + 4)
}

// FileBytes is the size a complete file with this header has.
func (h *Header) FileBytes() int64 {
	return int64(headerFixed) + 4*int64(len(h.Tokens)) + 4 + h.PayloadBytes() + int64(len(fileTrailer))
}

// CorruptError reports a session file that fails a check (bad magic, checksum, size).
type CorruptError struct {
	Path, Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("kvcache: %s: corrupt session file: %s", e.Path, e.Reason)
}

// IsCorrupt reports whether err is a *CorruptError.
func IsCorrupt(err error) bool {
	var c *CorruptError
	return errors.As(err, &c)
}

// Save writes the first len(tokens) positions of the cache (len(tokens) <= N) with their
// token ids to path, crash-safely: a temporary file in the same directory, fsynced, then
// renamed over path (and the directory synced).
func (c *Cache) Save(path string, fp Fingerprint, tokens []int32) (err error) {
	n := len(tokens)
	if c.Rec != nil {
		return ErrRecurrent
	}
	if n > c.N {
		return fmt.Errorf("kvcache: save: %d tokens but only %d positions are cached", n, c.N)
	}
	if n > MaxFileTokens {
		return fmt.Errorf("kvcache: save: %d tokens exceed the file limit of %d", n, MaxFileTokens)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("kvcache: save: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	crc := crc32.New(castagnoli)
	hw := io.MultiWriter(w, crc)
	var b [headerFixed]byte
	copy(b[:], fileMagic)
	binary.LittleEndian.PutUint32(b[8:], fileVersion)
	binary.LittleEndian.PutUint32(b[12:], uint32(c.Layers))
	binary.LittleEndian.PutUint32(b[16:], uint32(c.Dim))
	binary.LittleEndian.PutUint32(b[20:], uint32(n))
	copy(b[24:], fp[:])
	hw.Write(b[:])
	tb := make([]byte, 4*n)
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(tb[4*i:], uint32(t))
	}
	hw.Write(tb)
	if err = writeU32(w, crc.Sum32()); err != nil {
		return fmt.Errorf("kvcache: save %s: %w", path, err)
	}
	for l := 0; l < c.Layers; l++ {
		for _, s := range [][]uint16{c.K[l][:n*c.Dim], c.V[l][:n*c.Dim]} {
			raw := halvesBytes(s)
			if _, err = w.Write(raw); err != nil {
				return fmt.Errorf("kvcache: save %s: %w", path, err)
			}
			if err = writeU32(w, crc32.Checksum(raw, castagnoli)); err != nil {
				return fmt.Errorf("kvcache: save %s: %w", path, err)
			}
		}
	}
	if _, err = w.WriteString(fileTrailer); err != nil {
		return fmt.Errorf("kvcache: save %s: %w", path, err)
	}
	if err = w.Flush(); err != nil {
		return fmt.Errorf("kvcache: save %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("kvcache: save %s: sync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("kvcache: save %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("kvcache: save: %w", err)
	}
	syncDir(dir)
	return nil
}

func writeU32(w io.Writer, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	_, err := w.Write(b[:])
	return err
}

// ReadHeader reads and checks a session file's header without touching its payload; it
// also checks that the file's size is the size the header implies (a truncated file is
// corrupt).
func ReadHeader(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h, err := readHeader(bufio.NewReaderSize(f, 64<<10), path, fi.Size())
	if err != nil {
		return nil, err
	}
	if fi.Size() != h.FileBytes() {
		return nil, &CorruptError{path, fmt.Sprintf("size %d, header implies %d (partial file?)", fi.Size(), h.FileBytes())}
	}
	return h, nil
}

func readHeader(r io.Reader, path string, size int64) (*Header, error) {
	crc := crc32.New(castagnoli)
	tr := io.TeeReader(r, crc)
	var b [headerFixed]byte
	if _, err := io.ReadFull(tr, b[:]); err != nil {
		return nil, &CorruptError{path, "short header"}
	}
	if string(b[:8]) != fileMagic {
		return nil, &CorruptError{path, "bad magic"}
	}
	h := &Header{Version: binary.LittleEndian.Uint32(b[8:])}
	if h.Version != fileVersion {
		return nil, &CorruptError{path, fmt.Sprintf("unsupported version %d", h.Version)}
	}
	layers, dim, n := binary.LittleEndian.Uint32(b[12:]), binary.LittleEndian.Uint32(b[16:]), binary.LittleEndian.Uint32(b[20:])
	if layers == 0 || layers > 1<<16 || dim == 0 || dim > 1<<20 || n > MaxFileTokens {
		return nil, &CorruptError{path, fmt.Sprintf("absurd geometry: %d layers × %d dims × %d positions", layers, dim, n)}
	}
	h.Layers, h.Dim = int(layers), int(dim)
	copy(h.Fingerprint[:], b[24:])
	// The token list must fit in the file before it is allocated.
	if int64(headerFixed)+4*int64(n)+4 > size {
		return nil, &CorruptError{path, fmt.Sprintf("header claims %d tokens, more than the file holds", n)}
	}
	tb := make([]byte, 4*int(n))
	if _, err := io.ReadFull(tr, tb); err != nil {
		return nil, &CorruptError{path, "short token list"}
	}
	sum := crc.Sum32()
	var cb [4]byte
	if _, err := io.ReadFull(r, cb[:]); err != nil {
		return nil, &CorruptError{path, "short header"}
	}
	if binary.LittleEndian.Uint32(cb[:]) != sum {
		return nil, &CorruptError{path, "header checksum mismatch"}
	}
	h.Tokens = make([]int32, n)
	for i := range h.Tokens {
		h.Tokens[i] = int32(binary.LittleEndian.Uint32(tb[4*i:]))
	}
	return h, nil
}

// Load reads a session file into the cache, which must have the file's geometry and
// room for its positions, and whose fingerprint must match. It returns the file's tokens;
// on success positions 0..len(tokens)-1 hold the file's state and N = len(tokens). On any
// failure after the payload started to arrive, N is 0 (the cache's old state is gone, the
// file's never half-used).
func (c *Cache) Load(path string, fp Fingerprint) ([]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	h, err := readHeader(r, path, fi.Size())
	if err != nil {
		return nil, err
	}
	if fi.Size() != h.FileBytes() {
		return nil, &CorruptError{path, fmt.Sprintf("size %d, header implies %d (partial file?)", fi.Size(), h.FileBytes())}
	}
	if h.Fingerprint != fp {
		return nil, fmt.Errorf("kvcache: %s: saved by another model (fingerprint mismatch)", path)
	}
	if c.Rec != nil {
		return nil, ErrRecurrent
	}
	if h.Layers != c.Layers || h.Dim != c.Dim {
		return nil, fmt.Errorf("kvcache: %s: geometry %d layers × %d dims, cache has %d × %d", path, h.Layers, h.Dim, c.Layers, c.Dim)
	}
	n := len(h.Tokens)
	if n > c.Ctx {
		return nil, fmt.Errorf("kvcache: %s: %d positions do not fit the context of %d", path, n, c.Ctx)
	}
	c.N = 0
	var cb [4]byte
	for l := 0; l < c.Layers; l++ {
		for _, s := range [][]uint16{c.K[l][:n*c.Dim], c.V[l][:n*c.Dim]} {
			raw := halvesBytes(s)
			if !littleEndian {
				raw = make([]byte, 2*len(s))
			}
			if _, err := io.ReadFull(r, raw); err != nil {
				return nil, &CorruptError{path, fmt.Sprintf("short payload in layer %d", l)}
			}
			if _, err := io.ReadFull(r, cb[:]); err != nil {
				return nil, &CorruptError{path, fmt.Sprintf("short payload in layer %d", l)}
			}
			if crc32.Checksum(raw, castagnoli) != binary.LittleEndian.Uint32(cb[:]) {
				return nil, &CorruptError{path, fmt.Sprintf("payload checksum mismatch in layer %d", l)}
			}
			if !littleEndian {
				for i := range s {
					s[i] = binary.LittleEndian.Uint16(raw[2*i:])
				}
			}
		}
	}
	var tb [len(fileTrailer)]byte
	if _, err := io.ReadFull(r, tb[:]); err != nil || string(tb[:]) != fileTrailer {
		return nil, &CorruptError{path, "missing trailer"}
	}
	c.N = n
	return h.Tokens, nil
}

var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// halvesBytes views s as little-endian bytes (a converted copy on big-endian machines).
func halvesBytes(s []uint16) []byte {
	if len(s) == 0 {
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*len(s))
	if !littleEndian {
		c := make([]byte, len(b))
		for i, v := range s {
			binary.LittleEndian.PutUint16(c[2*i:], v)
		}
		return c
	}
	return b
}

// syncDir makes a rename durable where the system supports syncing a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// SessionFingerprint is the fingerprint a session file carries: the model file's (gguf
// File.Fingerprint) with the cache's geometry, so that a file is loaded only into the same
// model and a cache of the same shape.
func SessionFingerprint(model [32]byte, c *Cache) Fingerprint {
	h := sha256.New()
	h.Write(model[:])
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], uint64(c.Layers))
	binary.LittleEndian.PutUint64(b[8:], uint64(c.Dim))
	h.Write(b[:])
	var fp Fingerprint
	copy(fp[:], h.Sum(nil))
	return fp
}
