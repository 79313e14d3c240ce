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
	align := uint64(DefaultAlignment)
	for _, kv := range kvs {
		if kv.Key == "general.alignment" {
			a, ok := kv.Value.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return fmt.Errorf("gguf: general.alignment must be a power-of-two uint32")
			}
			align = uint64(a)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	e := &encoder{w: bw}
	e.u32(Magic)
	e.u32(version)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Type))
		if err := e.value(kv.Type, kv.Value); err != nil {
			return fmt.Errorf("gguf: metadata %q: %w", kv.Key, err)
		}
	}
	var off uint64
	for _, t := range tensors {
		size, err := tensorBytes(t.Type, t.Dims)
		if err != nil {
			return fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		if size != uint64(len(t.Data)) {
			return fmt.Errorf("gguf: tensor %q: %d bytes of data for a %d-byte %s tensor %v", t.Name, len(t.Data), size, t.Type, t.Dims)
		}
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
	for _, t := range tensors {
		e.write(t.Data)
		e.pad(align)
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
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
