// Package defaultmodel embeds regolith's default model: gomoe, a small qwen3moe (28.7M
// parameters, 64 experts of which 4 are active per token, 8 layers) trained on the Go
// standard library's source, quantized to Q8_0. MODEL.md at the repository root describes
// how it was trained and what it measures.
package defaultmodel

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	_ "embed"
)

// FileName is the embedded file's name.
const FileName = "gomoe-q8_0.gguf"

//go:embed gomoe-q8_0.gguf
var data []byte

// Bytes returns the embedded GGUF file. The slice is shared: do not modify it.
func Bytes() []byte { return data }

var sum = sync.OnceValue(func() string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
})

// SHA256 is the hex SHA-256 of the embedded file.
func SHA256() string { return sum() }

// Path returns the path of a copy of the model on disk, under the user's cache directory
// (regolith/models/), writing it there first when no complete copy exists. The file's name
// holds the start of its SHA-256, so a new build's model never reuses an old copy.
func Path() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("defaultmodel: no cache directory: %w", err)
	}
	return WriteTo(filepath.Join(dir, "regolith", "models"))
}

// WriteTo makes sure dir holds a complete copy of the model and returns its path. The file is
// written under a temporary name and renamed, so a crash never leaves a partial model behind.
func WriteTo(dir string) (string, error) {
	p := filepath.Join(dir, "gomoe-"+SHA256()[:12]+"-q8_0.gguf")
	if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(data)) {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("defaultmodel: %w", err)
	}
	f, err := os.CreateTemp(dir, ".gomoe-*.tmp")
	if err != nil {
		return "", fmt.Errorf("defaultmodel: %w", err)
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(0o644), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("defaultmodel: writing %s: %w", p, err)
	}
	return p, nil
}
