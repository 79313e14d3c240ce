package model

import (
	"fmt"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/quant"
)

// Weight is a 2-D weight matrix viewed in place (rows of Cols elements of Type).
// It is ggml's layout: a GGUF tensor with dims [Cols, Rows].
type Weight struct {
	Name     string
	Type     quant.Type
	Rows     int
	Cols     int
	RowBytes int
	Data     []byte
}

// Row is row r's bytes.
func (w *Weight) Row(r int) []byte { return w.Data[r*w.RowBytes : (r+1)*w.RowBytes] }

// ExpertTensor is a 3-D routed-expert tensor (dims [Cols, Rows, N]); expert e is one
// contiguous range of ExpertBytes bytes.
type ExpertTensor struct {
	Weight          // shape of one expert; Data is the whole tensor
	N           int // experts
	ExpertBytes int
	Offset      int64 // absolute file offset of expert 0
}

// Expert returns expert e's matrix as a view of the tensor.
func (t *ExpertTensor) Expert(e int) Weight {
	w := t.Weight
	w.Data = t.Data[e*t.ExpertBytes : (e+1)*t.ExpertBytes]
	return w
}

type loader struct {
	f   *gguf.File
	err error
}

func (ld *loader) tensor(name string, dims ...int) *gguf.TensorInfo {
	if ld.err != nil {
		return nil
	}
	t, ok := ld.f.Tensor(name)
	if !ok {
		ld.err = fmt.Errorf("model: missing tensor %s", name)
		return nil
	}
	if len(t.Dims) != len(dims) {
		ld.err = fmt.Errorf("model: tensor %s has shape %v, want %v", name, t.Dims, dims)
		return nil
	}
	for i, d := range dims {
		if t.Dims[i] != uint64(d) {
			ld.err = fmt.Errorf("model: tensor %s has shape %v, want %v", name, t.Dims, dims)
			return nil
		}
	}
	return t
}

func (ld *loader) weight(name string, cols, rows int) Weight {
	t := ld.tensor(name, cols, rows)
	if t == nil {
		return Weight{}
	}
	return ld.view(t, cols, rows)
}

func (ld *loader) view(t *gguf.TensorInfo, cols, rows int) Weight {
	rb, err := t.Type.RowBytes(int64(cols))
	if err != nil {
		ld.err = fmt.Errorf("model: tensor %s: %w", t.Name, err)
		return Weight{}
	}
	return Weight{Name: t.Name, Type: t.Type, Rows: rows, Cols: cols, RowBytes: int(rb), Data: ld.f.Data(t)}
}

func (ld *loader) experts(name string, cols, rows, n int) ExpertTensor {
	t := ld.tensor(name, cols, rows, n)
	if t == nil {
		return ExpertTensor{}
	}
	w := ld.view(t, cols, rows)
	off, _ := ld.f.Range(t)
	return ExpertTensor{Weight: w, N: n, ExpertBytes: w.RowBytes * rows, Offset: off}
}

// vector loads a 1-D F32 tensor (norm weights) as floats.
func (ld *loader) vector(name string, n int) []float32 {
	t := ld.tensor(name, n)
	if t == nil {
		return nil
	}
	out := make([]float32, n)
	if err := quant.DequantizeRow(t.Type, ld.f.Data(t), out); err != nil {
		ld.err = fmt.Errorf("model: tensor %s: %w", name, err)
	}
	return out
}
