package convert

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/regolith/regolith/quant"
)

// MaxHeaderBytes bounds a safetensors JSON header; the format's own reader refuses more than
// 100 MB too.
const MaxHeaderBytes = 100 << 20

// maxDims bounds a tensor's rank.
const maxDims = 8

// dtypeSize is the element size of each safetensors dtype.
var dtypeSize = map[string]int64{
	"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
	"U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1,
}

// Tensor is one entry of a safetensors header.
type Tensor struct {
	Name  string
	DType string
	Shape []int64
	Begin int64 // byte offset in the data section
	End   int64
}

// Elements is the product of the shape (1 for a scalar).
func (t *Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Safetensors is an open safetensors file: its header, and positional reads of tensor data.
type Safetensors struct {
	Tensors  []Tensor // sorted by offset
	Metadata map[string]string
	r        io.ReaderAt
	closer   io.Closer
	dataOff  int64
	byName   map[string]int
}

// OpenSafetensors opens and validates a .safetensors file. Tensor data is read on demand.
func OpenSafetensors(path string) (*Safetensors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	s, err := ReadSafetensors(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.closer = f
	return s, nil
}

// Close closes the file opened by OpenSafetensors.
func (s *Safetensors) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// ReadSafetensors parses the header of a safetensors stream of size bytes and checks every
// tensor against it: known dtype, rank at most 8, non-negative dimensions, byte range inside
// the data section and equal to shape × element size, no two tensors overlapping. Nothing
// larger than the header (itself bounded by size and MaxHeaderBytes) is allocated.
func ReadSafetensors(r io.ReaderAt, size int64) (*Safetensors, error) {
	if size < 8 {
		return nil, fmt.Errorf("safetensors: %d bytes is too short for a header", size)
	}
	var lb [8]byte
	if _, err := r.ReadAt(lb[:], 0); err != nil {
		return nil, fmt.Errorf("safetensors: reading the header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lb[:])
	if n > MaxHeaderBytes || n > uint64(size-8) {
		return nil, fmt.Errorf("safetensors: header of %d bytes in a %d-byte file (limit %d)", n, size, int64(MaxHeaderBytes))
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("safetensors: reading the %d-byte header: %w", n, err)
	}
	s, err := parseHeader(hdr, size-8-int64(n))
	if err != nil {
		return nil, err
	}
	s.r = r
	s.dataOff = 8 + int64(n)
	return s, nil
}

type rawEntry struct {
	DType   string          `json:"dtype"`
	Shape   json.RawMessage `json:"shape"`
	Offsets json.RawMessage `json:"data_offsets"`
}

func parseHeader(hdr []byte, dataLen int64) (*Safetensors, error) {
	s := &Safetensors{byName: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(hdr))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("safetensors: header is not a JSON object")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("safetensors: header: %w", err)
		}
		name, ok := kt.(string)
		if !ok {
			return nil, fmt.Errorf("safetensors: header key %v is not a string", kt)
		}
		if name == "__metadata__" {
			if s.Metadata != nil {
				return nil, fmt.Errorf("safetensors: __metadata__ appears twice")
			}
			s.Metadata = map[string]string{}
			if err := dec.Decode(&s.Metadata); err != nil {
				return nil, fmt.Errorf("safetensors: __metadata__: %w", err)
			}
			continue
		}
		var e rawEntry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("safetensors: tensor %q appears twice", name)
		}
		t, err := checkEntry(name, &e, dataLen)
		if err != nil {
			return nil, err
		}
		s.byName[name] = len(s.Tensors)
		s.Tensors = append(s.Tensors, t)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, fmt.Errorf("safetensors: header object not closed")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("safetensors: data after the header object")
	}
	sort.Slice(s.Tensors, func(i, j int) bool {
		a, b := &s.Tensors[i], &s.Tensors[j]
		if a.Begin != b.Begin {
			return a.Begin < b.Begin
		}
		return a.End < b.End
	})
	var prevEnd int64
	var prev string
	for i := range s.Tensors {
		t := &s.Tensors[i]
		s.byName[t.Name] = i
		if t.End == t.Begin {
			continue
		}
		if t.Begin < prevEnd {
			return nil, fmt.Errorf("safetensors: tensors %q and %q overlap", prev, t.Name)
		}
		prevEnd, prev = t.End, t.Name
	}
	return s, nil
}

// smallInts decodes a JSON array of at most max integers, refusing longer input before
// allocating for it.
func smallInts(raw json.RawMessage, max int, what string) ([]int64, error) {
	if len(raw) > 32*max+16 || bytes.Count(raw, []byte{','}) >= max {
		return nil, fmt.Errorf("%s has more than %d entries", what, max)
	}
	var v []int64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	return v, nil
}

func checkEntry(name string, e *rawEntry, dataLen int64) (Tensor, error) {
	t := Tensor{Name: name, DType: e.DType}
	es, ok := dtypeSize[e.DType]
	if !ok {
		return t, fmt.Errorf("safetensors: tensor %q: unknown dtype %q", name, e.DType)
	}
	shape, err := smallInts(e.Shape, maxDims, "shape")
	if err != nil {
		return t, fmt.Errorf("safetensors: tensor %q: %v", name, err)
	}
	offs, err := smallInts(e.Offsets, 2, "data_offsets")
	if err != nil || len(offs) != 2 {
		return t, fmt.Errorf("safetensors: tensor %q: data_offsets must be two integers", name)
	}
	t.Shape, t.Begin, t.End = shape, offs[0], offs[1]
	if t.Begin < 0 || t.End < t.Begin || t.End > dataLen {
		return t, fmt.Errorf("safetensors: tensor %q: data_offsets [%d, %d] outside the %d-byte data section", name, t.Begin, t.End, dataLen)
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return t, fmt.Errorf("safetensors: tensor %q: negative dimension in shape %v", name, shape)
		}
		if d != 0 && n > dataLen/es/d {
			return t, fmt.Errorf("safetensors: tensor %q: shape %v is larger than the data section", name, shape)
		}
		n *= d
	}
	if n*es != t.End-t.Begin {
		return t, fmt.Errorf("safetensors: tensor %q: %s %v needs %d bytes, data_offsets give %d", name, e.DType, shape, n*es, t.End-t.Begin)
	}
	return t, nil
}

// Get returns the tensor of that name.
func (s *Safetensors) Get(name string) (*Tensor, bool) {
	i, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return &s.Tensors[i], true
}

// Raw reads the bytes of elements [from, to) of t.
func (s *Safetensors) Raw(t *Tensor, from, to int64) ([]byte, error) {
	es := dtypeSize[t.DType]
	if from < 0 || to < from || to > t.Elements() {
		return nil, fmt.Errorf("safetensors: tensor %q: elements [%d, %d) out of range", t.Name, from, to)
	}
	b := make([]byte, (to-from)*es)
	if _, err := s.r.ReadAt(b, s.dataOff+t.Begin+from*es); err != nil {
		return nil, fmt.Errorf("safetensors: reading tensor %q: %w", t.Name, err)
	}
	return b, nil
}

// Float32 reads elements [from, to) of t as float32; t must be F32, F16, BF16 or F64.
func (s *Safetensors) Float32(t *Tensor, from, to int64) ([]float32, error) {
	switch t.DType {
	case "F32", "F16", "BF16", "F64":
	default:
		return nil, fmt.Errorf("safetensors: tensor %q: cannot read %s as float", t.Name, t.DType)
	}
	b, err := s.Raw(t, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]float32, to-from)
	le := binary.LittleEndian
	for i := range out {
		switch t.DType {
		case "F32":
			out[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		case "F16":
			out[i] = quant.FP16ToFP32(le.Uint16(b[2*i:]))
		case "BF16":
			out[i] = quant.BF16ToFP32(le.Uint16(b[2*i:]))
		case "F64":
			out[i] = float32(math.Float64frombits(le.Uint64(b[8*i:])))
		}
	}
	return out, nil
}
