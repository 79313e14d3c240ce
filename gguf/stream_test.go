package gguf

import (
	"bytes"
	"testing"

	"github.com/regolith/regolith/quant"
)

// The streaming writer produces Write's bytes, knows the file size before any data is
// written, and refuses tensors out of order, of the wrong size, or missing.
func TestStreamWriter(t *testing.T) {
	kvs := []KV{
		{Key: "general.architecture", Type: TypeString, Value: "test"},
		{Key: "general.alignment", Type: TypeUint32, Value: uint32(64)},
	}
	ts := []WriteTensor{
		{Name: "a", Type: quant.F32, Dims: []uint64{3}, Data: make([]byte, 12)},
		{Name: "b", Type: quant.Q8_0, Dims: []uint64{64, 2}, Data: bytes.Repeat([]byte{1}, 136)},
		{Name: "c", Type: quant.F32, Dims: []uint64{5}, Data: bytes.Repeat([]byte{7}, 20)},
	}
	var want bytes.Buffer
	if err := Write(&want, kvs, ts); err != nil {
		t.Fatal(err)
	}
	specs := make([]TensorSpec, len(ts))
	for i, x := range ts {
		specs[i] = TensorSpec{x.Name, x.Type, x.Dims}
	}
	var got bytes.Buffer
	s, err := NewStreamWriter(&got, kvs, specs)
	if err != nil {
		t.Fatal(err)
	}
	if s.Size() != int64(want.Len()) {
		t.Fatalf("Size %d, file is %d bytes", s.Size(), want.Len())
	}
	if err := s.WriteTensor("b", ts[1].Data); err == nil {
		t.Fatal("out-of-order tensor accepted")
	}
	if err := s.WriteTensor("a", make([]byte, 11)); err == nil {
		t.Fatal("short tensor accepted")
	}
	for _, x := range ts[:2] {
		if err := s.WriteTensor(x.Name, x.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err == nil {
		t.Fatal("Close with a tensor missing succeeded")
	}
	if err := s.WriteTensor("c", ts[2].Data); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) || s.Written() != int64(want.Len()) {
		t.Fatalf("stream wrote %d bytes (counted %d), Write %d; equal: %v", got.Len(), s.Written(), want.Len(), bytes.Equal(got.Bytes(), want.Bytes()))
	}
	if _, err := Parse(got.Bytes()); err != nil {
		t.Fatal(err)
	}
}
