// Package convert turns a Hugging Face checkpoint of the qwen3moe family (Qwen3MoeForCausalLM:
// safetensors, config.json, tokenizer.json, tokenizer_config.json) into a GGUF file in
// llama.cpp's layout and naming, as llama.cpp's convert_hf_to_gguf.py writes it: the same
// metadata keys, tensor names, stacked 3-D expert tensors, and tensor types (norms and the
// router stay F32; everything else is F32, F16, BF16, Q8_0 or Q4_K as asked).
//
// The safetensors reader is this package's own (a JSON header and raw data) and checks every
// size before it allocates. The output is built in memory, so converting needs about the
// output file's size in RAM plus one source tensor.
package convert

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/quant"
)

// Options controls a conversion.
type Options struct {
	// Type is the type of the weight matrices: F32, F16, BF16, Q8_0 or Q4_K. A matrix whose
	// rows do not split into the type's blocks falls back to Q8_0, then F16.
	Type quant.Type
	// Name is general.name; empty means the checkpoint directory's name.
	Name string
	// Pre overrides tokenizer.ggml.pre; empty means detect it from tokenizer.json.
	Pre string
	// Log, if set, receives one line per tensor.
	Log io.Writer
}

// Summary describes a finished conversion.
type Summary struct {
	Tensors     int
	Params      int64            // weights written
	Bytes       int64            // tensor data bytes
	ByType      map[string]int64 // tensor count per ggml type
	Vocab       int
	Arch        string
	ExpertCount int
}

// Config is the part of a Qwen3-MoE config.json that conversion reads.
type Config struct {
	Architectures         []string        `json:"architectures"`
	ModelType             string          `json:"model_type"`
	VocabSize             int             `json:"vocab_size"`
	HiddenSize            int             `json:"hidden_size"`
	IntermediateSize      int             `json:"intermediate_size"`
	MoeIntermediateSize   int             `json:"moe_intermediate_size"`
	NumHiddenLayers       int             `json:"num_hidden_layers"`
	NumAttentionHeads     int             `json:"num_attention_heads"`
	NumKeyValueHeads      int             `json:"num_key_value_heads"`
	HeadDim               int             `json:"head_dim"`
	NumExperts            int             `json:"num_experts"`
	NumExpertsPerTok      int             `json:"num_experts_per_tok"`
	NormTopKProb          *bool           `json:"norm_topk_prob"`
	MaxPositionEmbeddings int             `json:"max_position_embeddings"`
	RopeTheta             float64         `json:"rope_theta"`
	RopeScaling           json.RawMessage `json:"rope_scaling"`
	RopeParameters        json.RawMessage `json:"rope_parameters"`
	RMSNormEps            float64         `json:"rms_norm_eps"`
	TieWordEmbeddings     bool            `json:"tie_word_embeddings"`
	DecoderSparseStep     *int            `json:"decoder_sparse_step"`
	MLPOnlyLayers         []int           `json:"mlp_only_layers"`
	BOSTokenID            json.RawMessage `json:"bos_token_id"`
	EOSTokenID            json.RawMessage `json:"eos_token_id"`
}

type ropeParams struct {
	RopeTheta float64 `json:"rope_theta"`
	RopeType  string  `json:"rope_type"`
	Type      string  `json:"type"`
	Factor    float64 `json:"factor"`
	OrigCtx   int     `json:"original_max_position_embeddings"`
}

// LoadConfig reads and checks dir/config.json.
func LoadConfig(dir string) (*Config, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	ok := c.ModelType == "qwen3_moe"
	for _, a := range c.Architectures {
		ok = ok || a == "Qwen3MoeForCausalLM"
	}
	if !ok {
		return nil, fmt.Errorf("config.json: architecture %v (model_type %q) is not Qwen3MoeForCausalLM", c.Architectures, c.ModelType)
	}
	if c.HeadDim == 0 && c.NumAttentionHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumAttentionHeads
	}
	if c.NumKeyValueHeads == 0 {
		c.NumKeyValueHeads = c.NumAttentionHeads
	}
	for _, v := range []struct {
		n    int
		what string
	}{{c.VocabSize, "vocab_size"}, {c.HiddenSize, "hidden_size"}, {c.MoeIntermediateSize, "moe_intermediate_size"},
		{c.NumHiddenLayers, "num_hidden_layers"}, {c.NumAttentionHeads, "num_attention_heads"}, {c.HeadDim, "head_dim"},
		{c.NumExperts, "num_experts"}, {c.NumExpertsPerTok, "num_experts_per_tok"}} {
		if v.n <= 0 || v.n > 1<<24 {
			return nil, fmt.Errorf("config.json: %s = %d", v.what, v.n)
		}
	}
	if c.NumExpertsPerTok > c.NumExperts || c.NumAttentionHeads%c.NumKeyValueHeads != 0 {
		return nil, fmt.Errorf("config.json: %d of %d experts, %d heads over %d KV heads", c.NumExpertsPerTok, c.NumExperts, c.NumAttentionHeads, c.NumKeyValueHeads)
	}
	if c.NormTopKProb != nil && !*c.NormTopKProb {
		return nil, fmt.Errorf("config.json: norm_topk_prob = false; llama.cpp's qwen3moe always renormalizes the top-k weights")
	}
	if len(c.MLPOnlyLayers) > 0 || (c.DecoderSparseStep != nil && *c.DecoderSparseStep != 1) {
		return nil, fmt.Errorf("config.json: dense layers (mlp_only_layers %v, decoder_sparse_step) are not part of llama.cpp's qwen3moe", c.MLPOnlyLayers)
	}
	if c.RMSNormEps == 0 {
		c.RMSNormEps = 1e-6
	}
	return &c, nil
}

// rope returns the RoPE base and, for YaRN, the scaling factor and original context.
func (c *Config) rope() (theta float64, yarn *ropeParams, err error) {
	theta = c.RopeTheta
	var p ropeParams
	for _, raw := range []json.RawMessage{c.RopeParameters, c.RopeScaling} {
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return 0, nil, fmt.Errorf("config.json: rope parameters: %w", err)
		}
		if p.RopeTheta != 0 {
			theta = p.RopeTheta
		}
		t := p.RopeType
		if t == "" {
			t = p.Type
		}
		switch t {
		case "", "default":
		case "yarn":
			q := p
			yarn = &q
		default:
			return 0, nil, fmt.Errorf("config.json: rope type %q is not supported", t)
		}
	}
	if theta == 0 {
		theta = 10000
	}
	return theta, yarn, nil
}

// part is a run of elements of one source tensor.
type part struct {
	st       *Safetensors
	t        *Tensor
	from, to int64
}

// job is one output tensor: its name, ggml dimensions, and the source parts concatenated.
type job struct {
	name  string
	dims  []uint64
	parts []part
}

type source struct {
	files  []*Safetensors
	byName map[string]part
	used   map[string]bool
}

func openSources(dir string) (*source, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no .safetensors files", dir)
	}
	sort.Strings(paths)
	s := &source{byName: map[string]part{}, used: map[string]bool{}}
	for _, p := range paths {
		st, err := OpenSafetensors(p)
		if err != nil {
			s.close()
			return nil, err
		}
		s.files = append(s.files, st)
		for i := range st.Tensors {
			t := &st.Tensors[i]
			if _, dup := s.byName[t.Name]; dup {
				s.close()
				return nil, fmt.Errorf("tensor %q is in more than one file", t.Name)
			}
			s.byName[t.Name] = part{st: st, t: t, from: 0, to: t.Elements()}
		}
	}
	return s, nil
}

func (s *source) close() {
	for _, f := range s.files {
		f.Close()
	}
}

func shapeEq(a []int64, b ...int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != int64(b[i]) {
			return false
		}
	}
	return true
}

// take returns the named tensor, checks its shape, and marks it used.
func (s *source) take(name string, shape ...int) (part, error) {
	p, ok := s.byName[name]
	if !ok {
		return part{}, fmt.Errorf("tensor %q is missing", name)
	}
	if !shapeEq(p.t.Shape, shape...) {
		return part{}, fmt.Errorf("tensor %q has shape %v, config.json implies %v", name, p.t.Shape, shape)
	}
	s.used[name] = true
	return p, nil
}

func (s *source) has(name string) bool { _, ok := s.byName[name]; return ok }

// rev is the ggml dimension list of a row-major shape.
func rev(shape ...int) []uint64 {
	d := make([]uint64, len(shape))
	for i, x := range shape {
		d[len(shape)-1-i] = uint64(x)
	}
	return d
}

// plan maps the checkpoint's tensors to llama.cpp's qwen3moe tensors, in llama.cpp's order.
func plan(c *Config, s *source) ([]job, error) {
	d, V, E, Fe := c.HiddenSize, c.VocabSize, c.NumExperts, c.MoeIntermediateSize
	qd, kvd := c.NumAttentionHeads*c.HeadDim, c.NumKeyValueHeads*c.HeadDim
	var jobs []job
	add := func(gname, hname string, shape ...int) error {
		p, err := s.take(hname, shape...)
		if err != nil {
			return err
		}
		jobs = append(jobs, job{name: gname, dims: rev(shape...), parts: []part{p}})
		return nil
	}
	if err := add("token_embd.weight", "model.embed_tokens.weight", V, d); err != nil {
		return nil, err
	}
	for l := 0; l < c.NumHiddenLayers; l++ {
		h := fmt.Sprintf("model.layers.%d.", l)
		g := fmt.Sprintf("blk.%d.", l)
		for _, m := range []struct {
			g, h  string
			shape []int
		}{
			{"attn_norm.weight", "input_layernorm.weight", []int{d}},
			{"attn_q.weight", "self_attn.q_proj.weight", []int{qd, d}},
			{"attn_k.weight", "self_attn.k_proj.weight", []int{kvd, d}},
			{"attn_v.weight", "self_attn.v_proj.weight", []int{kvd, d}},
			{"attn_output.weight", "self_attn.o_proj.weight", []int{d, qd}},
			{"attn_q_norm.weight", "self_attn.q_norm.weight", []int{c.HeadDim}},
			{"attn_k_norm.weight", "self_attn.k_norm.weight", []int{c.HeadDim}},
			{"ffn_norm.weight", "post_attention_layernorm.weight", []int{d}},
			{"ffn_gate_inp.weight", "mlp.gate.weight", []int{E, d}},
		} {
			if err := add(g+m.g, h+m.h, m.shape...); err != nil {
				return nil, err
			}
		}
		for _, b := range []struct {
			g, h string
			n    int
		}{{"attn_q.bias", "self_attn.q_proj.bias", qd}, {"attn_k.bias", "self_attn.k_proj.bias", kvd}, {"attn_v.bias", "self_attn.v_proj.bias", kvd}} {
			if s.has(h + b.h) {
				if err := add(g+b.g, h+b.h, b.n); err != nil {
					return nil, err
				}
			}
		}
		var gate, up, down []part
		if s.has(h + "mlp.experts.gate_up_proj") {
			// transformers 5 fused layout: gate_up_proj [E, 2F, d], down_proj [E, d, F]
			gu, err := s.take(h+"mlp.experts.gate_up_proj", E, 2*Fe, d)
			if err != nil {
				return nil, err
			}
			dn, err := s.take(h+"mlp.experts.down_proj", E, d, Fe)
			if err != nil {
				return nil, err
			}
			n := int64(Fe * d)
			for e := int64(0); e < int64(E); e++ {
				gate = append(gate, part{gu.st, gu.t, 2 * e * n, 2*e*n + n})
				up = append(up, part{gu.st, gu.t, 2*e*n + n, 2*e*n + 2*n})
			}
			down = []part{dn}
		} else {
			for e := 0; e < E; e++ {
				x := fmt.Sprintf("%smlp.experts.%d.", h, e)
				pg, err := s.take(x+"gate_proj.weight", Fe, d)
				if err != nil {
					return nil, err
				}
				pu, err := s.take(x+"up_proj.weight", Fe, d)
				if err != nil {
					return nil, err
				}
				pd, err := s.take(x+"down_proj.weight", d, Fe)
				if err != nil {
					return nil, err
				}
				gate, up, down = append(gate, pg), append(up, pu), append(down, pd)
			}
		}
		jobs = append(jobs,
			job{name: g + "ffn_gate_exps.weight", dims: rev(E, Fe, d), parts: gate},
			job{name: g + "ffn_down_exps.weight", dims: rev(E, d, Fe), parts: down},
			job{name: g + "ffn_up_exps.weight", dims: rev(E, Fe, d), parts: up})
	}
	if err := add("output_norm.weight", "model.norm.weight", d); err != nil {
		return nil, err
	}
	if s.has("lm_head.weight") {
		if c.TieWordEmbeddings {
			s.used["lm_head.weight"] = true // tied: llama.cpp uses token_embd
		} else if err := add("output.weight", "lm_head.weight", V, d); err != nil {
			return nil, err
		}
	}
	var extra []string
	for n := range s.byName {
		if !s.used[n] && !strings.HasSuffix(n, "rotary_emb.inv_freq") {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		if len(extra) > 5 {
			extra = append(extra[:5], fmt.Sprintf("and %d more", len(extra)-5))
		}
		return nil, fmt.Errorf("tensors not part of qwen3moe: %s", strings.Join(extra, ", "))
	}
	return jobs, nil
}

// tensorType picks a tensor's type as llama.cpp's converter does: 1-D tensors and the router
// stay F32; matrices get the requested type when their rows split into its blocks, else Q8_0,
// else F16.
func tensorType(name string, dims []uint64, want quant.Type) quant.Type {
	if len(dims) < 2 || strings.HasSuffix(name, "ffn_gate_inp.weight") || want == quant.F32 {
		return quant.F32
	}
	for _, t := range []quant.Type{want, quant.Q8_0, quant.F16} {
		if dims[0]%uint64(t.BlockSize()) == 0 {
			return t
		}
	}
	return quant.F16
}

// encode converts one job's parts into ggml bytes of type t, a row at a time.
func encode(j *job, t quant.Type) ([]byte, int64, error) {
	ne0 := int64(j.dims[0])
	total := int64(1)
	for _, d := range j.dims {
		total *= int64(d)
	}
	rowBytes, err := t.RowBytes(ne0)
	if err != nil {
		return nil, 0, err
	}
	out := make([]byte, 0, total/ne0*rowBytes)
	var n int64
	for _, p := range j.parts {
		cnt := p.to - p.from
		if cnt%ne0 != 0 {
			return nil, 0, fmt.Errorf("%s: part of %d elements is not whole rows of %d", j.name, cnt, ne0)
		}
		src, err := p.st.Float32(p.t, p.from, p.to)
		if err != nil {
			return nil, 0, err
		}
		for r := int64(0); r < cnt; r += ne0 {
			row := src[r : r+ne0]
			start := len(out)
			out = out[:start+int(rowBytes)]
			if err := quantizeRow(t, row, out[start:]); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", j.name, err)
			}
		}
		n += cnt
	}
	if n != total {
		return nil, 0, fmt.Errorf("%s: %d source elements for %d", j.name, n, total)
	}
	return out, total, nil
}

func quantizeRow(t quant.Type, src []float32, dst []byte) error {
	switch t {
	case quant.F32:
		for i, v := range src {
			putF32(dst[4*i:], v)
		}
		return nil
	case quant.F16:
		for i, v := range src {
			putU16(dst[2*i:], quant.FP32ToFP16(v))
		}
		return nil
	case quant.BF16:
		for i, v := range src {
			putU16(dst[2*i:], quant.FP32ToBF16(v))
		}
		return nil
	}
	return quant.QuantizeRow(t, src, dst)
}

// fileType is llama.cpp's general.file_type (enum llama_ftype) for an output type.
func fileType(t quant.Type) (uint32, error) {
	switch t {
	case quant.F32:
		return 0, nil
	case quant.F16:
		return 1, nil
	case quant.Q8_0:
		return 7, nil
	case quant.Q4_K:
		return 14, nil // LLAMA_FTYPE_MOSTLY_Q4_K_S: Q4_K wherever it fits
	case quant.BF16:
		return 32, nil
	}
	return 0, fmt.Errorf("output type %s is not supported (f32, f16, bf16, q8_0, q4_k)", t)
}

// ParseType parses an output type name: f32, f16, bf16, q8_0 or q4_k (any case).
func ParseType(s string) (quant.Type, error) {
	switch strings.ToLower(s) {
	case "f32":
		return quant.F32, nil
	case "f16":
		return quant.F16, nil
	case "bf16":
		return quant.BF16, nil
	case "q8_0":
		return quant.Q8_0, nil
	case "q4_k", "q4_k_s":
		return quant.Q4_K, nil
	}
	return 0, fmt.Errorf("unknown type %q (f32, f16, bf16, q8_0, q4_k)", s)
}

func u32(k string, v int) gguf.KV { return gguf.KV{Key: k, Type: gguf.TypeUint32, Value: uint32(v)} }
func f32(k string, v float64) gguf.KV {
	return gguf.KV{Key: k, Type: gguf.TypeFloat32, Value: float32(v)}
}
func str(k, v string) gguf.KV { return gguf.KV{Key: k, Type: gguf.TypeString, Value: v} }

// Convert reads the checkpoint in dir and writes a GGUF file to w.
func Convert(dir string, w io.Writer, opt Options) (*Summary, error) {
	ft, err := fileType(opt.Type)
	if err != nil {
		return nil, err
	}
	c, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	theta, yarn, err := c.rope()
	if err != nil {
		return nil, err
	}
	voc, err := LoadVocab(dir, c, opt.Pre)
	if err != nil {
		return nil, err
	}
	src, err := openSources(dir)
	if err != nil {
		return nil, err
	}
	defer src.close()
	jobs, err := plan(c, src)
	if err != nil {
		return nil, err
	}
	name := opt.Name
	if name == "" {
		abs, _ := filepath.Abs(dir)
		name = filepath.Base(abs)
	}
	const a = "qwen3moe."
	kvs := []gguf.KV{
		str("general.architecture", "qwen3moe"),
		str("general.type", "model"),
		str("general.name", name),
		u32(a+"block_count", c.NumHiddenLayers),
	}
	if c.MaxPositionEmbeddings > 0 {
		kvs = append(kvs, u32(a+"context_length", c.MaxPositionEmbeddings))
	}
	kvs = append(kvs, u32(a+"embedding_length", c.HiddenSize))
	if c.IntermediateSize > 0 {
		kvs = append(kvs, u32(a+"feed_forward_length", c.IntermediateSize))
	}
	kvs = append(kvs,
		u32(a+"attention.head_count", c.NumAttentionHeads),
		u32(a+"attention.head_count_kv", c.NumKeyValueHeads))
	if yarn != nil {
		kvs = append(kvs, str(a+"rope.scaling.type", "yarn"), f32(a+"rope.scaling.factor", yarn.Factor),
			u32(a+"rope.scaling.original_context_length", yarn.OrigCtx))
	}
	kvs = append(kvs,
		f32(a+"rope.freq_base", theta),
		f32(a+"attention.layer_norm_rms_epsilon", c.RMSNormEps),
		u32(a+"expert_count", c.NumExperts),
		u32(a+"expert_used_count", c.NumExpertsPerTok),
		u32(a+"attention.key_length", c.HeadDim),
		u32(a+"attention.value_length", c.HeadDim),
		gguf.KV{Key: "general.file_type", Type: gguf.TypeUint32, Value: ft},
		u32(a+"expert_feed_forward_length", c.MoeIntermediateSize),
		u32("general.quantization_version", 2),
	)
	kvs = append(kvs, voc.KVs()...)

	sum := &Summary{ByType: map[string]int64{}, Vocab: len(voc.Tokens), Arch: "qwen3moe", ExpertCount: c.NumExperts}
	tensors := make([]gguf.WriteTensor, 0, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		t := tensorType(j.name, j.dims, opt.Type)
		data, n, err := encode(j, t)
		if err != nil {
			return nil, err
		}
		tensors = append(tensors, gguf.WriteTensor{Name: j.name, Type: t, Dims: j.dims, Data: data})
		sum.Tensors++
		sum.Params += n
		sum.Bytes += int64(len(data))
		sum.ByType[t.String()]++
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "%-28s %-5s %v\n", j.name, t, j.dims)
		}
	}
	if err := gguf.Write(w, kvs, tensors); err != nil {
		return nil, err
	}
	return sum, nil
}

// ConvertFile converts dir into the GGUF file out, written under a temporary name and
// renamed when complete, so an interrupted conversion leaves no partial file behind.
func ConvertFile(dir, out string, opt Options) (*Summary, error) {
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	sum, err := Convert(dir, f, opt)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return sum, nil
}

func putU16(b []byte, v uint16) { b[0], b[1] = byte(v), byte(v>>8) }
func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}
