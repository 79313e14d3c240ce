package gguf

import (
	"fmt"
	"math"
)

// Get returns the metadata entry for key.
func (f *File) Get(key string) (KV, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return KV{}, false
	}
	return f.KV[i], true
}

// String returns a string value.
func (f *File) String(key string) (string, bool) {
	kv, ok := f.Get(key)
	if !ok {
		return "", false
	}
	s, ok := kv.Value.(string)
	return s, ok
}

// Uint returns an unsigned integer value of any integer type (negative values fail).
func (f *File) Uint(key string) (uint64, bool) {
	kv, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	return toUint(kv.Value)
}

func toUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Int returns a signed integer value of any integer type.
func (f *File) Int(key string) (int64, bool) {
	kv, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	switch x := kv.Value.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	u, ok := toUint(kv.Value)
	return int64(u), ok && u <= math.MaxInt64
}

// Float returns a floating-point value (integers are converted).
func (f *File) Float(key string) (float64, bool) {
	kv, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	switch x := kv.Value.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	if i, ok := f.Int(key); ok {
		return float64(i), true
	}
	return 0, false
}

// Bool returns a boolean value.
func (f *File) Bool(key string) (bool, bool) {
	kv, ok := f.Get(key)
	if !ok {
		return false, false
	}
	b, ok := kv.Value.(bool)
	return b, ok
}

// Array returns an array value.
func (f *File) Array(key string) (Array, bool) {
	kv, ok := f.Get(key)
	if !ok {
		return Array{}, false
	}
	a, ok := kv.Value.(Array)
	return a, ok
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, bool) {
	a, ok := f.Array(key)
	if !ok {
		return nil, false
	}
	s, ok := a.Data.([]string)
	return s, ok
}

// Arch is general.architecture.
func (f *File) Arch() string {
	s, _ := f.String("general.architecture")
	return s
}

// ArchUint reads "<arch>.<name>", e.g. ArchUint("block_count").
func (f *File) ArchUint(name string) (uint64, bool) { return f.Uint(f.Arch() + "." + name) }

// ArchFloat reads "<arch>.<name>" as a float.
func (f *File) ArchFloat(name string) (float64, bool) { return f.Float(f.Arch() + "." + name) }

// RequireArchUint is ArchUint with an error naming the missing key.
func (f *File) RequireArchUint(name string) (uint64, error) {
	v, ok := f.ArchUint(name)
	if !ok {
		return 0, fmt.Errorf("gguf: missing or non-integer metadata %s.%s", f.Arch(), name)
	}
	return v, nil
}

// RequireArchFloat is ArchFloat with an error naming the missing key.
func (f *File) RequireArchFloat(name string) (float64, error) {
	v, ok := f.ArchFloat(name)
	if !ok {
		return 0, fmt.Errorf("gguf: missing or non-numeric metadata %s.%s", f.Arch(), name)
	}
	return v, nil
}
