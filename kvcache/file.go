package kvcache

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"unsafe"
)

// Session files hold a cache's filled positions, the token ids they came from and, for a
// hybrid model (qwen3next), its recurrent state (DESIGN §11). Version 2:
//
//	header:  magic "RGKVSES1" | version u32 = 2 | layers u32 | dim u32 | n u32 |
//	         fingerprint [32]byte |
//	         recLayers u32 | convFloats u32 | ssmFloats u32 | states u32 |
//	         states × position u32 | n × token id i32 | CRC-32C of the above u32
//	payload: for each layer, K then V: n×dim F16 values (little endian) | CRC-32C u32
//	         then for each state (ascending positions), for each recurrent layer:
//	         convFloats F32 values | CRC-32C u32, ssmFloats F32 values | CRC-32C u32
//	trailer: "RGKVEND1"
//
// A cache without recurrent state writes recLayers = convFloats = ssmFloats = states = 0.
// Version 1 (written before recurrent state was saved) lacks the four recurrent fields, the
// positions and the state sections; it still loads into a cache without recurrent state and
// is refused, as holding none, by one with.
//
// Recurrent state. A Gated DeltaNet state is valid at one position only: the one it was
// computed up to. A file of n positions holds the state at n (the live state or the
// checkpoint there, see Resumable) and every checkpoint the cache had before n, with their
// positions; loading makes them the cache's checkpoints again. A later prompt that shares
// only m < n of the file's tokens truncates to m, which restores the latest saved
// checkpoint at or before m (or the empty state) and recomputes from there, exactly as in
// RAM. Each saved state costs Recurrent.Bytes() on disk as in RAM (Qwen3-Next-80B-A3B:
// ≈ 79 MB; the fixtures: ≈ 0.4 MB), so a file holds at most MaxCheckpoints+1 of them on top
// of its n positions of keys and values.
//
// A file is written under a temporary name, synced, and renamed into place, so a reader
// sees either the whole old file or the whole new one. Every section is checksummed; a
// file that fails a check is reported as *CorruptError.

const (
	fileMagic   = "RGKVSES1"
	fileTrailer = "RGKVEND1"
	fileVersion = 2
	// MaxFileTokens bounds the token count a header may claim (no unbounded allocation on
	// a hostile file).
	MaxFileTokens = 1 << 24
	// MaxFileStates bounds the recurrent states a header may claim.
	MaxFileStates = 1 << 12
	headerFixed   = 8 + 4*4 + 32
	recFixed      = 4 * 4 // version 2: recurrent geometry and state count
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Fingerprint identifies the model (and cache geometry) a session belongs to.
type Fingerprint [32]byte

// Header is a session file's header.
type Header struct {
	Version     uint32
	Layers, Dim int
	Fingerprint Fingerprint
	Tokens      []int32 // one per cached position
	// Version 2, a cache with recurrent state: its geometry, and the positions holding a
	// saved state (ascending; the last is len(Tokens)).
	RecLayers, ConvFloats, SSMFloats int
	States                           []int
}

// PayloadBytes is the size of the payload (K/V and recurrent sections) the header describes.
func (h *Header) PayloadBytes() int64 {
	kv := int64(h.Layers) * 2 * (int64(len(h.Tokens))*int64(h.Dim)*2 + 4)
	return kv + int64(len(h.States))*int64(h.RecLayers)*(4*int64(h.ConvFloats)+4*int64(h.SSMFloats)+8)
}

// FileBytes is the size a complete file with this header has.
func (h *Header) FileBytes() int64 {
	n := int64(headerFixed) + 4*int64(len(h.Tokens)) + 4 + h.PayloadBytes() + int64(len(fileTrailer))
	if h.Version >= 2 {
		n += recFixed + 4*int64(len(h.States))
	}
	return n
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

// Resumable is the largest position p <= min(n, N) the cache can resume from: where
// Truncate(n) goes back to (without truncating), and where a session file of at most n
// positions can end (Save takes tokens[:Resumable(n)]). Without recurrent state it is
// min(n, N); with one, the latest position <= n that has its state (the live state, or a
// checkpoint), or 0 when none does.
func (c *Cache) Resumable(n int) int {
	n = max(min(n, c.N), 0)
	r := c.Rec
	if r == nil {
		return n
	}
	best := 0
	if r.N >= 0 && r.N <= n {
		best = r.N
	}
	for _, ck := range r.ckpts {
		if ck.pos <= n && ck.pos > best {
			best = ck.pos
		}
	}
	return best
}

// Save writes the first len(tokens) positions of the cache (len(tokens) <= N) with their
// token ids to path, crash-safely: a temporary file in the same directory, fsynced, then
// renamed over path (and the directory synced). A cache with recurrent state must have a
// state at len(tokens) (see Resumable); the file also holds the checkpoints before it.
func (c *Cache) Save(path string, fp Fingerprint, tokens []int32) (err error) {
	n := len(tokens)
	if n > c.N {
		return fmt.Errorf("kvcache: save: %d tokens but only %d positions are cached", n, c.N)
	}
	if n > MaxFileTokens {
		return fmt.Errorf("kvcache: save: %d tokens exceed the file limit of %d", n, MaxFileTokens)
	}
	var states []int
	var recLayers, convFloats, ssmFloats int
	if r := c.Rec; r != nil {
		if n > 0 {
			if _, _, ok := r.stateAt(n); !ok {
				return fmt.Errorf("kvcache: save: no recurrent state at position %d (the latest is at %d)", n, c.Resumable(n))
			}
		}
		states = r.savedStates(n)
		recLayers, convFloats, ssmFloats = len(r.Conv), len(r.Conv[0]), len(r.SSM[0])
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
	hb := make([]byte, headerFixed+recFixed+4*len(states)+4*n)
	copy(hb, fileMagic)
	le := binary.LittleEndian
	le.PutUint32(hb[8:], fileVersion)
	le.PutUint32(hb[12:], uint32(c.Layers))
	le.PutUint32(hb[16:], uint32(c.Dim))
	le.PutUint32(hb[20:], uint32(n))
	copy(hb[24:], fp[:])
	le.PutUint32(hb[56:], uint32(recLayers))
	le.PutUint32(hb[60:], uint32(convFloats))
	le.PutUint32(hb[64:], uint32(ssmFloats))
	le.PutUint32(hb[68:], uint32(len(states)))
	o := headerFixed + recFixed
	for _, p := range states {
		le.PutUint32(hb[o:], uint32(p))
		o += 4
	}
	for _, t := range tokens {
		le.PutUint32(hb[o:], uint32(t))
		o += 4
	}
	hw.Write(hb)
	if err = writeU32(w, crc.Sum32()); err != nil {
		return fmt.Errorf("kvcache: save %s: %w", path, err)
	}
	section := func(raw []byte) error {
		if _, err := w.Write(raw); err != nil {
			return err
		}
		return writeU32(w, crc32.Checksum(raw, castagnoli))
	}
	for l := 0; l < c.Layers; l++ {
		for _, s := range [][]uint16{c.K[l][:n*c.Dim], c.V[l][:n*c.Dim]} {
			if err = section(halvesBytes(s)); err != nil {
				return fmt.Errorf("kvcache: save %s: %w", path, err)
			}
		}
	}
	for _, p := range states {
		conv, ssm, _ := c.Rec.stateAt(p)
		for l := range conv {
			if err = section(floatsBytes(conv[l])); err == nil {
				err = section(floatsBytes(ssm[l]))
			}
			if err != nil {
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
	le := binary.LittleEndian
	var b [headerFixed + recFixed]byte
	if _, err := io.ReadFull(tr, b[:headerFixed]); err != nil {
		return nil, &CorruptError{path, "short header"}
	}
	if string(b[:8]) != fileMagic {
		return nil, &CorruptError{path, "bad magic"}
	}
	h := &Header{Version: le.Uint32(b[8:])}
	if h.Version != 1 && h.Version != 2 {
		return nil, &CorruptError{path, fmt.Sprintf("unsupported version %d", h.Version)}
	}
	layers, dim, n := le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:])
	if layers == 0 || layers > 1<<16 || dim == 0 || dim > 1<<20 || n > MaxFileTokens {
		return nil, &CorruptError{path, fmt.Sprintf("absurd geometry: %d layers × %d dims × %d positions", layers, dim, n)}
	}
	h.Layers, h.Dim = int(layers), int(dim)
	copy(h.Fingerprint[:], b[24:])
	fixed := int64(headerFixed)
	var nStates uint32
	if h.Version >= 2 {
		if _, err := io.ReadFull(tr, b[headerFixed:]); err != nil {
			return nil, &CorruptError{path, "short header"}
		}
		rl, cf, sf := le.Uint32(b[56:]), le.Uint32(b[60:]), le.Uint32(b[64:])
		nStates = le.Uint32(b[68:])
		if rl > 1<<16 || cf > 1<<28 || sf > 1<<28 || nStates > MaxFileStates ||
			(rl == 0) != (cf == 0) || (rl == 0) != (sf == 0) || (rl == 0 && nStates != 0) ||
			(rl != 0 && (n == 0) != (nStates == 0)) {
			return nil, &CorruptError{path, fmt.Sprintf("absurd recurrent state: %d layers × (%d + %d) floats, %d states for %d positions", rl, cf, sf, nStates, n)}
		}
		h.RecLayers, h.ConvFloats, h.SSMFloats = int(rl), int(cf), int(sf)
		fixed += recFixed
	}
	// The positions and the token list must fit in the file before they are allocated.
	if fixed+4*int64(nStates)+4*int64(n)+4 > size {
		return nil, &CorruptError{path, fmt.Sprintf("header claims %d tokens and %d states, more than the file holds", n, nStates)}
	}
	tb := make([]byte, 4*int(nStates)+4*int(n))
	if _, err := io.ReadFull(tr, tb); err != nil {
		return nil, &CorruptError{path, "short token list"}
	}
	sum := crc.Sum32()
	var cb [4]byte
	if _, err := io.ReadFull(r, cb[:]); err != nil {
		return nil, &CorruptError{path, "short header"}
	}
	if le.Uint32(cb[:]) != sum {
		return nil, &CorruptError{path, "header checksum mismatch"}
	}
	if nStates > 0 {
		h.States = make([]int, nStates)
		for i := range h.States {
			h.States[i] = int(le.Uint32(tb[4*i:]))
			if h.States[i] <= 0 || (i > 0 && h.States[i] <= h.States[i-1]) {
				return nil, &CorruptError{path, "recurrent state positions are not ascending"}
			}
		}
		if h.States[nStates-1] != int(n) {
			return nil, &CorruptError{path, fmt.Sprintf("the last recurrent state is at %d, not at the file's end %d", h.States[nStates-1], n)}
		}
		tb = tb[4*nStates:]
	}
	h.Tokens = make([]int32, n)
	for i := range h.Tokens {
		h.Tokens[i] = int32(le.Uint32(tb[4*i:]))
	}
	return h, nil
}

// Load reads a session file into the cache, which must have the file's geometry (recurrent
// state included) and room for its positions, and whose fingerprint must match. It returns
// the file's tokens; on success positions 0..len(tokens)-1 hold the file's state, N =
// len(tokens), and a recurrent state is the file's, with the file's checkpoints. On any
// failure after the payload started to arrive, N is 0 and a recurrent state is reset (the
// cache's old state is gone, the file's never half-used).
func (c *Cache) Load(path string, fp Fingerprint) (toks []int32, err error) {
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
	if h.Layers != c.Layers || h.Dim != c.Dim {
		return nil, fmt.Errorf("kvcache: %s: geometry %d layers × %d dims, cache has %d × %d", path, h.Layers, h.Dim, c.Layers, c.Dim)
	}
	if rc := c.Rec; rc == nil && h.RecLayers != 0 {
		return nil, fmt.Errorf("kvcache: %s: holds a recurrent state, and this model has none", path)
	} else if rc != nil {
		if h.Version < 2 {
			return nil, fmt.Errorf("kvcache: %s: a version %d session file holds no recurrent (Gated DeltaNet) state; this model needs version 2", path, h.Version)
		}
		if h.RecLayers != len(rc.Conv) || h.ConvFloats != len(rc.Conv[0]) || h.SSMFloats != len(rc.SSM[0]) {
			return nil, fmt.Errorf("kvcache: %s: recurrent state %d layers × (%d + %d) floats, the model's is %d × (%d + %d)",
				path, h.RecLayers, h.ConvFloats, h.SSMFloats, len(rc.Conv), len(rc.Conv[0]), len(rc.SSM[0]))
		}
	}
	n := len(h.Tokens)
	if n > c.Ctx {
		return nil, fmt.Errorf("kvcache: %s: %d positions do not fit the context of %d", path, n, c.Ctx)
	}
	c.N = 0
	if c.Rec != nil {
		c.Rec.N = -1
		defer func() {
			if err != nil {
				c.Rec.Reset()
			}
		}()
	}
	var cb [4]byte
	section := func(raw []byte, what string) error {
		if _, err := io.ReadFull(r, raw); err != nil {
			return &CorruptError{path, "short payload in " + what}
		}
		if _, err := io.ReadFull(r, cb[:]); err != nil {
			return &CorruptError{path, "short payload in " + what}
		}
		if crc32.Checksum(raw, castagnoli) != binary.LittleEndian.Uint32(cb[:]) {
			return &CorruptError{path, "payload checksum mismatch in " + what}
		}
		return nil
	}
	for l := 0; l < c.Layers; l++ {
		for _, s := range [][]uint16{c.K[l][:n*c.Dim], c.V[l][:n*c.Dim]} {
			raw := halvesBytes(s)
			if !littleEndian {
				raw = make([]byte, 2*len(s))
			}
			if err := section(raw, fmt.Sprintf("layer %d", l)); err != nil {
				return nil, err
			}
			if !littleEndian {
				for i := range s {
					s[i] = binary.LittleEndian.Uint16(raw[2*i:])
				}
			}
		}
	}
	if c.Rec != nil {
		err := c.Rec.restored(h.States, func(i int, conv, ssm [][]float32) error {
			for l := range conv {
				for _, s := range [][]float32{conv[l], ssm[l]} {
					raw := floatsBytes(s)
					if !littleEndian {
						raw = make([]byte, 4*len(s))
					}
					if err := section(raw, fmt.Sprintf("recurrent layer %d of the state at %d", l, h.States[i])); err != nil {
						return err
					}
					if !littleEndian {
						for j := range s {
							s[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
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

// floatsBytes views s as little-endian bytes (a converted copy on big-endian machines).
func floatsBytes(s []float32) []byte {
	if len(s) == 0 {
		return nil
	}
	if !littleEndian {
		c := make([]byte, 4*len(s))
		for i, v := range s {
			binary.LittleEndian.PutUint32(c[4*i:], math.Float32bits(v))
		}
		return c
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}

// syncDir makes a rename durable where the system supports syncing a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// SessionFingerprint is the fingerprint a session file carries: the model file's (gguf
// File.Fingerprint) with the cache's geometry, recurrent state included, so that a file is
// loaded only into the same model and a cache of the same shape. (A cache without
// recurrent state hashes as it did before recurrent state was saved: its files keep
// matching.)
func SessionFingerprint(model [32]byte, c *Cache) Fingerprint {
	h := sha256.New()
	h.Write(model[:])
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], uint64(c.Layers))
	binary.LittleEndian.PutUint64(b[8:], uint64(c.Dim))
	h.Write(b[:])
	if r := c.Rec; r != nil {
		var rb [32]byte
		copy(rb[:], "DeltaNet")
		binary.LittleEndian.PutUint64(rb[8:], uint64(len(r.Conv)))
		binary.LittleEndian.PutUint64(rb[16:], uint64(len(r.Conv[0])))
		binary.LittleEndian.PutUint64(rb[24:], uint64(len(r.SSM[0])))
		h.Write(rb[:])
	}
	var fp Fingerprint
	copy(fp[:], h.Sum(nil))
	return fp
}
