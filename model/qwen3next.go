package model

import (
	"fmt"

	"github.com/regolith/regolith/gguf"
)

// qwen3next (Qwen3-Next) is a hybrid: of every FullAttnInterval layers the last is gated full
// attention and the others are Gated DeltaNet (linear attention with a fixed-size recurrent
// state); every layer ends in routed experts plus a shared expert gated by a sigmoid. The
// pieces are computed as llama.cpp's CPU backend computes them (src/models/qwen3next.cpp,
// ggml-cpu's ssm_conv, l2_norm and the fused gated_delta_net):
//
//   - llama.cpp resolves its fused Gated DeltaNet ops as supported on the CPU, so both prefill
//     and decode run GGML_OP_GATED_DELTA_NET, which walks the tokens of a chunk one by one.
//     Prefill is therefore the recurrent form too (its chunkwise graph, used on backends
//     without the fused op, sums in another order): regolith's prefill and decode are the
//     same recurrence, and splitting a prompt into chunks changes no bit of it.
//   - Gated attention is the qwen3moe flash attention with a per-head sigmoid gate carried
//     in the Q projection and NeoX RoPE over the first rope.dimension_count dimensions.

// NextConfig holds qwen3next's linear-attention hyperparameters.
type NextConfig struct {
	ConvK        int // ssm.conv_kernel: taps of the causal depthwise convolution
	HeadDim      int // ssm.state_size: key and value head size of the linear attention
	KHeads       int // ssm.group_count: key heads
	VHeads       int // ssm.time_step_rank: value heads (a multiple of KHeads)
	NFFShared    int // shared expert FFN width
	AttnInterval int // full_attention_interval
	NRecurrent   int // Gated DeltaNet layers
	NAttn        int // full-attention layers (the KV cache holds only these)
}

// KeyDim, ValueDim and ConvDim are the widths of q/k, v and the convolved qkv.
func (n *NextConfig) KeyDim() int   { return n.HeadDim * n.KHeads }
func (n *NextConfig) ValueDim() int { return n.HeadDim * n.VHeads }
func (n *NextConfig) ConvDim() int  { return 2*n.KeyDim() + n.ValueDim() }

// ConvStateFloats and SSMStateFloats are one recurrent layer's state sizes.
func (n *NextConfig) ConvStateFloats() int { return (n.ConvK - 1) * n.ConvDim() }
func (n *NextConfig) SSMStateFloats() int  { return n.VHeads * n.HeadDim * n.HeadDim }

// NextLayer is a qwen3next layer's kind and, for a Gated DeltaNet layer, its tensors.
type NextLayer struct {
	Recurrent bool
	Index     int // KV-cache layer (attention) or recurrent-state layer (Gated DeltaNet)

	QKV    Weight    // attn_qkv: [ConvDim rows × NEmbd]
	Z      Weight    // attn_gate: [ValueDim rows × NEmbd]
	BA     Weight    // ssm_ba: [2·VHeads rows × NEmbd], per key head (β…, α…)
	Conv   []float32 // ssm_conv1d: [ConvDim × ConvK]
	ConvT  []float32 // the same, tap-major: [ConvK × ConvDim]
	DtBias []float32 // ssm_dt.bias: [VHeads]
	A      []float32 // ssm_a: [VHeads] (−exp(A_log))
	Norm   []float32 // ssm_norm: [HeadDim]
	Out    Weight    // ssm_out: [NEmbd rows × ValueDim]
}

// SharedExpert is qwen3next's always-on expert and its sigmoid gate.
type SharedExpert struct {
	GateInp        Weight // ffn_gate_inp_shexp: one row of NEmbd
	Gate, Up, Down Weight
}

func loadQwen3Next(f *gguf.File) (*Model, error) {
	c, err := readConfig(f)
	if err != nil {
		return nil, err
	}
	n := &NextConfig{AttnInterval: 4}
	if err := readInts(f, []archInt{
		{"ssm.conv_kernel", &n.ConvK, true},
		{"ssm.state_size", &n.HeadDim, true},
		{"ssm.group_count", &n.KHeads, true},
		{"ssm.time_step_rank", &n.VHeads, true},
		{"expert_shared_feed_forward_length", &n.NFFShared, true},
		{"full_attention_interval", &n.AttnInterval, false},
	}, 1<<20); err != nil {
		return nil, err
	}
	if n.VHeads%n.KHeads != 0 {
		return nil, fmt.Errorf("model: %d value heads is not a multiple of %d key heads", n.VHeads, n.KHeads)
	}
	if v, ok := f.ArchUint("ssm.inner_size"); ok && int(v) != n.ValueDim() {
		return nil, fmt.Errorf("model: ssm.inner_size %d differs from %d value heads × %d", v, n.VHeads, n.HeadDim)
	}
	if _, ok := f.Get(c.Arch + ".attention.recurrent_layers"); ok {
		return nil, fmt.Errorf("model: %s.attention.recurrent_layers is not supported", c.Arch)
	}
	c.Next = n

	m, ld, err := loadBase(f, c)
	if err != nil {
		return nil, err
	}
	c = m.Cfg
	qd, kvd := c.NHead*c.HeadDim, c.NHeadKV*c.HeadDim
	m.Layers = make([]Layer, c.NLayer)
	for i := range m.Layers {
		L := &m.Layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		L.AttnNorm = ld.vector(p+"attn_norm.weight", c.NEmbd)
		L.FFNNorm = ld.vector(p+"post_attention_norm.weight", c.NEmbd)
		nl := &NextLayer{Recurrent: (i+1)%n.AttnInterval != 0}
		L.Next = nl
		if nl.Recurrent {
			nl.Index = n.NRecurrent
			n.NRecurrent++
			if _, ok := f.Tensor(p + "attn_qkv.weight"); !ok {
				return nil, fmt.Errorf("model: %sattn_qkv.weight is missing (the legacy ssm_in layout is not supported)", p)
			}
			nl.QKV = ld.weight(p+"attn_qkv.weight", c.NEmbd, n.ConvDim())
			nl.Z = ld.weight(p+"attn_gate.weight", c.NEmbd, n.ValueDim())
			nl.BA = ld.weight(p+"ssm_ba.weight", c.NEmbd, 2*n.VHeads)
			nl.Conv = ld.vector2(p+"ssm_conv1d.weight", n.ConvK, n.ConvDim())
			if nl.Conv != nil {
				nl.ConvT = make([]float32, len(nl.Conv))
				for ch := 0; ch < n.ConvDim(); ch++ {
					for i := 0; i < n.ConvK; i++ {
						nl.ConvT[i*n.ConvDim()+ch] = nl.Conv[ch*n.ConvK+i]
					}
				}
			}
			nl.DtBias = ld.vector(p+"ssm_dt.bias", n.VHeads)
			nl.A = ld.vector(p+"ssm_a", n.VHeads)
			nl.Norm = ld.vector(p+"ssm_norm.weight", n.HeadDim)
			nl.Out = ld.weight(p+"ssm_out.weight", n.ValueDim(), c.NEmbd)
		} else {
			nl.Index = n.NAttn
			n.NAttn++
			L.Wq = ld.weight(p+"attn_q.weight", c.NEmbd, 2*qd) // query and gate, interleaved per head
			L.Wk = ld.weight(p+"attn_k.weight", c.NEmbd, kvd)
			L.Wv = ld.weight(p+"attn_v.weight", c.NEmbd, kvd)
			L.Wo = ld.weight(p+"attn_output.weight", qd, c.NEmbd)
			L.QNorm = ld.vector(p+"attn_q_norm.weight", c.HeadDim)
			L.KNorm = ld.vector(p+"attn_k_norm.weight", c.HeadDim)
		}
		L.Router = ld.weight(p+"ffn_gate_inp.weight", c.NEmbd, c.NExpert)
		L.Gate = ld.experts(p+"ffn_gate_exps.weight", c.NEmbd, c.NFFExp, c.NExpert)
		L.Up = ld.experts(p+"ffn_up_exps.weight", c.NEmbd, c.NFFExp, c.NExpert)
		L.Down = ld.experts(p+"ffn_down_exps.weight", c.NFFExp, c.NEmbd, c.NExpert)
		if _, ok := f.Tensor(p + "ffn_up_shexp.weight"); ok {
			sh := &SharedExpert{}
			if t := ld.tensor(p+"ffn_gate_inp_shexp.weight", c.NEmbd); t != nil {
				sh.GateInp = ld.view(t, c.NEmbd, 1)
			}
			sh.Gate = ld.weight(p+"ffn_gate_shexp.weight", c.NEmbd, n.NFFShared)
			sh.Up = ld.weight(p+"ffn_up_shexp.weight", c.NEmbd, n.NFFShared)
			sh.Down = ld.weight(p+"ffn_down_shexp.weight", n.NFFShared, c.NEmbd)
			L.Shared = sh
		}
	}
	if ld.err != nil {
		return nil, ld.err
	}
	if n.NAttn == 0 {
		return nil, fmt.Errorf("model: qwen3next model without a full-attention layer")
	}
	return m, nil
}

// vector2 loads a small 2-D F32 tensor of dims [cols, rows] as floats, row-major.
func (ld *loader) vector2(name string, cols, rows int) []float32 {
	t := ld.tensor(name, cols, rows)
	if t == nil {
		return nil
	}
	w := ld.view(t, cols, rows)
	out := make([]float32, cols*rows)
	for r := 0; r < rows && ld.err == nil; r++ {
		if err := dequantRow(&w, r, out[r*cols:(r+1)*cols]); err != nil {
			ld.err = fmt.Errorf("model: tensor %s: %w", name, err)
		}
	}
	return out
}

// kvLayers is the number of layers that keep keys and values: qwen3next's full-attention
// layers only.
func kvLayers(c *Config) int {
	if c.Next != nil {
		return c.Next.NAttn
	}
	return c.NLayer
}

// KVLayers is the number of layers that keep keys and values in the KV cache.
func (c *Config) KVLayers() int { return kvLayers(c) }

// RecurrentStateBytes is the memory of one copy of the recurrent (Gated DeltaNet) state, 0
// without recurrent layers. The live state and every checkpoint kvcache.Recurrent keeps
// cost this much each.
func (c *Config) RecurrentStateBytes() int64 {
	n := c.Next
	if n == nil {
		return 0
	}
	return 4 * int64(n.NRecurrent) * int64(n.ConvStateFloats()+n.SSMStateFloats())
}

// MixerScratchFloats is the scratch, in floats per token of a chunk, that qwen3next's token
// mixers and shared expert need on top of what every architecture has (nextScratch: qkv,
// conv, z, o, β/α/g, the gated query, the shared expert's gate, up, output and gate value),
// 0 for other architectures.
func (c *Config) MixerScratchFloats() int {
	n := c.Next
	if n == nil {
		return 0
	}
	return 2*n.ConvDim() + 2*n.ValueDim() + 4*n.VHeads + 2*c.NHead*c.HeadDim + 2*n.NFFShared + c.NEmbd + 1
}
