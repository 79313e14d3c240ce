package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/regolith/regolith/quant"
)

// WriteTensor is a tensor to write: its name, type, dimensions and bytes.
type WriteTensor struct {
	Name string
	Type quant.Type
	Dims []uint64
	Data []byte
}

// Write writes a GGUF v3 file: the metadata in order, then the tensor infos, then the
// tensor data in the given order, each tensor aligned to general.alignment (default 32)
// and padded with zeros, as llama.cpp's writer lays it out.
func Write(w io.Writer, kvs []KV, tensors []WriteTensor) error {
	return write(w, 3, kvs, tensors, true)
}

func write(w io.Writer, version uint32, kvs []KV, tensors []WriteTensor, padHeader bool) error {
	specs := make([]TensorSpec, len(tensors))
	for i, t := range tensors {
		specs[i] = TensorSpec{Name: t.Name, Type: t.Type, Dims: t.Dims}
	}
	s, err := newStreamWriter(w, version, kvs, specs, padHeader)
	if err != nil {
		return err
	}
	for _, t := range tensors {
		if err := s.WriteTensor(t.Name, t.Data); err != nil {
			return err
		}
	}
	return s.Close()
}

// TensorSpec is a tensor's name, type and dimensions: its place in the layout, without data.
type TensorSpec struct {
	Name string
	Type quant.Type
	Dims []uint64
}

// StreamWriter writes a GGUF v3 file whose tensor data arrives one tensor at a time, so a
// file larger than memory can be written: NewStreamWriter lays out every tensor and writes
// the header, WriteTensor writes each tensor's bytes in the order given, Close checks that
// all were written and flushes. The bytes are those Write produces for the same input.
type StreamWriter struct {
	bw    *bufio.Writer
	e     *encoder
	specs []TensorSpec
	sizes []uint64
	align uint64
	next  int
	size  uint64
}

// NewStreamWriter writes the header (metadata and tensor infos) of a file holding tensors,
// in that order.
func NewStreamWriter(w io.Writer, kvs []KV, tensors []TensorSpec) (*StreamWriter, error) {
	return newStreamWriter(w, 3, kvs, tensors, true)
}

func newStreamWriter(w io.Writer, version uint32, kvs []KV, tensors []TensorSpec, padHeader bool) (*StreamWriter, error) {
	align := uint64(DefaultAlignment)
	for _, kv := range kvs {
		if kv.Key == "general.alignment" {
			a, ok := kv.Value.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return nil, fmt.Errorf("gguf: general.alignment must be a power-of-two uint32")
			}
			align = uint64(a)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	e := &encoder{w: bw}
	s := &StreamWriter{bw: bw, e: e, specs: tensors, sizes: make([]uint64, len(tensors)), align: align}
	e.u32(Magic)
	e.u32(version)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Type))
		if err := e.value(kv.Type, kv.Value); err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", kv.Key, err)
		}
	}
	var off uint64
	for i, t := range tensors {
		size, err := tensorBytes(t.Type, t.Dims)
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		s.sizes[i] = size
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(off)
		off = alignUp(off+size, align)
	}
	if padHeader || len(tensors) > 0 {
		e.pad(align)
	}
	if e.err != nil {
		return nil, e.err
	}
	s.size = e.n + off
	return s, nil
}

// Size is the size of the whole file in bytes, known once the layout is.
func (s *StreamWriter) Size() int64 { return int64(s.size) }

// TensorSize is the data size in bytes of the i-th tensor.
func (s *StreamWriter) TensorSize(i int) int64 { return int64(s.sizes[i]) }

// Written is the number of bytes written so far (header included).
func (s *StreamWriter) Written() int64 { return int64(s.e.n) }

// WriteTensor writes the next tensor's data; name must be that tensor's.
func (s *StreamWriter) WriteTensor(name string, data []byte) error {
	if s.e.err != nil {
		return s.e.err
	}
	if s.next >= len(s.specs) {
		return fmt.Errorf("gguf: tensor %q written after all %d tensors", name, len(s.specs))
	}
	t := &s.specs[s.next]
	if t.Name != name {
		return fmt.Errorf("gguf: tensor %q written where %q comes next", name, t.Name)
	}
	if s.sizes[s.next] != uint64(len(data)) {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data for a %d-byte %s tensor %v", t.Name, len(data), s.sizes[s.next], t.Type, t.Dims)
	}
	s.e.write(data)
	s.e.pad(s.align)
	s.next++
	return s.e.err
}

// Close checks that every tensor was written and flushes; it does not close the
// underlying writer.
func (s *StreamWriter) Close() error {
	if s.e.err != nil {
		return s.e.err
	}
	if s.next != len(s.specs) {
		return fmt.Errorf("gguf: %d of %d tensors written (next: %q)", s.next, len(s.specs), s.specs[s.next].Name)
	}
	return s.bw.Flush()
}

// Encode writes f back out. For a file llama.cpp wrote, the bytes are identical.
func (f *File) Encode(w io.Writer) error {
	ts := make([]WriteTensor, len(f.Tensors))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		ts[i] = WriteTensor{Name: t.Name, Type: t.Type, Dims: t.Dims, Data: f.Data(t)}
	}
	return write(w, f.Version, f.KV, ts, !f.unpadded)
}

type encoder struct {
	w   *bufio.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *encoder) write(b []byte) {
	if e.err != nil {
		return
	}
	var n int
	n, e.err = e.w.Write(b)
	e.n += uint64(n)
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], v)
	e.write(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.write(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		var n int
		n, e.err = e.w.WriteString(s)
		e.n += uint64(n)
	}
}

var zeros [256]byte

func (e *encoder) pad(align uint64) {
	for p := alignUp(e.n, align) - e.n; p > 0; {
		k := min(p, uint64(len(zeros)))
		e.write(zeros[:k])
		p -= k
	}
}

func (e *encoder) value(t ValueType, v any) error {
	bad := fmt.Errorf("value %T does not match type %s", v, t)
	switch t {
	case TypeString:
		s, ok := v.(string)
		if !ok {
			return bad
		}
		e.str(s)
	case TypeArray:
		a, ok := v.(Array)
		if !ok {
			return bad
		}
		return e.array(a)
	default:
		b, ok := scalarBytes(t, v, e.buf[:])
		if !ok {
			return bad
		}
		e.write(b)
	}
	return nil
}

func scalarBytes(t ValueType, v any, buf []byte) ([]byte, bool) {
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8:
		buf[0] = x
	case int8:
		buf[0] = uint8(x)
	case bool:
		buf[0] = 0
		if x {
			buf[0] = 1
		}
	case uint16:
		le.PutUint16(buf, x)
	case int16:
		le.PutUint16(buf, uint16(x))
	case uint32:
		le.PutUint32(buf, x)
	case int32:
		le.PutUint32(buf, uint32(x))
	case float32:
		le.PutUint32(buf, math.Float32bits(x))
	case uint64:
		le.PutUint64(buf, x)
	case int64:
		le.PutUint64(buf, uint64(x))
	case float64:
		le.PutUint64(buf, math.Float64bits(x))
	default:
		return nil, false
	}
	if scalarType(v) != t {
		return nil, false
	}
	return buf[:t.size()], true
}

func (e *encoder) array(a Array) error {
	e.u32(uint32(a.Elem))
	e.u64(uint64(a.Len()))
	switch d := a.Data.(type) {
	case []string:
		if a.Elem != TypeString {
			return fmt.Errorf("array of strings tagged %s", a.Elem)
		}
		for _, s := range d {
			e.str(s)
		}
	case []Array:
		if a.Elem != TypeArray {
			return fmt.Errorf("array of arrays tagged %s", a.Elem)
		}
		for _, x := range d {
			if err := e.array(x); err != nil {
				return err
			}
		}
	default:
		n := a.Len()
		for i := 0; i < n; i++ {
			v := indexScalar(a.Data, i)
			b, ok := scalarBytes(a.Elem, v, e.buf[:])
			if !ok {
				return fmt.Errorf("array element %T does not match type %s", v, a.Elem)
			}
			e.write(b)
		}
	}
	return nil
}

func indexScalar(data any, i int) any {
	switch d := data.(type) {
	case []uint8:
		return d[i]
	case []int8:
		return d[i]
	case []bool:
		return d[i]
	case []uint16:
		return d[i]
	case []int16:
		return d[i]
	case []uint32:
		return d[i]
	case []int32:
		return d[i]
	case []float32:
		return d[i]
	case []uint64:
		return d[i]
	case []int64:
		return d[i]
	case []float64:
		return d[i]
	}
	return nil
}

// scalarType is the GGUF type of a Go scalar value.
func scalarType(v any) ValueType {
	switch v.(type) {
	case uint8:
		return TypeUint8
	case int8:
		return TypeInt8
	case bool:
		return TypeBool
	case uint16:
		return TypeUint16
	case int16:
		return TypeInt16
	case uint32:
		return TypeUint32
	case int32:
		return TypeInt32
	case float32:
		return TypeFloat32
	case uint64:
		return TypeUint64
	case int64:
		return TypeInt64
	case float64:
		return TypeFloat64
	}
	return TypeArray // never a scalar
}
