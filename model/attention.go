package model

import (
	"math"

	"github.com/regolith/regolith/internal/f16"
	"github.com/regolith/regolith/quant"
)

// Attention follows llama.cpp's CPU flash-attention kernels over an F16 KV cache, because
// their rounding is visible in the logits:
//   - a chunk of at least faTileQ query rows takes the tiled path: F32 queries, keys and
//     values widened from F16, F32 accumulation (numerically an exact softmax in F32);
//   - fewer rows take the per-row path: the query is rounded to F16 and the weighted value
//     sum accumulates in F16, rounded after every key;
//   - a single query row over at least faSplitKV cache cells is split into faSplits chunks
//     of cells, each accumulated as above, then combined in F32 (the fixtures were made
//     with 2 threads, and llama.cpp splits by its thread count).
//
// The cache length the kernels see is llama.cpp's n_kv: positions used, padded to 256.
const (
	faTileQ   = 64
	faTileKV  = 64
	faSplitKV = 512
	faSplits  = 2
	kvPad     = 256
)

// attnScratch is one worker's buffers for one query row.
type attnScratch struct {
	q16    []uint16
	acc16  []uint16
	acc32  []float32
	part   []float32
	scores []float32
	ms, vs []float32 // per-cell rescale and weight of the F16 online softmax
}

// kvView is one KV head of a layer's cache: cell j's key is K[off+j*stride:][:hd].
type kvView struct {
	K, V        []uint16
	off, stride int
	hd          int
}

func (v *kvView) key(j int) []uint16 { return v.K[v.off+j*v.stride : v.off+j*v.stride+v.hd] }
func (v *kvView) val(j int) []uint16 { return v.V[v.off+j*v.stride : v.off+j*v.stride+v.hd] }

func newAttnScratch(headDim, ctx int) *attnScratch {
	return &attnScratch{
		q16:    make([]uint16, headDim),
		acc16:  make([]uint16, headDim),
		acc32:  make([]float32, headDim),
		part:   make([]float32, headDim),
		scores: make([]float32, max(ctx, faTileKV)),
		ms:     make([]float32, ctx),
		vs:     make([]float32, ctx),
	}
}

// attendF32 is ggml's tiled flash-attention for one query row over cells [0, n): cells in
// tiles of faTileKV from cell 0; per tile the scores (sequential fused multiply-adds over
// the head, F32 query, keys widened from F16), an online-softmax update with the tile's
// max, exponentials and sums as ggml_vec_soft_max_f32 makes them, and the weighted values
// added cell by cell with fused multiply-adds (its simd_gemm order).
func attendF32(out, q []float32, kv *kvView, n int, scale float32, sc *attnScratch) {
	M, S := float32(math.Inf(-1)), float32(0)
	for i := range out {
		out[i] = 0
	}
	kq := sc.scores[:faTileKV]
	for ic := 0; ic < n; ic += faTileKV {
		tileMax := float32(math.Inf(-1))
		for tk := range kq {
			j := ic + tk
			if j >= n { // causal mask and padding
				kq[tk] = float32(math.Inf(-1))
				continue
			}
			var s float32
			for i, k := range kv.key(j) {
				s = fmaf(q[i], quant.FP16ToFP32(k), s)
			}
			kq[tk] = s * scale
			tileMax = max(tileMax, kq[tk])
		}
		Mnew := max(M, tileMax)
		if Mnew > M {
			ms := expf(M - Mnew)
			for i := range out {
				out[i] *= ms
			}
			S *= ms
		}
		M = Mnew
		S = float32(float64(S) + softmaxTile(kq, M))
		for tk, p := range kq {
			if ic+tk >= n {
				break
			}
			v := kv.val(ic + tk)
			for i := range out {
				out[i] = fmaf(p, quant.FP16ToFP32(v[i]), out[i])
			}
		}
	}
	inv := float32(0)
	if S != 0 {
		inv = 1 / S
	}
	for i := range out {
		out[i] *= inv
	}
}

// attendF16 is ggml's per-row flash-attention over cells [lo, hi): online softmax with an
// F16 accumulator. It returns the running max M and sum S and leaves the unnormalized
// accumulator, widened to F32, in acc. The scores, then the sequential max/sum bookkeeping,
// then the value updates, each as one pass (same arithmetic as interleaving them).
func attendF16(acc []float32, q16 []uint16, kv *kvView, lo, hi int, scale float32, sc *attnScratch) (M, S float32) {
	n := hi - lo
	scores, ms, vs := sc.scores[:n], sc.ms[:n], sc.vs[:n]
	f16.DotRows(scores, q16, kv.K[kv.off+lo*kv.stride:], kv.stride)
	M = float32(math.Inf(-1))
	for j, s := range scores {
		s *= scale
		m, v := float32(1), float32(1)
		if s > M {
			m = expf(M - s)
			M = s
		} else {
			v = expf(s - M)
		}
		ms[j], vs[j] = m, v
		S = fmaf(S, m, v)
	}
	a16 := sc.acc16
	for i := range a16 {
		a16[i] = 0
	}
	f16.MadRows(a16, kv.V[kv.off+lo*kv.stride:], kv.stride, ms, vs)
	for i, h := range a16 {
		acc[i] = quant.FP16ToFP32(h)
	}
	return M, S
}

// attendRow computes one query row's attention over cells [0, n) (the causal limit; the
// padded cache length nKV decides the split) choosing the kernel as llama.cpp does.
func attendRow(out, q []float32, kv *kvView, n, nKV, chunkRows int, scale float32, sc *attnScratch) {
	if chunkRows >= faTileQ {
		attendF32(out, q, kv, n, scale, sc)
		return
	}
	f16.ToF16(sc.q16, q)
	if chunkRows == 1 && nKV >= faSplitKV {
		size := (nKV + faSplits - 1) / faSplits
		Mf, Sf := float32(math.Inf(-1)), float32(0)
		for i := range out {
			out[i] = 0
		}
		for c := 0; c < faSplits; c++ {
			lo, hi := c*size, min((c+1)*size, n)
			if lo >= hi {
				continue
			}
			M, S := attendF16(sc.part, sc.q16, kv, lo, hi, scale, sc)
			if S == 0 {
				continue
			}
			Mn := max(Mf, M)
			so, sn := expf(Mf-Mn), expf(M-Mn)
			for i := range out {
				out[i] = fmaf(out[i], so, float32(sc.part[i]*sn))
			}
			Sf = fmaf(Sf, so, float32(S*sn))
			Mf = Mn
		}
		if Sf != 0 {
			inv := 1 / Sf
			for i := range out {
				out[i] *= inv
			}
		}
		return
	}
	_, S := attendF16(out, sc.q16, kv, 0, n, scale, sc)
	inv := float32(0)
	if S != 0 {
		inv = 1 / S
	}
	for i := range out {
		out[i] *= inv
	}
}
