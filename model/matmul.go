package model

import (
	"fmt"

	"github.com/regolith/regolith/internal/parallel"
	"github.com/regolith/regolith/quant"
)

// matmul computes out[t*w.Rows + r] = w.Row(r) · x[t*w.Cols:(t+1)*w.Cols] for T rows of x.
// Activations are first converted to the type llama.cpp pairs with w.Type (Q8_0, Q8_K,
// F16, ...), once per row, into act (grown as needed and returned).
//
// gemm says whether llama.cpp would compute this product as a batched GEMM (a dense
// weight and more than one row: its llamafile sgemm path) rather than one dot product
// per row (one row, or routed experts through mul_mat_id); for some types the two sum
// in different orders.
func matmul(pool *parallel.Pool, w *Weight, x []float32, T int, gemm bool, out []float32, act []byte) ([]byte, error) {
	ab := quant.ActivationBytes(w.Type, w.Cols)
	split, head, tail, ok := quant.LlamaMatMul{Type: w.Type, Rows: w.Rows, T: T, Gemm: gemm}.Kernels()
	if head.Dot == nil {
		head.Dot = quant.Kernel(w.Type)
	}
	if tail.Dot == nil {
		tail.Dot = quant.Kernel(w.Type)
	}
	if ab < 0 || !ok || head.Dot == nil || tail.Dot == nil {
		return act, fmt.Errorf("model: %s: no matrix product for %s rows of %d", w.Name, w.Type, w.Cols)
	}
	if cap(act) < T*ab {
		act = make([]byte, T*ab)
	}
	act = act[:T*ab]
	// llama.cpp may quantize and sum the first rows of a batch differently from the rest
	// (quant.LlamaMatMul.Kernels).
	for t := 0; t < T; t++ {
		k := head
		if t >= split {
			k = tail
		}
		k.Act(x[t*w.Cols:(t+1)*w.Cols], act[t*ab:(t+1)*ab])
	}
	rows, cols, rb := w.Rows, w.Cols, w.RowBytes
	data := w.Data
	pool.For(rows, 16, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := data[r*rb : (r+1)*rb]
			for t := 0; t < split; t++ {
				out[t*rows+r] = head.Dot(row, act[t*ab:(t+1)*ab], cols)
			}
			for t := split; t < T; t++ {
				out[t*rows+r] = tail.Dot(row, act[t*ab:(t+1)*ab], cols)
			}
		}
	})
	return act, nil
}
