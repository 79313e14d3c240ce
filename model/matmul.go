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
	s.pool.For(s.mm.items(), s.mm.grain(), s.mm.run)
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
	packed, packedFor := j.packed, j.packedFor
	*j = mmJob{rows: w.Rows, cols: w.Cols, rb: w.RowBytes, ab: ab, split: split, T: T,
		data: w.Data, act: act, out: out, head: head.Dot, tail: tail.Dot, run: j.run, tmp: j.tmp,
		packed: packed, packedFor: packedFor}
	// Prefill products go through register tiles where quant has them (same bits): the
	// rows before split; the rest (fewer than 4) take the tail kernel.
	if tl := (quant.LlamaMatMul{Type: w.Type, Rows: w.Rows, T: T, Gemm: gemm}).Tiles(); tl != nil && split >= 2 {
		j.tiler = tl
		if key := [4]int{int(w.Type), w.Cols, T, split}; !reuse || j.packedFor != key {
			j.packed = grow(j.packed, tl.PackedBytes(split, w.Cols))
			tl.Pack(act, split, w.Cols, j.packed)
			j.packedFor = key
		}
		return act, nil
	}
	j.packedFor = [4]int{}
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

	// Tiled products: do's items are groups of quant.TileRows weight rows.
	tiler     *quant.Tiler
	packed    []byte // act repacked for tiler
	packedFor [4]int // type, cols, T, split of the activations in packed (kept for reuse)
}

// items is the number of work items do takes: weight rows, or groups of quant.TileRows
// rows when tiled; grain is how many a worker should get at least.
func (j *mmJob) items() int {
	if j.tiler != nil {
		return (j.rows + quant.TileRows - 1) / quant.TileRows
	}
	return j.rows
}

func (j *mmJob) grain() int {
	if j.tiler != nil {
		return 16 / quant.TileRows
	}
	return 16
}

func (j *mmJob) do(lo, hi int) {
	if j.tiler != nil {
		j.doTiles(lo, hi)
		return
	}
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

// tileQuads is how many column quads (quant.TileCols activation rows each) doTiles runs
// per pass over a worker's weight rows: 64 rows' packed activations (~400 KB at 2048
// columns) stay in L2 while the weights stream by.
const tileQuads = 16

// doTiles computes the row groups [lo, hi): the activation rows before split in tiles (a
// last group of fewer than quant.TileRows weight rows takes the one-row kernel), the rest
// with the tail kernel.
func (j *mmJob) doTiles(lo, hi int) {
	const R, C = quant.TileRows, quant.TileCols
	rows, rb, ab, S := j.rows, j.rb, j.ab, j.split
	nq := (S + C - 1) / C
	for q0 := 0; q0 < nq; q0 += tileQuads {
		q1 := min(q0+tileQuads, nq)
		for g := lo; g < hi; g++ {
			r := g * R
			if r+R <= rows {
				j.tiler.Rows(j.data[r*rb:], rb, j.cols, j.packed, S, q0, q1, j.out[r:], rows)
				continue
			}
			for ; r < rows; r++ {
				row := j.data[r*rb : (r+1)*rb]
				for t := q0 * C; t < min(q1*C, S); t++ {
					j.out[t*rows+r] = j.head(row, j.act[t*ab:(t+1)*ab], j.cols)
				}
			}
		}
	}
	for r := lo * R; r < min(hi*R, rows); r++ {
		row := j.data[r*rb : (r+1)*rb]
		for t := S; t < j.T; t++ {
			j.out[t*rows+r] = j.tail(row, j.act[t*ab:(t+1)*ab], j.cols)
		}
	}
}
