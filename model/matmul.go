package model

import (
	"fmt"

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
func (s *Session) matmul(w *Weight, x []float32, T int, gemm bool, out []float32) error {
	return s.matmulAct(w, x, T, gemm, out, false)
}

// matmulAct is matmul; with reuse the activations quantized by the previous call (the same
// x for a weight of the same type and width, as gate and up of one expert) are used as they are.
func (s *Session) matmulAct(w *Weight, x []float32, T int, gemm bool, out []float32, reuse bool) error {
	var err error
	if s.act, err = s.mm.prepare(w, x, T, gemm, out, s.act, reuse); err != nil {
		return err
	}
	s.pool.For(w.Rows, 16, s.mm.run)
	s.mm.data, s.mm.act, s.mm.out = nil, nil, nil
	return nil
}

// prepare sets j up for the product and quantizes the activations into act (grown as
// needed and returned) unless reuse says act already holds them; j.do(0, w.Rows) then
// computes it, or pieces of it in parallel.
func (j *mmJob) prepare(w *Weight, x []float32, T int, gemm bool, out []float32, act []byte, reuse bool) ([]byte, error) {
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
	if reuse && len(act) != T*ab {
		return act, fmt.Errorf("model: %s: no activations to reuse", w.Name)
	}
	if cap(act) < T*ab {
		act = make([]byte, T*ab)
	}
	act = act[:T*ab]
	// llama.cpp may quantize and sum the first rows of a batch differently from the rest
	// (quant.LlamaMatMul.Kernels).
	for t := 0; t < T && !reuse; t++ {
		k := head
		if t >= split {
			k = tail
		}
		k.Act(x[t*w.Cols:(t+1)*w.Cols], act[t*ab:(t+1)*ab])
	}
	*j = mmJob{rows: w.Rows, cols: w.Cols, rb: w.RowBytes, ab: ab, split: split, T: T,
		data: w.Data, act: act, out: out, head: head.Dot, tail: tail.Dot, run: j.run, tmp: j.tmp}
	if head.Rows != nil && split >= quant.LlamaRowsWidth {
		j.headRows = head.Rows
		if n := w.Rows * quant.LlamaRowsWidth; len(j.tmp) < n {
			j.tmp = make([]float32, n)
		}
	}
	return act, nil
}

// mmJob is the matmul being run; its run method value is made once per session, so a
// parallel loop allocates nothing.
type mmJob struct {
	rows, cols, rb, ab, split, T int
	data, act                    []byte
	out                          []float32
	head, tail                   func(w, a []byte, n int) float32
	headRows                     func(w, a []byte, n int, out []float32) // several rows at once, same bits
	tmp                          []float32                               // headRows' output, W per weight row
	run                          func(lo, hi int)
}

func (j *mmJob) do(lo, hi int) {
	rows, cols, rb, ab := j.rows, j.cols, j.rb, j.ab
	const W = quant.LlamaRowsWidth
	for r := lo; r < hi; r++ {
		row := j.data[r*rb : (r+1)*rb]
		t := 0
		if j.headRows != nil {
			four := j.tmp[r*W : (r+1)*W] // rows are disjoint across workers
			for ; t+W <= j.split; t += W {
				j.headRows(row, j.act[t*ab:(t+W)*ab], cols, four)
				for i, v := range four {
					j.out[(t+i)*rows+r] = v
				}
			}
		}
		for ; t < j.split; t++ {
			j.out[t*rows+r] = j.head(row, j.act[t*ab:(t+1)*ab], cols)
		}
		for t := j.split; t < j.T; t++ {
			j.out[t*rows+r] = j.tail(row, j.act[t*ab:(t+1)*ab], cols)
		}
	}
}
