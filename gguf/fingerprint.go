package gguf

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
)

// Fingerprint identifies a model file: SHA-256 of its bytes before the data section (the
// header, metadata and tensor infos, which name every tensor's type, shape and offset)
// followed by the file's size. Traces and session files carry it, so that they are never
// read against another model.
func (f *File) Fingerprint() ([32]byte, error) {
	var fp [32]byte
	end := min(f.DataOffset, f.Size)
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, int64(end))); err != nil {
		return fp, fmt.Errorf("gguf: fingerprinting the file: %w", err)
	}
	var sz [8]byte
	binary.LittleEndian.PutUint64(sz[:], f.Size)
	h.Write(sz[:])
	copy(fp[:], h.Sum(nil))
	return fp, nil
}
