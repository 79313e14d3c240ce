//go:build linux

package main

import (
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

type benchReader interface {
	io.ReaderAt
	Close() error
}

type directReader struct{ fd int }

func (d directReader) ReadAt(p []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(d.fd, p, off)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}

func (d directReader) Close() error { return unix.Close(d.fd) }

// openForBench opens path with O_DIRECT, or (when the filesystem refuses it) buffered after
// dropping its pages from the page cache.
func openForBench(path string) (benchReader, bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err == nil {
		return directReader{fd}, true, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	return f, false, nil
}

func uintptrOfSlice(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
