package kvcache

import "fmt"

// Recurrent is the fixed-size state of a hybrid model's recurrent layers (qwen3next's Gated
// DeltaNet: a convolution window and a delta-rule matrix per layer) after the cache's N
// positions. Unlike keys and values it cannot be cut back to a shorter prefix, so it keeps
// checkpoints: copies of the whole state at chosen positions. Truncating the cache to n
// restores the latest checkpoint at or before n (or the empty state) and sets N to that
// position; the caller recomputes the rest.
//
// Memory: every checkpoint costs Bytes() (for Qwen3-Next-80B-A3B, 36 recurrent layers ×
// (3×8,192 conv + 32×128×128 state) floats ≈ 79 MB; for the fixtures' small models 0.4 MB),
// and at most MaxCheckpoints are kept, so RAM prompt reuse costs up to MaxCheckpoints+1
// states on top of the KV cache. A session file (file.go) holds the state at its end and
// the checkpoints before it, at the same cost each on disk: for the 80B model up to
// 9 × 79 MB ≈ 0.7 GB besides the keys and values (12 attention layers × 2 × 512 halves ≈
// 24 KB per position), so the disk tier's --cache-size fills with few files.
type Recurrent struct {
	Conv, SSM [][]float32 // per recurrent layer
	// N is the position the state belongs to; it equals the cache's N, or is −1 while a
	// forward pass is updating the state (a failed pass leaves it unusable, not wrong).
	N int

	Every          int // a decode step checkpoints when Every positions passed since the last
	MaxCheckpoints int
	ckpts          []checkpoint // ascending positions
}

type checkpoint struct {
	pos       int
	conv, ssm [][]float32
}

// Default checkpoint policy: every prompt chunk (a turn boundary or a piece of a long
// prompt) and every 256 decoded positions; at most 8 kept.
const (
	DefaultCheckpointEvery = 256
	DefaultMaxCheckpoints  = 8
)

// AttachRecurrent gives the cache a recurrent state of layers × (convFloats, ssmFloats),
// all zero (position 0).
func (c *Cache) AttachRecurrent(layers, convFloats, ssmFloats int) (*Recurrent, error) {
	if layers <= 0 || convFloats <= 0 || ssmFloats <= 0 {
		return nil, fmt.Errorf("kvcache: bad recurrent state %d layers × %d + %d", layers, convFloats, ssmFloats)
	}
	r := &Recurrent{Conv: make([][]float32, layers), SSM: make([][]float32, layers),
		Every: DefaultCheckpointEvery, MaxCheckpoints: DefaultMaxCheckpoints}
	for l := range r.Conv {
		r.Conv[l] = make([]float32, convFloats)
		r.SSM[l] = make([]float32, ssmFloats)
	}
	r.N = c.N
	if c.N != 0 {
		r.N = -1
	}
	c.Rec = r
	return r, nil
}

// Bytes is the memory of one state (the live one, or one checkpoint).
func (r *Recurrent) Bytes() int64 {
	var n int64
	for l := range r.Conv {
		n += 4 * int64(len(r.Conv[l])+len(r.SSM[l]))
	}
	return n
}

// Checkpoints lists the positions that hold a checkpoint, ascending.
func (r *Recurrent) Checkpoints() []int {
	p := make([]int, len(r.ckpts))
	for i, c := range r.ckpts {
		p[i] = c.pos
	}
	return p
}

// Reset zeroes the state (position 0) and drops the checkpoints.
func (r *Recurrent) Reset() {
	for l := range r.Conv {
		clear(r.Conv[l])
		clear(r.SSM[l])
	}
	r.N = 0
	r.ckpts = r.ckpts[:0]
}

// Advanced records that a forward pass of tokens positions brought the state to pos, and
// checkpoints it by the policy: after every chunk of more than one position (prompt
// chunks), and after single steps once Every positions passed since the last checkpoint.
func (r *Recurrent) Advanced(pos, tokens int) {
	r.N = pos
	if r.MaxCheckpoints <= 0 {
		return
	}
	last := 0
	if len(r.ckpts) > 0 {
		last = r.ckpts[len(r.ckpts)-1].pos
	}
	if tokens > 1 || (r.Every > 0 && pos-last >= r.Every) {
		r.Checkpoint()
	}
}

// Checkpoint saves the current state at position N. When MaxCheckpoints are kept, the
// oldest but the first goes (the first usually covers a shared system prompt).
func (r *Recurrent) Checkpoint() {
	if r.N <= 0 {
		return
	}
	if n := len(r.ckpts); n > 0 && r.ckpts[n-1].pos == r.N {
		r.ckpts = r.ckpts[:n-1] // replaced below
	}
	var ck checkpoint
	if len(r.ckpts) >= max(r.MaxCheckpoints, 1) {
		i := min(1, len(r.ckpts)-1)
		ck = r.ckpts[i]
		r.ckpts = append(r.ckpts[:i], r.ckpts[i+1:]...)
	} else {
		ck.conv, ck.ssm = make([][]float32, len(r.Conv)), make([][]float32, len(r.SSM))
		for l := range r.Conv {
			ck.conv[l] = make([]float32, len(r.Conv[l]))
			ck.ssm[l] = make([]float32, len(r.SSM[l]))
		}
	}
	ck.pos = r.N
	for l := range r.Conv {
		copy(ck.conv[l], r.Conv[l])
		copy(ck.ssm[l], r.SSM[l])
	}
	r.ckpts = append(r.ckpts, ck)
}

// rollback makes the state the one at the latest checkpoint at or before n (the empty
// state when there is none), drops later checkpoints, and returns its position.
func (r *Recurrent) rollback(n int) int {
	if n >= r.N && r.N >= 0 {
		return r.N
	}
	i := len(r.ckpts) - 1
	for i >= 0 && r.ckpts[i].pos > n {
		i--
	}
	if i < 0 {
		r.Reset()
		return 0
	}
	ck := r.ckpts[i]
	for l := range r.Conv {
		copy(r.Conv[l], ck.conv[l])
		copy(r.SSM[l], ck.ssm[l])
	}
	r.N = ck.pos
	r.ckpts = r.ckpts[:i+1]
	return r.N
}

// stateAt is the state after pos positions: the live one or a checkpoint's; ok is false
// when neither is at pos.
func (r *Recurrent) stateAt(pos int) (conv, ssm [][]float32, ok bool) {
	if r.N == pos && pos >= 0 {
		return r.Conv, r.SSM, true
	}
	for _, ck := range r.ckpts {
		if ck.pos == pos {
			return ck.conv, ck.ssm, true
		}
	}
	return nil, nil, false
}

// savedStates are the positions a session file of the first n positions holds states at:
// every checkpoint before n, and n itself (which must have a state, see Cache.Resumable).
func (r *Recurrent) savedStates(n int) []int {
	var p []int
	for _, ck := range r.ckpts {
		if ck.pos < n {
			p = append(p, ck.pos)
		}
	}
	if n > 0 {
		p = append(p, n)
	}
	return p
}

// restored makes positions (ascending, the last the cache's new N) the checkpoints, the
// last also the live state, taking the states from load(i, conv, ssm), which fills state i's
// buffers. At most max(MaxCheckpoints, 1) are kept: the first and the latest. On an error
// the state is reset (position 0).
func (r *Recurrent) restored(positions []int, load func(i int, conv, ssm [][]float32) error) error {
	keep := max(r.MaxCheckpoints, 1)
	old := r.ckpts // buffers to reuse
	r.ckpts = make([]checkpoint, 0, min(len(positions), keep))
	r.N = -1
	for i, pos := range positions {
		var ck checkpoint
		if len(old) > 0 {
			ck, old = old[len(old)-1], old[:len(old)-1]
		} else {
			ck.conv, ck.ssm = make([][]float32, len(r.Conv)), make([][]float32, len(r.SSM))
			for l := range r.Conv {
				ck.conv[l] = make([]float32, len(r.Conv[l]))
				ck.ssm[l] = make([]float32, len(r.SSM[l]))
			}
		}
		ck.pos = pos
		if err := load(i, ck.conv, ck.ssm); err != nil {
			r.Reset()
			return err
		}
		if len(r.ckpts) >= keep {
			j := min(1, len(r.ckpts)-1) // as Checkpoint: the oldest but the first goes
			old = append(old, r.ckpts[j])
			r.ckpts = append(r.ckpts[:j], r.ckpts[j+1:]...)
		}
		r.ckpts = append(r.ckpts, ck)
	}
	if len(r.ckpts) == 0 {
		r.Reset()
		return nil
	}
	last := r.ckpts[len(r.ckpts)-1]
	for l := range r.Conv {
		copy(r.Conv[l], last.conv[l])
		copy(r.SSM[l], last.ssm[l])
	}
	r.N = last.pos
	return nil
}
