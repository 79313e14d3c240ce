// Package trace records the router's decisions of a run (routing traces), reads them back
// with every size checked, and replays them against simulated expert caches: eviction
// policies (lru, lfu, ema, near_pick_ema, inverse_router_ema, and Belady's offline MIN as
// the bound), cache-aware routing (package moce) in closed loop against the simulated
// residency, and pruned keep-maps (DESIGN §6).
//
// # File format (version 1, little-endian)
//
// Header:
//
//	magic        [8]byte  "RGLTRACE"
//	version      u32      1
//	flags        u32      0
//	fingerprint  [32]byte SHA-256 of the GGUF file's bytes before its data section (header,
//	                      metadata and tensor infos) followed by the file size as u64
//	model size   u64      the GGUF file's size in bytes
//	n_layer      u32      layers with routed experts (1…4096)
//	n_expert     u32      experts per layer (1…65536)
//	k            u32      experts used per token (1…n_expert)
//	top_n        u32      router candidates stored per token and layer (k…n_expert)
//	expert bytes n_layer × u64: one routed expert's bytes (gate+up+down) in each layer
//	name         u16 length + bytes (≤ 1024): the model's general.name
//
// Then records, each starting with a tag byte:
//
//	'R' request   u32 prompt tokens (0: not known). A request (a turn) starts here.
//	'C' chunk     u8 kind (0 prompt, 1 decode), u32 position of its first token, u32 tokens T,
//	              then for each layer 0…n_layer−1, for each of the T tokens, one entry:
//	              top_n candidate ids (u8 when n_expert ≤ 256, else u16), their top_n raw
//	              router logits (float32, sorted descending, ties by ascending id), and the
//	              k experts the model chose, in rank order (ids as above).
//	'E' end       u64 tokens, u64 chunks, u64 requests: totals, which must match. Nothing
//	              follows it; a trace without it is truncated.
//
// A prompt chunk is one forward pass over several prompt tokens; a decode step is a chunk
// of one generated token.
package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/model"
)

// Magic starts every trace file.
const Magic = "RGLTRACE"

// Version is the format version this package writes and reads.
const Version = 1

// Limits the reader enforces on a header.
const (
	MaxLayers  = 4096
	MaxExperts = 65536
	MaxKeys    = 1 << 22 // n_layer × n_expert: the replay's per-expert state
	maxName    = 1024
)

// Chunk kinds.
const (
	Prompt = 0 // a forward pass over prompt tokens
	Decode = 1 // one generated token
)

const (
	tagRequest = 'R'
	tagChunk   = 'C'
	tagEnd     = 'E'
)

// Header describes the model a trace was recorded from.
type Header struct {
	Fingerprint [32]byte
	ModelSize   uint64
	NLayer      int
	NExpert     int
	K           int
	TopN        int
	ExpertBytes []int64 // per layer: one expert's gate+up+down bytes
	Name        string
}

// idWidth is the bytes of one expert id in the file.
func (h *Header) idWidth() int {
	if h.NExpert <= 256 {
		return 1
	}
	return 2
}

// entryBytes is the size of one token's entry for one layer.
func (h *Header) entryBytes() int64 {
	w := int64(h.idWidth())
	return int64(h.TopN)*(w+4) + int64(h.K)*w
}

func (h *Header) validate() error {
	switch {
	case h.NLayer < 1 || h.NLayer > MaxLayers:
		return fmt.Errorf("trace: %d layers (want 1…%d)", h.NLayer, MaxLayers)
	case h.NExpert < 1 || h.NExpert > MaxExperts:
		return fmt.Errorf("trace: %d experts per layer (want 1…%d)", h.NExpert, MaxExperts)
	case h.NLayer*h.NExpert > MaxKeys:
		return fmt.Errorf("trace: %d layers × %d experts exceed %d", h.NLayer, h.NExpert, MaxKeys)
	case h.K < 1 || h.K > h.NExpert:
		return fmt.Errorf("trace: k = %d experts used of %d", h.K, h.NExpert)
	case h.TopN < h.K || h.TopN > h.NExpert:
		return fmt.Errorf("trace: top_n = %d candidates (want k = %d … n_expert = %d)", h.TopN, h.K, h.NExpert)
	case len(h.ExpertBytes) != h.NLayer:
		return fmt.Errorf("trace: %d expert sizes for %d layers", len(h.ExpertBytes), h.NLayer)
	case len(h.Name) > maxName:
		return fmt.Errorf("trace: model name of %d bytes (at most %d)", len(h.Name), maxName)
	}
	for l, b := range h.ExpertBytes {
		if b <= 0 || b > 1<<40 {
			return fmt.Errorf("trace: layer %d: expert size %d bytes", l, b)
		}
	}
	return nil
}

func (h *Header) encode() []byte {
	b := make([]byte, 0, 80+8*h.NLayer+len(h.Name))
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, h.Fingerprint[:]...)
	b = binary.LittleEndian.AppendUint64(b, h.ModelSize)
	for _, v := range []int{h.NLayer, h.NExpert, h.K, h.TopN} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	for _, v := range h.ExpertBytes {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h.Name)))
	return append(b, h.Name...)
}

// fixedHeader is the header's size before the per-layer sizes.
const fixedHeader = 8 + 4 + 4 + 32 + 8 + 4*4

// decodeHeader reads and validates a header from r (size bytes in all); it returns the
// header and its length in bytes.
func decodeHeader(r io.ReaderAt, size int64) (*Header, int64, error) {
	if size < fixedHeader {
		return nil, 0, fmt.Errorf("trace: %d bytes is too short for a header: %w", size, io.ErrUnexpectedEOF)
	}
	var fb [fixedHeader]byte
	if _, err := r.ReadAt(fb[:], 0); err != nil {
		return nil, 0, fmt.Errorf("trace: reading the header: %w", err)
	}
	if string(fb[:8]) != Magic {
		return nil, 0, errors.New("trace: not a regolith trace (bad magic)")
	}
	le := binary.LittleEndian
	if v := le.Uint32(fb[8:]); v != Version {
		return nil, 0, fmt.Errorf("trace: format version %d (this build reads version %d)", v, Version)
	}
	if f := le.Uint32(fb[12:]); f != 0 {
		return nil, 0, fmt.Errorf("trace: unknown flags %#x", f)
	}
	h := &Header{}
	copy(h.Fingerprint[:], fb[16:48])
	h.ModelSize = le.Uint64(fb[48:])
	u := func(off int) int { return int(le.Uint32(fb[off:])) }
	h.NLayer, h.NExpert, h.K, h.TopN = u(56), u(60), u(64), u(68)
	if h.NLayer < 1 || h.NLayer > MaxLayers {
		return nil, 0, fmt.Errorf("trace: %d layers (want 1…%d)", h.NLayer, MaxLayers)
	}
	rest := int64(8*h.NLayer + 2)
	if size-fixedHeader < rest {
		return nil, 0, fmt.Errorf("trace: header ends early (%d layer sizes): %w", h.NLayer, io.ErrUnexpectedEOF)
	}
	vb := make([]byte, rest)
	if _, err := r.ReadAt(vb, fixedHeader); err != nil {
		return nil, 0, fmt.Errorf("trace: reading the header: %w", err)
	}
	h.ExpertBytes = make([]int64, h.NLayer)
	for l := range h.ExpertBytes {
		v := le.Uint64(vb[8*l:])
		if v > 1<<40 {
			return nil, 0, fmt.Errorf("trace: layer %d: expert size %d bytes", l, v)
		}
		h.ExpertBytes[l] = int64(v)
	}
	nl := int64(le.Uint16(vb[8*h.NLayer:]))
	n := fixedHeader + rest + nl
	if nl > maxName || n > size {
		return nil, 0, fmt.Errorf("trace: model name of %d bytes past the header's end: %w", nl, io.ErrUnexpectedEOF)
	}
	name := make([]byte, nl)
	if _, err := r.ReadAt(name, fixedHeader+rest); err != nil {
		return nil, 0, fmt.Errorf("trace: reading the header: %w", err)
	}
	h.Name = string(name)
	if err := h.validate(); err != nil {
		return nil, 0, err
	}
	return h, n, nil
}

// HeaderFor is the header of traces of model m loaded from f, storing topN candidates per
// token and layer (0: 64, or all experts if fewer; capped at n_expert, raised to k).
func HeaderFor(m *model.Model, f *gguf.File, topN int) (Header, error) {
	c := m.Cfg
	if len(m.Layers) == 0 || c.NExpert <= 0 || c.NExpertUsed <= 0 {
		return Header{}, errors.New("trace: the model has no routed experts")
	}
	if topN <= 0 {
		topN = 64
	}
	topN = max(c.NExpertUsed, min(topN, c.NExpert))
	fp, err := f.Fingerprint()
	if err != nil {
		return Header{}, err
	}
	h := Header{Fingerprint: fp, ModelSize: f.Size, NLayer: len(m.Layers), NExpert: c.NExpert, K: c.NExpertUsed, TopN: topN}
	for l := range m.Layers {
		L := &m.Layers[l]
		if L.Gate.N != c.NExpert {
			return Header{}, fmt.Errorf("trace: layer %d has %d experts, the model says %d", l, L.Gate.N, c.NExpert)
		}
		h.ExpertBytes = append(h.ExpertBytes, int64(L.Gate.ExpertBytes)+int64(L.Up.ExpertBytes)+int64(L.Down.ExpertBytes))
	}
	h.Name, _ = f.String("general.name")
	if len(h.Name) > maxName {
		h.Name = h.Name[:maxName]
	}
	return h, h.validate()
}

// lessCand orders candidates: larger logit first, NaN last, ties by lower id.
func lessCand(za, zb float32, a, b int) bool {
	na, nb := math.IsNaN(float64(za)), math.IsNaN(float64(zb))
	switch {
	case na != nb:
		return nb
	case !na && za != zb:
		return za > zb
	}
	return a < b
}
