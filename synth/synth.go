// Package synth writes random-weight GGUF models with the shape of real ones, for
// benchmarks of models larger than memory: every tensor a real model of the architecture
// has, in llama.cpp's layout, deterministic from a seed, streamed out one tensor at a time.
//
// The weights are random but not arbitrary:
//
//   - Scales keep activations bounded through every layer: Q, K, V, gate and up are
//     drawn with σ = 1/√fan_in (unit-RMS outputs); the projections into the residual
//     stream (attn_output, ffn_down) with σ chosen so that each layer adds r = 1/√(2·L)
//     RMS to a unit-RMS stream (L: the shape's full layer count, kept when --layers
//     shrinks it), so the stream's RMS stays within about √2 of the embeddings';
//     output.weight gives logits with σ ≈ 4, decisive like a trained model's.
//   - Routers (F32) give a non-uniform, stable expert popularity: every token embedding
//     carries a shared unit direction μ with weight α = 0.5 (of unit RMS), which the
//     residual stream keeps (the layers add nothing systematic along it). Router row e
//     of layer l is b_e·μ/(α_l·√n) plus a rank-16 random part: b_e ~ N(0, Bias²) is the
//     expert's bias in logit space (α_l compensates the dilution of μ by the layers'
//     outputs), and the rank-16 part (A·V, V sixteen random unit directions, A ~
//     N(0, 4/16)) gives logits of σ ≈ 2 that depend on only sixteen directions of the
//     hidden state, so states close in that subspace (the same token, similar contexts)
//     route alike. A Gaussian bias in logit space makes the selection frequencies roughly
//     log-normal: a few experts several times the uniform rate, a long tail of rare ones.
//   - Quantized weights are generated directly as blocks (uniform quants, one scale per
//     tensor), not quantized from floats, so a 30 GB file is limited by the disk; the
//     token embeddings (which carry μ) are drawn as floats and quantized with
//     quant.QuantizeRow. Norm weights are 1.
//
// Two architectures: qwen3moe (shape qwen3-30b-a3b) and qwen3next (shape
// qwen3-next-80b-a3b: Gated DeltaNet and gated attention layers, routed experts plus a
// shared expert; see layoutNext), laid out tensor for tensor as llama.cpp's converter and
// quantizer write those models, so llama.cpp loads the files.
package synth

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/f16"
	"github.com/regolith/regolith/quant"
)

// Shape is the geometry of a model to synthesize.
type Shape struct {
	Name        string
	Arch        string // qwen3moe or qwen3next
	NLayer      int
	NEmbd       int
	NHead       int
	NHeadKV     int
	HeadDim     int
	NExpert     int
	NExpertUsed int
	NFFExp      int
	NFF         int // feed_forward_length metadata (dense FFN width of the family)
	NVocab      int
	CtxTrain    int
	RopeBase    float32
	Eps         float32

	// qwen3next only.
	NFFShared    int // expert_shared_feed_forward_length: the shared expert's FFN width
	AttnInterval int // full_attention_interval: every AttnInterval-th layer is full attention
	RopeDims     int // rope.dimension_count: dimensions rotated per head (partial RoPE)
	SSMConv      int // ssm.conv_kernel: taps of the Gated DeltaNet's causal convolution
	SSMHeadDim   int // ssm.state_size: key and value head size of the linear attention
	SSMKHeads    int // ssm.group_count: key heads
	SSMVHeads    int // ssm.time_step_rank: value heads
}

var shapes = []Shape{
	{Name: "qwen3-30b-a3b", Arch: "qwen3moe", NLayer: 48, NEmbd: 2048, NHead: 32, NHeadKV: 4, HeadDim: 128,
		NExpert: 128, NExpertUsed: 8, NFFExp: 768, NFF: 6144, NVocab: 151936, CtxTrain: 40960, RopeBase: 1e6, Eps: 1e-6},
	// Qwen/Qwen3-Next-80B-A3B-Instruct's config.json: hidden_size 2048, num_hidden_layers 48,
	// full_attention_interval 4 (12 × (3 Gated DeltaNet + 1 gated attention)), 16 query / 2
	// KV heads of head_dim 256, partial_rotary_factor 0.25 (64 rotated dimensions),
	// rope_theta 1e7, linear attention 16 key / 32 value heads of 128, conv kernel 4, 512
	// experts top-10 of moe_intermediate_size 512, one shared expert of 512,
	// intermediate_size 5120, max_position_embeddings 262144; as llama.cpp's converter
	// writes it (ssm.inner_size = 32·128).
	{Name: "qwen3-next-80b-a3b", Arch: "qwen3next", NLayer: 48, NEmbd: 2048, NHead: 16, NHeadKV: 2, HeadDim: 256,
		NExpert: 512, NExpertUsed: 10, NFFExp: 512, NFF: 5120, NVocab: 151936, CtxTrain: 262144, RopeBase: 1e7, Eps: 1e-6,
		NFFShared: 512, AttnInterval: 4, RopeDims: 64, SSMConv: 4, SSMHeadDim: 128, SSMKHeads: 16, SSMVHeads: 32},
}

// Shapes lists the known shapes' names.
func Shapes() []string {
	var s []string
	for _, x := range shapes {
		s = append(s, x.Name)
	}
	return s
}

// ShapeByName returns a known shape.
func ShapeByName(name string) (Shape, error) {
	for _, x := range shapes {
		if x.Name == name {
			return x, nil
		}
	}
	return Shape{}, fmt.Errorf("synth: unknown shape %q (known: %s)", name, strings.Join(Shapes(), ", "))
}

// Options configure a synthesized model.
type Options struct {
	Shape  Shape
	Layers int        // 0: the shape's; else fewer layers (scales stay the full model's)
	Type   quant.Type // Q8_0 or Q4_K for the matrices
	Seed   uint64
	// Vocab is the tokenizer metadata (tokenizer.* keys) to embed; its token count must
	// equal Shape.NVocab.
	Vocab []gguf.KV
	// Bias is the standard deviation of the experts' popularity bias in logit units
	// (0: 1.0; negative: none, uniform popularity).
	Bias    float64
	Workers int // generator goroutines (0: GOMAXPROCS)
}

// Plan is a model's layout, computed before any weight is generated.
type Plan struct {
	o       Options
	kv      []gguf.KV
	specs   []gguf.TensorSpec
	gens    []func(dst []byte)
	size    int64
	workers int
}

const alpha = 0.5 // weight of the shared direction μ in the token embeddings

// NewPlan checks the options and lays the model out.
func NewPlan(o Options) (*Plan, error) {
	s := o.Shape
	next := s.Arch == "qwen3next"
	if s.Arch != "qwen3moe" && !next {
		return nil, fmt.Errorf("synth: architecture %q is not supported (qwen3moe, qwen3next)", s.Arch)
	}
	if o.Type != quant.Q8_0 && o.Type != quant.Q4_K {
		return nil, fmt.Errorf("synth: type %s is not supported (Q8_0, Q4_K)", o.Type)
	}
	L := s.NLayer
	if o.Layers > 0 {
		if o.Layers > s.NLayer {
			return nil, fmt.Errorf("synth: --layers %d is more than the shape's %d", o.Layers, s.NLayer)
		}
		L = o.Layers
	}
	rows := []int{s.NEmbd, s.NFFExp, s.NHead * s.HeadDim}
	if next {
		if err := checkNext(s, L); err != nil {
			return nil, err
		}
		rows = append(rows, s.NFFShared, s.SSMVHeads*s.SSMHeadDim)
	}
	bs := o.Type.BlockSize()
	for _, d := range rows {
		if d%bs != 0 {
			return nil, fmt.Errorf("synth: row of %d elements is not a multiple of %s's block size %d", d, o.Type, bs)
		}
	}
	nTok := 0
	for _, kv := range o.Vocab {
		if !strings.HasPrefix(kv.Key, "tokenizer.") {
			return nil, fmt.Errorf("synth: vocabulary key %q is not a tokenizer key", kv.Key)
		}
		if kv.Key == "tokenizer.ggml.tokens" {
			if a, ok := kv.Value.(gguf.Array); ok {
				nTok = a.Len()
			}
		}
	}
	if nTok != s.NVocab {
		return nil, fmt.Errorf("synth: the vocabulary has %d tokens, the shape %d", nTok, s.NVocab)
	}
	if o.Bias == 0 {
		o.Bias = 1.0
	}
	if o.Bias < 0 {
		o.Bias = 0
	}
	p := &Plan{o: o, workers: o.Workers}
	if p.workers <= 0 {
		p.workers = runtime.GOMAXPROCS(0)
	}
	a := s.Arch + "."
	u32 := func(k string, v int) gguf.KV { return gguf.KV{Key: a + k, Type: gguf.TypeUint32, Value: uint32(v)} }
	f32 := func(k string, v float32) gguf.KV { return gguf.KV{Key: a + k, Type: gguf.TypeFloat32, Value: v} }
	str := func(k, v string) gguf.KV { return gguf.KV{Key: k, Type: gguf.TypeString, Value: v} }
	ftype := 7 // LLAMA_FTYPE_MOSTLY_Q8_0
	if o.Type == quant.Q4_K {
		ftype = 15 // LLAMA_FTYPE_MOSTLY_Q4_K_M
	}
	p.kv = []gguf.KV{
		str("general.architecture", s.Arch),
		str("general.type", "model"),
		str("general.name", fmt.Sprintf("synth %s %d layers %s seed %d (random weights)", s.Name, L, o.Type, o.Seed)),
		u32("block_count", L),
		u32("context_length", s.CtxTrain),
		u32("embedding_length", s.NEmbd),
		u32("feed_forward_length", s.NFF),
		u32("attention.head_count", s.NHead),
		u32("attention.head_count_kv", s.NHeadKV),
		u32("attention.key_length", s.HeadDim),
		u32("attention.value_length", s.HeadDim),
		f32("rope.freq_base", s.RopeBase),
		f32("attention.layer_norm_rms_epsilon", s.Eps),
		u32("expert_count", s.NExpert),
		u32("expert_used_count", s.NExpertUsed),
		u32("expert_feed_forward_length", s.NFFExp),
	}
	if next { // in the order llama.cpp's converter writes them
		p.kv = append(p.kv,
			u32("expert_shared_feed_forward_length", s.NFFShared),
			u32("ssm.conv_kernel", s.SSMConv),
			u32("ssm.state_size", s.SSMHeadDim),
			u32("ssm.group_count", s.SSMKHeads),
			u32("ssm.time_step_rank", s.SSMVHeads),
			u32("ssm.inner_size", s.SSMVHeads*s.SSMHeadDim),
			u32("full_attention_interval", s.AttnInterval),
			u32("rope.dimension_count", s.RopeDims))
	}
	p.kv = append(p.kv, o.Vocab...)
	p.kv = append(p.kv,
		gguf.KV{Key: "general.quantization_version", Type: gguf.TypeUint32, Value: uint32(2)},
		gguf.KV{Key: "general.file_type", Type: gguf.TypeUint32, Value: uint32(ftype)})

	n, qd, kvd := s.NEmbd, s.NHead*s.HeadDim, s.NHeadKV*s.HeadDim
	r := 1 / math.Sqrt(2*float64(s.NLayer)) // RMS each block adds to the stream
	mu := unitVector(o.Seed, 0xb1a5, n)
	seedOf := func(i int) uint64 { return mix(o.Seed, uint64(i)+1) }
	add := func(name string, t quant.Type, dims []uint64, gen func(seed uint64, dst []byte)) {
		sd := seedOf(len(p.specs))
		p.specs = append(p.specs, gguf.TensorSpec{Name: name, Type: t, Dims: dims})
		p.gens = append(p.gens, func(dst []byte) { gen(sd, dst) })
	}
	ones := func(_ uint64, dst []byte) {
		for i := 0; i < len(dst); i += 4 {
			binary.LittleEndian.PutUint32(dst[i:], math.Float32bits(1))
		}
	}
	random := func(sigma float64) func(uint64, []byte) {
		return func(seed uint64, dst []byte) { p.fillRandom(o.Type, dst, sigma, seed) }
	}
	qt := o.Type
	embd := func(seed uint64, dst []byte) { p.fillEmbeddings(dst, mu, seed) }
	if next {
		p.layoutNext(L, r, mu, embd, add, ones, random)
		return p.finish()
	}
	add("token_embd.weight", qt, []uint64{uint64(n), uint64(s.NVocab)}, func(seed uint64, dst []byte) {
		p.fillEmbeddings(dst, mu, seed)
	})
	for l := 0; l < L; l++ {
		pre := fmt.Sprintf("blk.%d.", l)
		// α_l: μ's share of the normalized stream after l blocks (the stream's variance grows
		// by about r² per block and sublayer, relative to the unit-RMS embeddings).
		al := alpha / math.Sqrt(1+2*float64(l)*r*r)
		add(pre+"attn_norm.weight", quant.F32, []uint64{uint64(n)}, ones)
		add(pre+"attn_q.weight", qt, []uint64{uint64(n), uint64(qd)}, random(1/math.Sqrt(float64(n))))
		add(pre+"attn_k.weight", qt, []uint64{uint64(n), uint64(kvd)}, random(1/math.Sqrt(float64(n))))
		add(pre+"attn_v.weight", qt, []uint64{uint64(n), uint64(kvd)}, random(1/math.Sqrt(float64(n))))
		add(pre+"attn_output.weight", qt, []uint64{uint64(qd), uint64(n)}, random(2*r/math.Sqrt(float64(qd))))
		add(pre+"attn_q_norm.weight", quant.F32, []uint64{uint64(s.HeadDim)}, ones)
		add(pre+"attn_k_norm.weight", quant.F32, []uint64{uint64(s.HeadDim)}, ones)
		add(pre+"ffn_norm.weight", quant.F32, []uint64{uint64(n)}, ones)
		add(pre+"ffn_gate_inp.weight", quant.F32, []uint64{uint64(n), uint64(s.NExpert)}, func(seed uint64, dst []byte) {
			p.fillRouter(dst, mu, al, seed)
		})
		ne := uint64(s.NExpert)
		add(pre+"ffn_gate_exps.weight", qt, []uint64{uint64(n), uint64(s.NFFExp), ne}, random(1/math.Sqrt(float64(n))))
		add(pre+"ffn_up_exps.weight", qt, []uint64{uint64(n), uint64(s.NFFExp), ne}, random(1/math.Sqrt(float64(n))))
		add(pre+"ffn_down_exps.weight", qt, []uint64{uint64(s.NFFExp), uint64(n), ne}, random(2*r/math.Sqrt(float64(s.NFFExp))))
	}
	add("output_norm.weight", quant.F32, []uint64{uint64(n)}, ones)
	add("output.weight", qt, []uint64{uint64(n), uint64(s.NVocab)}, random(4/math.Sqrt(float64(n))))
	return p.finish()
}

// finish sizes the laid-out file.
func (p *Plan) finish() (*Plan, error) {
	sw, err := gguf.NewStreamWriter(io.Discard, p.kv, p.specs)
	if err != nil {
		return nil, err
	}
	p.size = sw.Size()
	return p, nil
}

// checkNext checks a qwen3next shape's hybrid geometry for L layers.
func checkNext(s Shape, L int) error {
	switch {
	case s.AttnInterval < 1:
		return fmt.Errorf("synth: full_attention_interval %d", s.AttnInterval)
	case L < s.AttnInterval:
		return fmt.Errorf("synth: %d layers hold no full-attention layer (every %d-th is one); use at least %d", L, s.AttnInterval, s.AttnInterval)
	case s.SSMKHeads < 1 || s.SSMVHeads%s.SSMKHeads != 0:
		return fmt.Errorf("synth: %d value heads is not a multiple of %d key heads", s.SSMVHeads, s.SSMKHeads)
	case s.SSMConv < 2 || s.SSMConv > 8:
		return fmt.Errorf("synth: conv kernel %d (2..8)", s.SSMConv)
	case s.RopeDims < 2 || s.RopeDims%2 != 0 || s.RopeDims > s.HeadDim:
		return fmt.Errorf("synth: rope.dimension_count %d for head size %d", s.RopeDims, s.HeadDim)
	case s.SSMHeadDim < 1 || s.NFFShared < 1:
		return fmt.Errorf("synth: linear-attention head size %d, shared expert FFN %d", s.SSMHeadDim, s.NFFShared)
	}
	return nil
}

// layoutNext lays out a qwen3next model as llama.cpp's converter writes one: output,
// output_norm and token_embd first, then each block's tensors in name order. Of every
// AttnInterval layers the last is gated full attention (attn_q carries a gate per head, so
// it is twice the query width) and the others Gated DeltaNet; every layer ends in routed
// experts plus a shared expert behind a sigmoid gate (ffn_gate_inp_shexp).
//
// The Gated DeltaNet's weights: attn_qkv, attn_gate (z) and ssm_ba with σ = 1/√n_embd;
// ssm_conv1d (F32) with σ = 1/√taps, so the convolved q, k, v keep unit RMS; ssm_a = −A
// with A uniform in (0, 16) and ssm_dt.bias = 1, as Qwen3-Next initializes A_log and
// dt_bias; ssm_norm 1; ssm_out scaled like attn_output (its input, RMS-normed per head
// times silu(z), has RMS ≈ 0.6). The shared expert is scaled like a routed one; its gate
// vector (F32) has σ = 1/√n_embd.
func (p *Plan) layoutNext(L int, r float64, mu []float64, embd func(uint64, []byte),
	add func(string, quant.Type, []uint64, func(uint64, []byte)),
	ones func(uint64, []byte), random func(float64) func(uint64, []byte)) {
	s, qt := p.o.Shape, p.o.Type
	n := uint64(s.NEmbd)
	qd, kvd := uint64(s.NHead*s.HeadDim), uint64(s.NHeadKV*s.HeadDim)
	vd := uint64(s.SSMVHeads * s.SSMHeadDim)
	cd := uint64(2*s.SSMKHeads*s.SSMHeadDim) + vd
	ne, ff, fs := uint64(s.NExpert), uint64(s.NFFExp), uint64(s.NFFShared)
	inv := func(d uint64) float64 { return 1 / math.Sqrt(float64(d)) }
	f32 := func(gen func(g *rng) float64) func(uint64, []byte) {
		return func(seed uint64, dst []byte) {
			g := rng{seed}
			for i := 0; i < len(dst); i += 4 {
				binary.LittleEndian.PutUint32(dst[i:], math.Float32bits(float32(gen(&g))))
			}
		}
	}
	add("output.weight", qt, []uint64{n, uint64(s.NVocab)}, random(4*inv(n)))
	add("output_norm.weight", quant.F32, []uint64{n}, ones)
	add("token_embd.weight", qt, []uint64{n, uint64(s.NVocab)}, embd)
	type tensor struct {
		name string
		t    quant.Type
		dims []uint64
		gen  func(uint64, []byte)
	}
	for l := 0; l < L; l++ {
		al := alpha / math.Sqrt(1+2*float64(l)*r*r) // as for qwen3moe (NewPlan)
		ts := []tensor{
			{"attn_norm.weight", quant.F32, []uint64{n}, ones},
			{"post_attention_norm.weight", quant.F32, []uint64{n}, ones},
			{"ffn_gate_inp.weight", quant.F32, []uint64{n, ne}, func(seed uint64, dst []byte) { p.fillRouter(dst, mu, al, seed) }},
			{"ffn_gate_exps.weight", qt, []uint64{n, ff, ne}, random(inv(n))},
			{"ffn_up_exps.weight", qt, []uint64{n, ff, ne}, random(inv(n))},
			{"ffn_down_exps.weight", qt, []uint64{ff, n, ne}, random(2 * r * inv(ff))},
			{"ffn_gate_inp_shexp.weight", quant.F32, []uint64{n}, f32(func(g *rng) float64 { return inv(n) * g.normal() })},
			{"ffn_gate_shexp.weight", qt, []uint64{n, fs}, random(inv(n))},
			{"ffn_up_shexp.weight", qt, []uint64{n, fs}, random(inv(n))},
			{"ffn_down_shexp.weight", qt, []uint64{fs, n}, random(2 * r * inv(fs))},
		}
		if (l+1)%s.AttnInterval != 0 { // Gated DeltaNet
			vh := uint64(s.SSMVHeads)
			ts = append(ts,
				tensor{"attn_qkv.weight", qt, []uint64{n, cd}, random(inv(n))},
				tensor{"attn_gate.weight", qt, []uint64{n, vd}, random(inv(n))},
				tensor{"ssm_ba.weight", qt, []uint64{n, 2 * vh}, random(inv(n))},
				tensor{"ssm_conv1d.weight", quant.F32, []uint64{uint64(s.SSMConv), cd}, f32(func(g *rng) float64 { return inv(uint64(s.SSMConv)) * g.normal() })},
				tensor{"ssm_dt.bias", quant.F32, []uint64{vh}, ones},
				tensor{"ssm_a", quant.F32, []uint64{vh}, f32(func(g *rng) float64 { return -8 * (1 + g.uniform()) })},
				tensor{"ssm_norm.weight", quant.F32, []uint64{uint64(s.SSMHeadDim)}, ones},
				tensor{"ssm_out.weight", qt, []uint64{vd, n}, random(2 * r * inv(vd))})
		} else { // gated full attention
			hd := uint64(s.HeadDim)
			ts = append(ts,
				tensor{"attn_q.weight", qt, []uint64{n, 2 * qd}, random(inv(n))},
				tensor{"attn_k.weight", qt, []uint64{n, kvd}, random(inv(n))},
				tensor{"attn_v.weight", qt, []uint64{n, kvd}, random(inv(n))},
				tensor{"attn_output.weight", qt, []uint64{qd, n}, random(2 * r * inv(qd))},
				tensor{"attn_q_norm.weight", quant.F32, []uint64{hd}, ones},
				tensor{"attn_k_norm.weight", quant.F32, []uint64{hd}, ones})
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
		for _, t := range ts {
			add(fmt.Sprintf("blk.%d.%s", l, t.name), t.t, t.dims, t.gen)
		}
	}
}

// KV is the file's metadata, in file order.
func (p *Plan) KV() []gguf.KV { return p.kv }

// Size is the file's size in bytes.
func (p *Plan) Size() int64 { return p.size }

// Tensors is the layout: every tensor's name, type and dimensions, in file order.
func (p *Plan) Tensors() []gguf.TensorSpec { return p.specs }

// WriteTo generates the tensors one at a time (the next one while the previous is being
// written) and streams the file to w; progress, when not nil, is called with the bytes
// written so far. It returns the bytes written.
func (p *Plan) WriteTo(w io.Writer, progress func(written int64)) (int64, error) {
	sw, err := gguf.NewStreamWriter(w, p.kv, p.specs)
	if err != nil {
		return 0, err
	}
	type item struct {
		i   int
		buf []byte
	}
	free := make(chan []byte, 2)
	free <- nil
	free <- nil
	ready := make(chan item, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(ready)
		for i := range p.specs {
			var buf []byte
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			sz := int(sw.TensorSize(i))
			if cap(buf) < sz {
				buf = make([]byte, sz)
			}
			buf = buf[:sz]
			p.gens[i](buf)
			select {
			case ready <- item{i, buf}:
			case <-stop:
				return
			}
		}
	}()
	if progress != nil {
		progress(sw.Written())
	}
	for it := range ready {
		if err := sw.WriteTensor(p.specs[it.i].Name, it.buf); err != nil {
			return sw.Written(), err
		}
		if progress != nil {
			progress(sw.Written())
		}
		free <- it.buf
	}
	if err := sw.Close(); err != nil {
		return sw.Written(), err
	}
	return sw.Written(), nil
}

// parallel runs f over [0, n) in chunks of step, on the plan's workers.
func (p *Plan) parallel(n, step int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	next := make(chan int, p.workers)
	for w := 0; w < p.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := range next {
				f(lo, min(lo+step, n))
			}
		}()
	}
	for lo := 0; lo < n; lo += step {
		next <- lo
	}
	close(next)
	wg.Wait()
}

// fillRandom fills dst with blocks of type t holding uniform random quants whose
// dequantized values have mean 0 and standard deviation sigma. Each 1 MiB-ish chunk has its
// own generator, so the bytes do not depend on the number of workers.
func (p *Plan) fillRandom(t quant.Type, dst []byte, sigma float64, seed uint64) {
	bsz := t.TypeSize()
	blocks := len(dst) / bsz
	const chunk = 8192 // blocks per generator
	var hdr [16]byte
	switch t {
	case quant.Q8_0:
		// quants uniform in [-127, 127]: standard deviation √((255²-1)/12) ≈ 73.6.
		binary.LittleEndian.PutUint16(hdr[:], toF16(sigma/73.6))
	case quant.Q4_K:
		// all eight sub-block scales and mins 15 (6-bit packed), quants uniform in 0..15:
		// value = d·15·q − dmin·15, mean 0 when dmin = 7.5·d, σ = d·15·4.61.
		d := sigma / (15 * 4.61)
		binary.LittleEndian.PutUint16(hdr[0:], toF16(d))
		binary.LittleEndian.PutUint16(hdr[2:], toF16(7.5*d))
		copy(hdr[4:16], []byte{15, 15, 15, 15, 15, 15, 15, 15, 0xff, 0xff, 0xff, 0xff})
	}
	p.parallel(blocks, chunk, func(lo, hi int) {
		g := rng{mix(seed, uint64(lo))}
		for b := lo; b < hi; b++ {
			blk := dst[b*bsz : (b+1)*bsz]
			switch t {
			case quant.Q8_0:
				copy(blk, hdr[:2])
				q := blk[2:34]
				for i := 0; i < 32; i += 8 {
					binary.LittleEndian.PutUint64(q[i:], g.next())
				}
				for i, v := range q {
					if v == 0x80 {
						q[i] = 0x81
					}
				}
			case quant.Q4_K:
				copy(blk, hdr[:16])
				q := blk[16:144]
				for i := 0; i < 128; i += 8 {
					binary.LittleEndian.PutUint64(q[i:], g.next())
				}
			}
		}
	})
}

// fillEmbeddings: row t = α·√n·μ + √(1−α²)·z_t, z_t with unit variance (uniform), so every
// row has unit RMS and the share α of μ the routers read their bias from.
func (p *Plan) fillEmbeddings(dst []byte, mu []float64, seed uint64) {
	t := p.o.Type
	n := len(mu)
	rb := len(dst) / p.o.Shape.NVocab
	rows := p.o.Shape.NVocab
	a := alpha * math.Sqrt(float64(n))
	b := math.Sqrt(1-alpha*alpha) * math.Sqrt(3) // uniform(-1,1)·√3 has unit variance
	p.parallel(rows, 256, func(lo, hi int) {
		g := rng{mix(seed, uint64(lo))}
		row := make([]float32, n)
		for r := lo; r < hi; r++ {
			for i := range row {
				row[i] = float32(a*mu[i] + b*g.uniform())
			}
			if err := quant.QuantizeRow(t, row, dst[r*rb:(r+1)*rb]); err != nil {
				panic(err) // the layout was checked: rows are whole blocks
			}
		}
	})
}

// fillRouter writes the [n_embd, n_expert] F32 router of one layer (see the package doc).
func (p *Plan) fillRouter(dst []byte, mu []float64, al float64, seed uint64) {
	const rank = 16
	const spread = 2.0 // σ of the rank-16 part of the logits
	s := p.o.Shape
	n := s.NEmbd
	g := rng{seed}
	V := make([][]float64, rank)
	for j := range V {
		V[j] = unitVector(seed, uint64(j)+100, n)
	}
	for e := 0; e < s.NExpert; e++ {
		bias := p.o.Bias * g.normal()
		w := make([]float64, n)
		for i := range w {
			w[i] = bias / (al * math.Sqrt(float64(n))) * mu[i]
		}
		for j := 0; j < rank; j++ {
			c := spread / math.Sqrt(rank) * g.normal()
			for i := range w {
				w[i] += c * V[j][i]
			}
		}
		for i, v := range w {
			binary.LittleEndian.PutUint32(dst[(e*n+i)*4:], math.Float32bits(float32(v)))
		}
	}
}

// unitVector is a deterministic random unit vector of n elements.
func unitVector(seed, salt uint64, n int) []float64 {
	g := rng{mix(seed, salt)}
	v := make([]float64, n)
	var ss float64
	for i := range v {
		v[i] = g.normal()
		ss += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(ss)
	}
	return v
}

func toF16(x float64) uint16 {
	var d [1]uint16
	f16.ToF16(d[:], []float32{float32(x)})
	return d[0]
}

// mix derives a seed from two values (splitmix64 finalizer).
func mix(a, b uint64) uint64 {
	z := a*0x9e3779b97f4a7c15 + b + 0x632be59bd9b4e019
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// rng is wyrand: fast, and good enough for weights.
type rng struct{ s uint64 }

func (g *rng) next() uint64 {
	g.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(g.s, g.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// uniform is uniform in [-1, 1).
func (g *rng) uniform() float64 { return float64(g.next()>>11)/(1<<52) - 1 }

// normal is a standard normal (Box-Muller).
func (g *rng) normal() float64 {
	u := (float64(g.next()>>11) + 0.5) / (1 << 53)
	v := float64(g.next()>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*v)
}
