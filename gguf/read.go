package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/regolith/regolith/quant"
)

// Limits that no real model comes near; they bound work on hostile input.
const (
	maxDims       = 4 // GGML_MAX_DIMS
	maxArrayDepth = 8
	maxAlignment  = 1 << 20 // real files use 32 (or a page for direct I/O)
)

// File is a parsed GGUF file. When opened with Open, its tensor data is a read-only
// memory map of the file; close it with Close.
type File struct {
	Version    uint32
	KV         []KV
	Tensors    []TensorInfo
	Alignment  uint64
	DataOffset uint64 // absolute offset of the data section
	Size       uint64 // file size in bytes

	data     []byte // the whole file (mmap or in memory)
	unpadded bool   // a tensor-less file that ends without padding
	osf      *os.File
	unmap    func() error
	kvIndex  map[string]int
	tIndex   map[string]int
}

// ErrTruncated is wrapped by errors about data that ends early.
var ErrTruncated = errors.New("truncated")

type decoder struct {
	b   []byte
	pos uint64
}

func (d *decoder) remaining() uint64 { return uint64(len(d.b)) - d.pos }

func (d *decoder) need(n uint64, what string) error {
	if n > d.remaining() {
		return fmt.Errorf("%s at offset %d needs %d bytes, %d left: %w", what, d.pos, n, d.remaining(), ErrTruncated)
	}
	return nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(d.b[d.pos:])
	d.pos += 4
	return v, nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(d.b[d.pos:])
	d.pos += 8
	return v, nil
}

func (d *decoder) str(what string) (string, error) {
	n, err := d.u64(what + " length")
	if err != nil {
		return "", err
	}
	if err := d.need(n, what); err != nil {
		return "", err
	}
	s := string(d.b[d.pos : d.pos+n])
	d.pos += n
	return s, nil
}

// scalar decodes one fixed-size value of type t (the caller checked the bytes exist).
func scalar(b []byte, t ValueType) any {
	switch t {
	case TypeUint8:
		return b[0]
	case TypeInt8:
		return int8(b[0])
	case TypeBool:
		return b[0] != 0
	case TypeUint16:
		return binary.LittleEndian.Uint16(b)
	case TypeInt16:
		return int16(binary.LittleEndian.Uint16(b))
	case TypeUint32:
		return binary.LittleEndian.Uint32(b)
	case TypeInt32:
		return int32(binary.LittleEndian.Uint32(b))
	case TypeFloat32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case TypeUint64:
		return binary.LittleEndian.Uint64(b)
	case TypeInt64:
		return int64(binary.LittleEndian.Uint64(b))
	case TypeFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return nil
}

func (d *decoder) value(t ValueType, what string, depth int) (any, error) {
	switch {
	case t == TypeString:
		return d.str(what)
	case t == TypeArray:
		if depth >= maxArrayDepth {
			return nil, fmt.Errorf("%s: arrays nested deeper than %d", what, maxArrayDepth)
		}
		et, err := d.u32(what + " element type")
		if err != nil {
			return nil, err
		}
		n, err := d.u64(what + " array length")
		if err != nil {
			return nil, err
		}
		return d.array(ValueType(et), n, what, depth+1)
	case t.size() > 0:
		if err := d.need(uint64(t.size()), what); err != nil {
			return nil, err
		}
		v := scalar(d.b[d.pos:], t)
		d.pos += uint64(t.size())
		return v, nil
	}
	return nil, fmt.Errorf("%s: unknown value type %d", what, uint32(t))
}

func (d *decoder) array(et ValueType, n uint64, what string, depth int) (Array, error) {
	a := Array{Elem: et}
	// Every element takes at least this many bytes: the length bound comes before allocation.
	minSize := uint64(et.size())
	switch et {
	case TypeString, TypeArray:
		minSize = 8
		if et == TypeArray {
			minSize = 12
		}
	default:
		if minSize == 0 {
			return a, fmt.Errorf("%s: unknown array element type %d", what, uint32(et))
		}
	}
	if n > d.remaining()/minSize {
		return a, fmt.Errorf("%s: array of %d %s elements needs at least %d bytes, %d left: %w",
			what, n, et, n*minSize, d.remaining(), ErrTruncated)
	}
	if et.size() > 0 {
		raw := d.b[d.pos : d.pos+n*minSize]
		d.pos += n * minSize
		a.Data = decodeScalars(raw, et, int(n))
		return a, nil
	}
	if et == TypeString {
		s := make([]string, n)
		for i := range s {
			v, err := d.str(what)
			if err != nil {
				return a, err
			}
			s[i] = v
		}
		a.Data = s
		return a, nil
	}
	s := make([]Array, n)
	for i := range s {
		v, err := d.value(TypeArray, what, depth)
		if err != nil {
			return a, err
		}
		s[i] = v.(Array)
	}
	a.Data = s
	return a, nil
}

func decodeScalars(raw []byte, t ValueType, n int) any {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return append([]uint8(nil), raw...)
	case TypeInt8:
		s := make([]int8, n)
		for i := range s {
			s[i] = int8(raw[i])
		}
		return s
	case TypeBool:
		s := make([]bool, n)
		for i := range s {
			s[i] = raw[i] != 0
		}
		return s
	case TypeUint16:
		s := make([]uint16, n)
		for i := range s {
			s[i] = le.Uint16(raw[2*i:])
		}
		return s
	case TypeInt16:
		s := make([]int16, n)
		for i := range s {
			s[i] = int16(le.Uint16(raw[2*i:]))
		}
		return s
	case TypeUint32:
		s := make([]uint32, n)
		for i := range s {
			s[i] = le.Uint32(raw[4*i:])
		}
		return s
	case TypeInt32:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(le.Uint32(raw[4*i:]))
		}
		return s
	case TypeFloat32:
		s := make([]float32, n)
		for i := range s {
			s[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return s
	case TypeUint64:
		s := make([]uint64, n)
		for i := range s {
			s[i] = le.Uint64(raw[8*i:])
		}
		return s
	case TypeInt64:
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(le.Uint64(raw[8*i:]))
		}
		return s
	case TypeFloat64:
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return s
	}
	return nil
}

// Parse parses a whole GGUF file held in b. The File keeps b for its tensor views.
func Parse(b []byte) (*File, error) {
	d := &decoder{b: b}
	magic, err := d.u32("magic")
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if magic != Magic {
		return nil, fmt.Errorf("gguf: bad magic %#08x: not a GGUF file", magic)
	}
	f := &File{data: b, Size: uint64(len(b)), Alignment: DefaultAlignment}
	if f.Version, err = d.u32("version"); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if f.Version != 2 && f.Version != 3 {
		return nil, fmt.Errorf("gguf: unsupported version %d (supported: 2, 3)", f.Version)
	}
	nTensors, err := d.u64("tensor count")
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	nKV, err := d.u64("metadata count")
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	// A KV takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor info at least 8+4+4+8.
	if nKV > d.remaining()/13 {
		return nil, fmt.Errorf("gguf: metadata count %d cannot fit in a %d-byte file: %w", nKV, len(b), ErrTruncated)
	}
	if nTensors > d.remaining()/24 {
		return nil, fmt.Errorf("gguf: tensor count %d cannot fit in a %d-byte file: %w", nTensors, len(b), ErrTruncated)
	}
	f.KV = make([]KV, 0, nKV)
	f.kvIndex = make(map[string]int, nKV)
	for i := uint64(0); i < nKV; i++ {
		key, err := d.str(fmt.Sprintf("metadata key %d", i))
		if err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		t, err := d.u32("type of " + key)
		if err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		v, err := d.value(ValueType(t), key, 0)
		if err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", key, err)
		}
		if _, dup := f.kvIndex[key]; dup {
			return nil, fmt.Errorf("gguf: duplicate metadata key %q", key)
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Type: ValueType(t), Value: v})
	}
	if i, ok := f.kvIndex["general.alignment"]; ok {
		a, ok := f.KV[i].Value.(uint32)
		if !ok || a == 0 || a&(a-1) != 0 || a > maxAlignment {
			return nil, fmt.Errorf("gguf: general.alignment must be a power-of-two uint32 of at most %d, got %v (%s)", maxAlignment, f.KV[i].Value, f.KV[i].Type)
		}
		f.Alignment = uint64(a)
	}
	f.Tensors = make([]TensorInfo, nTensors)
	f.tIndex = make(map[string]int, nTensors)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Name, err = d.str(fmt.Sprintf("tensor %d name", i)); err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		if _, dup := f.tIndex[t.Name]; dup {
			return nil, fmt.Errorf("gguf: duplicate tensor %q", t.Name)
		}
		f.tIndex[t.Name] = i
		nd, err := d.u32(t.Name + " dimension count")
		if err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		if nd > maxDims {
			return nil, fmt.Errorf("gguf: tensor %q has %d dimensions (max %d)", t.Name, nd, maxDims)
		}
		t.Dims = make([]uint64, nd)
		for j := range t.Dims {
			if t.Dims[j], err = d.u64(t.Name + " dimension"); err != nil {
				return nil, fmt.Errorf("gguf: %w", err)
			}
		}
		typ, err := d.u32(t.Name + " type")
		if err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		t.Type = quant.Type(typ)
		if t.Offset, err = d.u64(t.Name + " offset"); err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		if t.Size, err = tensorBytes(t.Type, t.Dims); err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		if t.Offset%f.Alignment != 0 {
			return nil, fmt.Errorf("gguf: tensor %q offset %d is not a multiple of the alignment %d", t.Name, t.Offset, f.Alignment)
		}
	}
	f.DataOffset = alignUp(d.pos, f.Alignment)
	// Older writers end a tensor-less file right after the metadata, unpadded.
	f.unpadded = nTensors == 0 && f.Size < f.DataOffset
	if nTensors > 0 && f.DataOffset > f.Size {
		return nil, fmt.Errorf("gguf: data section at %d is past the end of the %d-byte file: %w", f.DataOffset, f.Size, ErrTruncated)
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		end := f.DataOffset + t.Offset + t.Size
		if t.Offset > f.Size || t.Size > f.Size || end > f.Size {
			return nil, fmt.Errorf("gguf: tensor %q (%d bytes at data offset %d) ends past the end of the %d-byte file: %w",
				t.Name, t.Size, t.Offset, f.Size, ErrTruncated)
		}
	}
	if err := checkOverlap(f.Tensors); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	return f, nil
}

func checkOverlap(ts []TensorInfo) error {
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return ts[idx[a]].Offset < ts[idx[b]].Offset })
	for i := 1; i < len(idx); i++ {
		p, q := &ts[idx[i-1]], &ts[idx[i]]
		if p.Offset+p.Size > q.Offset {
			return fmt.Errorf("tensors %q and %q overlap", p.Name, q.Name)
		}
	}
	return nil
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// Open memory-maps path read-only and parses it.
func Open(path string) (*File, error) {
	osf, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	b, unmap, err := mapFile(osf)
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := Parse(b)
	if err != nil {
		unmap()
		osf.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.osf, f.unmap = osf, unmap
	return f, nil
}

// Close releases the memory map and the file.
func (f *File) Close() error {
	var err error
	if f.unmap != nil {
		err = f.unmap()
		f.unmap = nil
	}
	if f.osf != nil {
		if e := f.osf.Close(); err == nil {
			err = e
		}
		f.osf = nil
	}
	f.data = nil
	return err
}

// OSFile is the open file behind f (nil when parsed from memory); the expert store issues
// its own positional reads on it.
func (f *File) OSFile() *os.File { return f.osf }

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Data is a zero-copy view of the tensor's bytes (from the memory map).
func (f *File) Data(t *TensorInfo) []byte {
	off := f.DataOffset + t.Offset
	return f.data[off : off+t.Size : off+t.Size]
}

// Range is the tensor's absolute byte range in the file, for positional reads.
func (f *File) Range(t *TensorInfo) (off, size int64) {
	return int64(f.DataOffset + t.Offset), int64(t.Size)
}

// ReadAt reads len(p) bytes at absolute file offset off, from the open file when there
// is one (a real positional read), else from memory.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || uint64(off)+uint64(len(p)) > f.Size {
		return 0, fmt.Errorf("gguf: read of %d bytes at %d is outside the %d-byte file", len(p), off, f.Size)
	}
	if f.osf != nil {
		return f.osf.ReadAt(p, off)
	}
	return copy(p, f.data[off:]), nil
}
