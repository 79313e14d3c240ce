//go:build !linux

package main

import (
	"io"
	"os"
	"unsafe"
)

type benchReader interface {
	io.ReaderAt
	Close() error
}

// openForBench reads through the page cache: direct I/O is Linux-only here, so the numbers
// may include cached pages (the file is fresh, which helps only on the first read).
func openForBench(path string) (benchReader, bool, error) {
	f, err := os.Open(path)
	return f, false, err
}

func uintptrOfSlice(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// procReadBytes is unavailable off Linux.
func procReadBytes() (int64, bool) { return 0, false }
