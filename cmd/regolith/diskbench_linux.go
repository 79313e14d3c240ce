//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
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

// procReadBytes is this process's read_bytes from /proc/self/io: the bytes it caused to be
// fetched from the storage layer (page-cache hits do not count).
func procReadBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("read_bytes:")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
