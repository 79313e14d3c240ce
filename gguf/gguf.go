// Package gguf reads and writes GGUF files (versions 2 and 3) exactly as llama.cpp
// defines them: metadata, tensor infos, alignment, and zero-copy views of tensor data.
//
// Every count, length, offset and size in a file is checked against the file's size
// before anything is allocated, so a truncated or hostile file yields an error that
// names the problem, never a panic or an unbounded allocation.
package gguf

import (
	"fmt"
	"math"

	"github.com/regolith/regolith/quant"
)

// Magic is "GGUF" read as a little-endian uint32.
const Magic = 0x46554747

// DefaultAlignment applies when general.alignment is absent.
const DefaultAlignment = 32

// ValueType is the type tag of a metadata value.
type ValueType uint32

const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32",
	"float32", "bool", "string", "array", "uint64", "int64", "float64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

// size is the encoded size of a fixed-size scalar, 0 for string/array/unknown.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// Array is an array metadata value. Data holds a typed slice: []uint8, []int8, []uint16,
// []int16, []uint32, []int32, []float32, []bool, []string, []uint64, []int64, []float64,
// or []Array for nested arrays.
type Array struct {
	Elem ValueType
	Data any
}

// Len is the number of elements.
func (a Array) Len() int {
	switch d := a.Data.(type) {
	case []uint8:
		return len(d)
	case []int8:
		return len(d)
	case []uint16:
		return len(d)
	case []int16:
		return len(d)
	case []uint32:
		return len(d)
	case []int32:
		return len(d)
	case []float32:
		return len(d)
	case []bool:
		return len(d)
	case []string:
		return len(d)
	case []uint64:
		return len(d)
	case []int64:
		return len(d)
	case []float64:
		return len(d)
	case []Array:
		return len(d)
	}
	return 0
}

// KV is one metadata entry. Value holds the Go value of its type: uint8, int8, uint16,
// int16, uint32, int32, float32, bool, string, uint64, int64, float64 or Array.
type KV struct {
	Key   string
	Type  ValueType
	Value any
}

// TensorInfo describes one tensor. Dims are ggml's ne: Dims[0] is the innermost
// (contiguous) dimension.
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   quant.Type
	Offset uint64 // relative to the data section
	Size   uint64 // bytes, from Dims and Type
}

// Elements is the product of the dimensions.
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// tensorBytes computes a tensor's byte size, rejecting overflow and partial blocks.
func tensorBytes(typ quant.Type, dims []uint64) (uint64, error) {
	if !typ.Known() {
		return 0, fmt.Errorf("unknown tensor type %d", uint32(typ))
	}
	n := uint64(1)
	for _, d := range dims {
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("dimensions %v overflow", dims)
		}
		n *= d
	}
	if len(dims) > 0 && dims[0]%uint64(typ.BlockSize()) != 0 {
		return 0, fmt.Errorf("row of %d elements is not a multiple of %s's block size %d", dims[0], typ, typ.BlockSize())
	}
	b, err := typ.RowBytes(int64(n))
	return uint64(b), err
}
