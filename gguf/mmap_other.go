//go:build !unix

package gguf

import (
	"io"
	"os"
)

// mapFile reads the whole file where memory maps are not available.
func mapFile(f *os.File) ([]byte, func() error, error) {
	b, err := io.ReadAll(f)
	return b, func() error { return nil }, err
}
