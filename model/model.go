// Package model holds model architectures (qwen3moe) computed as llama.cpp computes them:
// a forward pass over a chunk of tokens with a KV cache, routed experts supplied through
// an ExpertSource, and routing decisions visible to a RouteObserver.
package model

import (
	"fmt"
	"sort"
	"strings"

	"github.com/regolith/regolith/gguf"
)

// Config holds an architecture's hyperparameters, read from GGUF metadata.
type Config struct {
	Arch        string
	NLayer      int
	NEmbd       int
	NHead       int
	NHeadKV     int
	HeadDim     int // key and value head size
	NExpert     int
	NExpertUsed int
	NFFExp      int // routed expert FFN width
	NVocab      int
	CtxTrain    int
	RopeBase    float32
	RopeDims    int // dimensions rotated per head (rope.dimension_count; HeadDim when absent)
	Eps         float32
	Next        *NextConfig // qwen3next's Gated DeltaNet hyperparameters (nil for other architectures)
}

// Layer holds one transformer block's resident weights and its routed-expert tensors.
type Layer struct {
	AttnNorm       []float32
	Wq, Wk, Wv, Wo Weight
	QNorm, KNorm   []float32
	FFNNorm        []float32 // qwen3next: post_attention_norm
	Router         Weight    // [NExpert rows × NEmbd]
	Gate, Up, Down ExpertTensor
	Next           *NextLayer    // qwen3next: the layer's kind and Gated DeltaNet tensors
	Shared         *SharedExpert // qwen3next: the shared expert, or nil
}

// Model is a loaded model: views into the GGUF file's memory map, nothing copied but
// the small norm vectors.
type Model struct {
	Cfg     Config
	File    *gguf.File
	TokEmbd Weight
	OutNorm []float32
	Output  Weight // token_embd when the output is tied
	Layers  []Layer
}

var architectures = map[string]func(*gguf.File) (*Model, error){
	"qwen3moe":  loadQwen3MoE,
	"qwen3next": loadQwen3Next,
}

// Supported lists the architectures regolith runs.
func Supported() []string {
	var s []string
	for k := range architectures {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// Load builds a model over an open GGUF file.
func Load(f *gguf.File) (*Model, error) {
	arch := f.Arch()
	load, ok := architectures[arch]
	if !ok {
		return nil, fmt.Errorf("model: architecture %q is not supported (supported: %s)", arch, strings.Join(Supported(), ", "))
	}
	return load(f)
}

// archInt is an integer hyperparameter "<arch>.key" read into dst.
type archInt struct {
	key string
	dst *int
	req bool // missing is an error (else dst keeps its value)
}

// readInts reads integer hyperparameters, each in [1, limit].
func readInts(f *gguf.File, keys []archInt, limit uint64) error {
	for _, it := range keys {
		v, ok := f.ArchUint(it.key)
		if !ok {
			if it.req {
				return fmt.Errorf("model: missing metadata %s.%s", f.Arch(), it.key)
			}
			continue
		}
		if v == 0 || v > limit {
			return fmt.Errorf("model: metadata %s.%s = %d is out of range", f.Arch(), it.key, v)
		}
		*it.dst = int(v)
	}
	return nil
}

func readConfig(f *gguf.File) (Config, error) {
	c := Config{Arch: f.Arch()}
	err := readInts(f, []archInt{
		{"block_count", &c.NLayer, true},
		{"embedding_length", &c.NEmbd, true},
		{"attention.head_count", &c.NHead, true},
		{"attention.head_count_kv", &c.NHeadKV, false},
		{"attention.key_length", &c.HeadDim, false},
		{"expert_count", &c.NExpert, true},
		{"expert_used_count", &c.NExpertUsed, true},
		{"expert_feed_forward_length", &c.NFFExp, true},
		{"context_length", &c.CtxTrain, false},
	}, 1<<24)
	if err != nil {
		return c, err
	}
	if c.NHeadKV == 0 {
		c.NHeadKV = c.NHead
	}
	if c.HeadDim == 0 {
		c.HeadDim = c.NEmbd / c.NHead
	}
	if v, ok := f.ArchUint("attention.value_length"); ok && int(v) != c.HeadDim {
		return c, fmt.Errorf("model: value head size %d differs from key head size %d", v, c.HeadDim)
	}
	if c.NHead%c.NHeadKV != 0 {
		return c, fmt.Errorf("model: %d heads is not a multiple of %d KV heads", c.NHead, c.NHeadKV)
	}
	if c.NExpertUsed > c.NExpert {
		return c, fmt.Errorf("model: %d experts used of %d", c.NExpertUsed, c.NExpert)
	}
	c.RopeBase = 10000
	if v, ok := f.ArchFloat("rope.freq_base"); ok {
		c.RopeBase = float32(v)
	}
	c.RopeDims = c.HeadDim
	if v, ok := f.ArchUint("rope.dimension_count"); ok {
		if v == 0 || int(v) > c.HeadDim || v%2 != 0 {
			return c, fmt.Errorf("model: rope.dimension_count %d does not fit head size %d", v, c.HeadDim)
		}
		c.RopeDims = int(v)
	}
	eps, err := f.RequireArchFloat("attention.layer_norm_rms_epsilon")
	if err != nil {
		return c, err
	}
	c.Eps = float32(eps)
	return c, nil
}

// loadBase reads what every architecture has: the vocabulary size (from token_embd), the
// embeddings, the final norm, and the output projection (tied to the embeddings when the
// file has no output.weight).
func loadBase(f *gguf.File, c Config) (*Model, *loader, error) {
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return nil, nil, fmt.Errorf("model: missing or malformed token_embd.weight")
	}
	c.NVocab = int(emb.Dims[1])
	ld := &loader{f: f}
	m := &Model{Cfg: c, File: f}
	m.TokEmbd = ld.weight("token_embd.weight", c.NEmbd, c.NVocab)
	m.OutNorm = ld.vector("output_norm.weight", c.NEmbd)
	if _, ok := f.Tensor("output.weight"); ok {
		m.Output = ld.weight("output.weight", c.NEmbd, c.NVocab)
	} else {
		m.Output = m.TokEmbd
	}
	return m, ld, nil
}

func loadQwen3MoE(f *gguf.File) (*Model, error) {
	c, err := readConfig(f)
	if err != nil {
		return nil, err
	}
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
		L.Wq = ld.weight(p+"attn_q.weight", c.NEmbd, qd)
		L.Wk = ld.weight(p+"attn_k.weight", c.NEmbd, kvd)
		L.Wv = ld.weight(p+"attn_v.weight", c.NEmbd, kvd)
		L.Wo = ld.weight(p+"attn_output.weight", qd, c.NEmbd)
		L.QNorm = ld.vector(p+"attn_q_norm.weight", c.HeadDim)
		L.KNorm = ld.vector(p+"attn_k_norm.weight", c.HeadDim)
		L.FFNNorm = ld.vector(p+"ffn_norm.weight", c.NEmbd)
		L.Router = ld.weight(p+"ffn_gate_inp.weight", c.NEmbd, c.NExpert)
		L.Gate = ld.experts(p+"ffn_gate_exps.weight", c.NEmbd, c.NFFExp, c.NExpert)
		L.Up = ld.experts(p+"ffn_up_exps.weight", c.NEmbd, c.NFFExp, c.NExpert)
		L.Down = ld.experts(p+"ffn_down_exps.weight", c.NFFExp, c.NEmbd, c.NExpert)
	}
	if ld.err != nil {
		return nil, ld.err
	}
	return m, nil
}
