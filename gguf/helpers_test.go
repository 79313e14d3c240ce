package gguf

import (
	"bufio"
	"encoding/binary"
	"io"
)

func bufioWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }

// patchDims rewrites the dimensions of the only tensor of a file written by Write with
// one 1-D tensor named "w" and no metadata (same count of dims is kept by writing 2 dims
// into a 2-D slot: the file is re-encoded by hand).
func patchDims(b []byte, dims []uint64) []byte {
	var out []byte
	le := binary.LittleEndian
	out = append(out, b[:8]...)
	out = le.AppendUint64(out, 1)
	out = le.AppendUint64(out, 0)
	out = le.AppendUint64(out, 1)
	out = append(out, 'w')
	out = le.AppendUint32(out, uint32(len(dims)))
	for _, d := range dims {
		out = le.AppendUint64(out, d)
	}
	out = le.AppendUint32(out, 0) // F32
	out = le.AppendUint64(out, 0)
	for len(out)%32 != 0 {
		out = append(out, 0)
	}
	return append(out, make([]byte, 16)...)
}
