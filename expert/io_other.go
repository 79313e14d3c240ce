//go:build !linux

package expert

import (
	"errors"
	"runtime"
)

type directFile struct{}

// openDirect: direct I/O is implemented on Linux only; elsewhere the store reads through
// the page cache.
func openDirect(string, int64) (*directFile, error) {
	return nil, errors.New("O_DIRECT is not implemented on " + runtime.GOOS)
}

func (*directFile) ReadAt([]byte, int64) (int, error) { return 0, errors.New("no direct I/O") }
func (*directFile) Close() error                      { return nil }

func fadviseDontNeed(uintptr, int64, int64) {}
