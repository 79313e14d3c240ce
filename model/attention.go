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

	kt, vf   []float32 // the tiled path's widened key tile (dk-major) and value tile
	tiled    []tiledState
	tiledOut []float32
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

// tiledScratch sizes a worker's buffers for the tiled path: the widened key and value tile
// and the running state of faTileQ rows × group heads.
func (sc *attnScratch) tiledScratch(headDim, group int) {
	if len(sc.kt) == headDim*faTileKV && len(sc.tiled) == faTileQ*group {
		return
	}
	sc.kt = make([]float32, headDim*faTileKV)
	sc.vf = make([]float32, faTileKV*headDim)
	sc.tiled = make([]tiledState, faTileQ*group)
	sc.tiledOut = make([]float32, faTileQ*group*headDim)
}

// tiledState is one query row's running softmax of the tiled path.
type tiledState struct {
	M, S float32
	out  []float32
}

// attendTiled is ggml's tiled flash attention (chunks of at least faTileQ rows) for the
// query rows [t0, t1) of the chunk and the query heads that share KV head g. Cells come in
// tiles of faTileKV from cell 0; each tile's keys and values are widened from F16 once and
// serve every row and head of the item. Per row: scores as fused-multiply-add chains over
// the head (F32 query), scaled and masked; an online-softmax update with the tile's max and
// ggml_vec_soft_max_f32's exponentials and sums; the weighted values added cell by cell.
func (j *attnJob) attendTiled(g, t0, t1 int, sc *attnScratch) {
	s, c := j.s, j.s.m.Cfg
	hd, qd, kvd := c.HeadDim, c.NHead*c.HeadDim, c.NHeadKV*c.HeadDim
	group := c.NHead / c.NHeadKV
	rows := (t1 - t0) * group
	st := sc.tiled[:rows]
	for i := range st {
		st[i] = tiledState{M: float32(math.Inf(-1)), out: sc.tiledOut[i*hd : (i+1)*hd]}
		clear(st[i].out)
	}
	kt, vf, kq := sc.kt[:hd*faTileKV], sc.vf[:faTileKV*hd], sc.scores[:faTileKV]
	last := j.p0 + t1 // cells any row of the item can see
	for ic := 0; ic < last; ic += faTileKV {
		n := min(faTileKV, last-ic)
		clear(kt)
		clear(vf[n*hd:])
		for tk := 0; tk < n; tk++ {
			base := (ic+tk)*kvd + g*hd
			for dk, h := range j.K[base : base+hd] {
				kt[dk*faTileKV+tk] = quant.FP16ToFP32(h)
			}
			f16.ToF32(vf[tk*hd:(tk+1)*hd], j.V[base:base+hd])
		}
		for t := t0; t < t1; t++ {
			pos := j.p0 + t
			if ic > pos {
				continue // the whole tile is in this row's future: no update
			}
			for hh := 0; hh < group; hh++ {
				h := g*group + hh
				r := &st[(t-t0)*group+hh]
				tileScores(kq, s.q[t*qd+h*hd:t*qd+(h+1)*hd], kt)
				tileMax := scaleMaskMax(kq, j.scale, pos-ic+1)
				Mnew := max(r.M, tileMax)
				if Mnew > r.M {
					ms := expf(r.M - Mnew)
					for i := range r.out {
						r.out[i] *= ms
					}
					r.S *= ms
				}
				r.M = Mnew
				r.S = float32(float64(r.S) + softmaxTile(kq, r.M))
				tileAccum(r.out, kq, vf, min(faTileKV, pos-ic+1))
			}
		}
	}
	for t := t0; t < t1; t++ {
		for hh := 0; hh < group; hh++ {
			h := g*group + hh
			r := &st[(t-t0)*group+hh]
			inv := float32(0)
			if r.S != 0 {
				inv = 1 / r.S
			}
			dst := s.att[t*qd+h*hd : t*qd+(h+1)*hd]
			for i, v := range r.out {
				dst[i] = v * inv
			}
		}
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
