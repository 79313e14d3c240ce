package convert

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regolith/regolith/quant"
)

// stTensor is a tensor to write into a test safetensors file.
type stTensor struct {
	name  string
	dtype string // F32, F16 or BF16
	shape []int
	vals  []float32 // as stored (already rounded to dtype)
}

// safetensorsBytes encodes tensors as a safetensors file.
func safetensorsBytes(ts []stTensor) []byte {
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, t := range ts {
		begin := len(data)
		for _, v := range t.vals {
			switch t.dtype {
			case "F32":
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
			case "F16":
				data = binary.LittleEndian.AppendUint16(data, quant.FP32ToFP16(v))
			case "BF16":
				data = binary.LittleEndian.AppendUint16(data, quant.FP32ToBF16(v))
			}
		}
		hdr[t.name] = map[string]any{"dtype": t.dtype, "shape": t.shape, "data_offsets": []int{begin, len(data)}}
	}
	h, _ := json.Marshal(hdr)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(out, h...), data...)
}

// newTensor makes a random tensor whose values are exactly representable in dtype.
func newTensor(r *rand.Rand, name, dtype string, scale float32, shape ...int) stTensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		x := float32(r.NormFloat64()) * scale
		switch dtype {
		case "F16":
			x = quant.FP16ToFP32(quant.FP32ToFP16(x))
		case "BF16":
			x = quant.BF16ToFP32(quant.FP32ToBF16(x))
		}
		v[i] = x
	}
	return stTensor{name: name, dtype: dtype, shape: shape, vals: v}
}

// tiny model dimensions: rows of 256 (Q4_K-able) and of 32 (Q8_0 only).
const (
	tV, tD, tL, tE, tK, tF = 264, 256, 2, 4, 2, 32
	tH, tKV, tHD           = 4, 2, 64
)

// gpt2Bytes is GPT-2's byte-to-unicode map.
func gpt2Bytes() []string {
	var out [256]string
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174 {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out[:]
}

// writeCheckpoint writes a tiny Qwen3-MoE checkpoint into dir and returns its tensors by
// HF name. fused selects transformers 5's fused expert layout; pairMerges the
// [["a","b"]] merge serialization.
func writeCheckpoint(t *testing.T, dir string, fused, pairMerges bool) map[string]stTensor {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var ts []stTensor
	add := func(x stTensor) { ts = append(ts, x) }
	add(newTensor(r, "model.embed_tokens.weight", "BF16", 0.5, tV, tD))
	add(newTensor(r, "model.norm.weight", "F32", 1, tD))
	for l := 0; l < tL; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(newTensor(r, p+"input_layernorm.weight", "F32", 1, tD))
		add(newTensor(r, p+"post_attention_layernorm.weight", "BF16", 1, tD))
		add(newTensor(r, p+"self_attn.q_proj.weight", "BF16", 0.1, tH*tHD, tD))
		add(newTensor(r, p+"self_attn.k_proj.weight", "F16", 0.1, tKV*tHD, tD))
		add(newTensor(r, p+"self_attn.v_proj.weight", "F32", 0.1, tKV*tHD, tD))
		add(newTensor(r, p+"self_attn.o_proj.weight", "BF16", 0.1, tD, tH*tHD))
		add(newTensor(r, p+"self_attn.q_norm.weight", "BF16", 1, tHD))
		add(newTensor(r, p+"self_attn.k_norm.weight", "BF16", 1, tHD))
		add(newTensor(r, p+"mlp.gate.weight", "BF16", 0.1, tE, tD))
		if fused {
			gu := stTensor{name: p + "mlp.experts.gate_up_proj", dtype: "BF16", shape: []int{tE, 2 * tF, tD}}
			dn := stTensor{name: p + "mlp.experts.down_proj", dtype: "BF16", shape: []int{tE, tD, tF}}
			r2 := rand.New(rand.NewPCG(uint64(l), 7))
			for e := 0; e < tE; e++ {
				g := newTensor(r2, "", "BF16", 0.1, tF, tD)
				u := newTensor(r2, "", "BF16", 0.1, tF, tD)
				d := newTensor(r2, "", "BF16", 0.1, tD, tF)
				gu.vals = append(append(gu.vals, g.vals...), u.vals...)
				dn.vals = append(dn.vals, d.vals...)
			}
			add(gu)
			add(dn)
		} else {
			r2 := rand.New(rand.NewPCG(uint64(l), 7))
			for e := 0; e < tE; e++ {
				x := fmt.Sprintf("%smlp.experts.%d.", p, e)
				add(newTensor(r2, x+"gate_proj.weight", "BF16", 0.1, tF, tD))
				add(newTensor(r2, x+"up_proj.weight", "BF16", 0.1, tF, tD))
				add(newTensor(r2, x+"down_proj.weight", "BF16", 0.1, tD, tF))
			}
		}
	}
	// two shards
	half := len(ts) / 2
	for i, part := range [][]stTensor{ts[:half], ts[half:]} {
		p := filepath.Join(dir, fmt.Sprintf("model-%05d-of-00002.safetensors", i+1))
		if err := os.WriteFile(p, safetensorsBytes(part), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := map[string]any{
		"architectures": []string{"Qwen3MoeForCausalLM"}, "model_type": "qwen3_moe", "vocab_size": tV,
		"hidden_size": tD, "intermediate_size": 128, "moe_intermediate_size": tF, "num_hidden_layers": tL,
		"num_attention_heads": tH, "num_key_value_heads": tKV, "head_dim": tHD, "num_experts": tE,
		"num_experts_per_tok": tK, "norm_topk_prob": true, "max_position_embeddings": 512,
		"rope_theta": 10000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": true, "decoder_sparse_step": 1,
		"mlp_only_layers": []int{}, "bos_token_id": 259, "eos_token_id": 259,
	}
	writeJSON(t, filepath.Join(dir, "config.json"), cfg)
	vocab := map[string]int{}
	for i, s := range gpt2Bytes() {
		vocab[s] = i
	}
	vocab["Ġt"], vocab["he"], vocab["Ġthe"] = 256, 257, 258
	merges := []string{"Ġ t", "h e", "Ġt he"}
	var m any = merges
	if pairMerges {
		var pm [][]string
		for _, s := range merges {
			pm = append(pm, strings.SplitN(s, " ", 2))
		}
		m = pm
	}
	tok := map[string]any{
		"version": "1.0",
		"added_tokens": []map[string]any{
			{"id": 259, "content": "<|endoftext|>", "special": true},
			{"id": 260, "content": "<|im_start|>", "special": true},
			{"id": 261, "content": "<|im_end|>", "special": true},
			{"id": 262, "content": "<think>", "special": false},
		},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": Qwen2Pattern}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": m},
	}
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), tok)
	writeJSON(t, filepath.Join(dir, "tokenizer_config.json"), map[string]any{
		"add_bos_token": false, "bos_token": nil, "eos_token": "<|im_end|>", "pad_token": map[string]any{"content": "<|endoftext|>"},
		"chat_template": "{{ messages }}",
	})
	byName := map[string]stTensor{}
	for _, x := range ts {
		byName[x.name] = x
	}
	return byName
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
