package model

import (
	"fmt"
	"math"
)

// gdnSerialWork is the largest delta-rule update (state elements × tokens) run without
// the worker pool: about 10 µs of the AVX-512 kernels.
const gdnSerialWork = 1 << 16

// nextScratch holds a qwen3next chunk's activations.
type nextScratch struct {
	qkv, z, ba []float32 // [T × ConvDim], [T × ValueDim], [T × 2·VHeads]
	conv       []float32 // [T × ConvDim] convolved and SiLU'd
	beta, g    []float32 // [T × VHeads]
	o          []float32 // [T × ValueDim] delta-rule output, then gated-normed
	qfull      []float32 // attention: [T × 2·qd] (query and gate per head)
	sg, su, sy []float32 // shared expert: [T × NFFShared] ×2, [T × NEmbd]
	sgate      []float32 // [T]
	gdnl       int       // the recurrent layer being run
}

// nextMixer runs layer l's token mixer (Gated DeltaNet or gated attention) and adds its
// output to the residual stream.
func (s *Session) nextMixer(l, T, p0 int) error {
	m, c := s.m, s.m.Cfg
	L := &m.Layers[l]
	D := c.NEmbd
	for t := 0; t < T; t++ {
		rmsNorm(s.h[t*D:(t+1)*D], s.x[t*D:(t+1)*D], L.AttnNorm, c.Eps)
	}
	if L.Next.Recurrent {
		if err := s.deltaNet(l, T); err != nil {
			return err
		}
	} else if err := s.gatedAttention(l, T, p0); err != nil {
		return err
	}
	for i := range s.x[:T*D] {
		s.x[i] += s.o[i]
	}
	return nil
}

// deltaNet is a Gated DeltaNet layer over a chunk of T tokens; it leaves the projected
// output in s.o and advances the layer's recurrent state.
func (s *Session) deltaNet(l, T int) error {
	m, c := s.m, s.m.Cfg
	L := &m.Layers[l]
	nl, n := L.Next, c.Next
	ns := &s.next
	CD, VD, H, S, K := n.ConvDim(), n.ValueDim(), n.VHeads, n.HeadDim, n.ConvK
	ns.qkv, ns.z, ns.ba = grow(ns.qkv, T*CD), grow(ns.z, T*VD), grow(ns.ba, T*2*H)
	ns.conv, ns.o = grow(ns.conv, T*CD), grow(ns.o, T*VD)
	ns.beta, ns.g = grow(ns.beta, T*H), grow(ns.g, T*H)
	var err error
	if err = s.matmul(&nl.QKV, s.h, T, T > 1, ns.qkv); err != nil {
		return err
	}
	if err = s.matmul(&nl.Z, s.h, T, T > 1, ns.z); err != nil {
		return err
	}
	if err = s.matmul(&nl.BA, s.h, T, T > 1, ns.ba); err != nil {
		return err
	}

	// Causal depthwise convolution (ggml_ssm_conv: a float fused-multiply-add chain over the
	// taps, oldest first), the state shifted to the chunk's last K−1 inputs, then SiLU.
	cs := s.rs.Conv[nl.Index]
	K1 := K - 1
	for ch := 0; ch < CD; ch++ {
		w := nl.Conv[ch*K : (ch+1)*K]
		st := cs[ch*K1 : (ch+1)*K1]
		in := func(i int) float32 { // input i of the window sequence state ++ chunk
			if i < K1 {
				return st[i]
			}
			return ns.qkv[(i-K1)*CD+ch]
		}
		for t := 0; t < min(T, K1); t++ { // windows that reach into the state
			var sum float32
			for i := 0; i < K; i++ {
				sum = fmaf(in(t+i), w[i], sum)
			}
			ns.conv[t*CD+ch] = sum
		}
		var last [8]float32
		for i := 0; i < K1; i++ {
			last[i] = in(T + i)
		}
		copy(st, last[:K1])
	}
	for t := K1; t < T; t++ { // windows inside the chunk: all channels at once
		convTaps(ns.conv[t*CD:(t+1)*CD], ns.qkv[(t-K1)*CD:], nl.ConvT, CD, K)
	}
	for t := 0; t < T; t++ {
		row := ns.conv[t*CD : (t+1)*CD]
		siluRow(row, row)
		// L2-normalized q and k per key head.
		for h := 0; h < 2*n.KHeads; h++ {
			l2Norm(row[h*S:(h+1)*S], c.Eps)
		}
	}

	// Gates: β = sigmoid(b), g = softplus(a + dt_bias)·ssm_a, per value head. ssm_ba holds,
	// per key head, its VHeads/KHeads β then as many α.
	rf := H / n.KHeads
	for t := 0; t < T; t++ {
		ba := ns.ba[t*2*H : (t+1)*2*H]
		for kh := 0; kh < n.KHeads; kh++ {
			for i := 0; i < rf; i++ {
				h := kh*rf + i
				ns.beta[t*H+h] = sigmoid(ba[kh*2*rf+i])
				ns.g[t*H+h] = softplus(ba[kh*2*rf+rf+i]+nl.DtBias[h]) * nl.A[h]
			}
		}
	}

	// The delta rule, token by token, one value head per work item; on the calling goroutine
	// when the whole update is small (decode of a small model: a parallel loop's hand-off
	// costs more than the work).
	ns.gdnl = nl.Index
	if T*H*S*S <= gdnSerialWork {
		for h := 0; h < H; h++ {
			s.gdnHead(h, T)
		}
	} else {
		s.pool.For(H, 1, func(lo, hi int) {
			for h := lo; h < hi; h++ {
				s.gdnHead(h, T)
			}
		})
	}

	// Gated RMSNorm per head: rms_norm(o)·ssm_norm·silu(z).
	for t := 0; t < T; t++ {
		for h := 0; h < H; h++ {
			o := ns.o[t*VD+h*S : t*VD+(h+1)*S]
			z := ns.z[t*VD+h*S : t*VD+(h+1)*S]
			rmsNorm(o, o, nl.Norm, c.Eps)
			siluRow(z, z)
			for i := range o {
				o[i] *= z[i]
			}
		}
	}
	return s.matmul(&nl.Out, ns.o, T, T > 1, s.o)
}

// gdnHead is ggml_compute_forward_gated_delta_net for value head h over the chunk: per
// token, S ← S·exp(g); δ_j = (v_j − S_{:,j}·k)·β; S_{:,j} += k·δ_j; o_j = (S_{:,j}·q)/√d,
// a row of the state at a time (qwen3next_gdn.go).
func (s *Session) gdnHead(h, T int) {
	c := s.m.Cfg
	n := c.Next
	ns := &s.next
	CD, VD, H, S := n.ConvDim(), n.ValueDim(), n.VHeads, n.HeadDim
	kh := h / (H / n.KHeads) // q and k heads repeat-interleave onto the value heads
	st := s.rs.SSM[ns.gdnl][h*S*S : (h+1)*S*S]
	scale := 1 / float32(math.Sqrt(float64(float32(S))))
	for t := 0; t < T; t++ {
		row := ns.conv[t*CD : (t+1)*CD]
		q := row[kh*S : (kh+1)*S]
		k := row[n.KeyDim()+kh*S : n.KeyDim()+(kh+1)*S]
		v := row[2*n.KeyDim()+h*S : 2*n.KeyDim()+(h+1)*S]
		beta := ns.beta[t*H+h]
		eg := expf(ns.g[t*H+h])
		o := ns.o[t*VD+h*S : t*VD+(h+1)*S]
		for j := 0; j < S; j++ { // row by row: see qwen3next_gdn.go
			r := st[j*S : (j+1)*S]
			d := (v[j] - gdnDecayDot(r, k, eg)) * beta
			o[j] = gdnUpdateDot(r, k, q, d) * scale
		}
	}
}

// gatedAttention is a qwen3next full-attention layer: the Q projection carries a gate per
// head (query then gate, head by head), Q/K RMS norms, partial NeoX RoPE, flash attention
// over the F16 cache, the output scaled by sigmoid(gate), then attn_output into s.o.
func (s *Session) gatedAttention(l, T, p0 int) error {
	m, c := s.m, s.m.Cfg
	L := &m.Layers[l]
	ns := &s.next
	hd, qd := c.HeadDim, c.NHead*c.HeadDim
	kl := L.Next.Index
	ns.qfull = grow(ns.qfull, T*2*qd)
	var err error
	if err = s.matmul(&L.Wq, s.h, T, T > 1, ns.qfull); err != nil {
		return err
	}
	if err = s.matmul(&L.Wk, s.h, T, T > 1, s.k); err != nil {
		return err
	}
	if err = s.matmul(&L.Wv, s.h, T, T > 1, s.v); err != nil {
		return err
	}
	for t := 0; t < T; t++ {
		s.rope.at(p0 + t)
		for h := 0; h < c.NHead; h++ {
			src := ns.qfull[t*2*qd+2*h*hd:]
			x := s.q[t*qd+h*hd : t*qd+(h+1)*hd]
			rmsNorm(x, src[:hd], L.QNorm, c.Eps)
			s.rope.apply(x)
		}
		s.storeKV(L, kl, t, p0)
	}
	s.attendChunk(kl, T, p0)
	for t := 0; t < T; t++ {
		for h := 0; h < c.NHead; h++ {
			g := ns.qfull[t*2*qd+2*h*hd+hd : t*2*qd+2*h*hd+2*hd]
			a := s.att[t*qd+h*hd : t*qd+(h+1)*hd]
			for i := range a {
				a[i] *= sigmoid(g[i])
			}
		}
	}
	return s.matmul(&L.Wo, s.att, T, T > 1, s.o)
}

// sharedExpert adds layer l's gated shared expert to the routed experts' output s.moe:
// moe + silu(h·Wg)⊙(h·Wu)·Wd · sigmoid(h·w_gate).
func (s *Session) sharedExpert(l, T int) error {
	c := s.m.Cfg
	sh := s.m.Layers[l].Shared
	ns := &s.next
	D, F := c.NEmbd, sh.Gate.Rows
	ns.sg, ns.su, ns.sy, ns.sgate = grow(ns.sg, T*F), grow(ns.su, T*F), grow(ns.sy, T*D), grow(ns.sgate, T)
	var err error
	if err = s.matmul(&sh.Gate, s.h, T, T > 1, ns.sg); err != nil {
		return err
	}
	if err = s.matmul(&sh.Up, s.h, T, T > 1, ns.su); err != nil {
		return err
	}
	for t := 0; t < T; t++ {
		swiglu(ns.sg[t*F:(t+1)*F], ns.sg[t*F:(t+1)*F], ns.su[t*F:(t+1)*F])
	}
	if err = s.matmul(&sh.Down, ns.sg, T, T > 1, ns.sy); err != nil {
		return err
	}
	// One weight row: tinyBLAS takes only multiples of 4 rows, so llama.cpp sums it with
	// ggml_vec_dot per token.
	if err = s.matmul(&sh.GateInp, s.h, T, false, ns.sgate); err != nil {
		return err
	}
	for t := 0; t < T; t++ {
		g := sigmoid(ns.sgate[t])
		y, out := ns.sy[t*D:(t+1)*D], s.moe[t*D:(t+1)*D]
		for i := range out {
			out[i] += float32(y[i] * g)
		}
	}
	return nil
}

// sigmoid is ggml's op_sigmoid: 1/(1+expf(−x)) with libm's expf.
func sigmoid(x float32) float32 { return 1 / (1 + expf(-x)) }

// softplus is ggml's op_softplus: x above 20, else logf(1+expf(x)).
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return logf(1 + expf(x))
}

// siluRow is ggml_vec_silu_f32: vector lanes (ggml_v_silu) in steps of 16, libm for the rest.
func siluRow(y, x []float32) {
	i := 0
	var e [simdWidth]float32
	for ; i+simdWidth <= len(x); i += simdWidth {
		for l := range e {
			e[l] = -x[i+l]
		}
		vexpRow(e[:], e[:]) // vexpf's bits, 8 lanes at a time where the CPU allows
		for l, ev := range e {
			y[i+l] = x[i+l] / (1 + ev) // vsilu
		}
	}
	for ; i < len(x); i++ {
		y[i] = silu(x[i])
	}
}

// l2Norm is ggml_l2_norm on one row: x/max(√Σx², eps), the sum in float64, the root of
// its float32 rounding.
func l2Norm(x []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	scale := 1 / max(float32(math.Sqrt(float64(float32(sum)))), eps)
	for i := range x {
		x[i] *= scale
	}
}

// vecDotF32 is ggml_vec_dot_f32 (AVX-512): four 16-lane fused-multiply-add accumulators over
// steps of 64, folded 0+2, 1+3, then 0+1, reduced as _mm512_reduce_add_ps, the rest added
// one product at a time.
func vecDotF32(x, y []float32) float32 {
	n := len(x)
	var sum [4][simdWidth]float32
	np := n &^ 63
	for i := 0; i < np; i += 64 {
		for j := 0; j < 4; j++ {
			xs, ys := x[i+16*j:i+16*j+16], y[i+16*j:i+16*j+16]
			for l := range simdWidth {
				sum[j][l] = fmaf(xs[l], ys[l], sum[j][l])
			}
		}
	}
	for l := range simdWidth {
		sum[0][l] += sum[2][l]
		sum[1][l] += sum[3][l]
	}
	for l := range simdWidth {
		sum[0][l] += sum[1][l]
	}
	s := reduceLanes(&sum[0])
	for i := np; i < n; i++ {
		s = fmaf(x[i], y[i], s)
	}
	return s
}

// attachRecurrent gives a qwen3next session's cache its Gated DeltaNet state: the
// recurrent state lives with the KV cache (kvcache.Recurrent: the state after the cached
// positions, checkpoints for prompt reuse), which holds keys and values of the
// full-attention layers only.
func (s *Session) attachRecurrent() error {
	n := s.m.Cfg.Next
	if n == nil {
		return nil
	}
	rs, err := s.kv.AttachRecurrent(n.NRecurrent, n.ConvStateFloats(), n.SSMStateFloats())
	s.rs = rs
	return err
}

// beginRecurrent checks that the recurrent state (if any) is the state after p0 positions
// (a sequence starting at 0 starts from zeros) and marks it as being updated.
func (s *Session) beginRecurrent(p0 int) error {
	if s.rs == nil {
		return nil
	}
	if p0 == 0 {
		s.rs.Reset()
	} else if s.rs.N != p0 {
		return fmt.Errorf("model: the recurrent state belongs to position %d, not %d", s.rs.N, p0)
	}
	s.rs.N = -1
	return nil
}
