package convert

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/quant"
)

// expect is the float32 content a GGUF tensor must hold (row-major, ggml order).
func expect(src map[string]stTensor, name string) []float32 {
	var l, e int
	var w string
	if n, _ := fmt.Sscanf(name, "blk.%d.ffn_%s", &l, &w); n == 2 {
		var hf string
		switch w {
		case "gate_exps.weight":
			hf = "gate_proj"
		case "up_exps.weight":
			hf = "up_proj"
		case "down_exps.weight":
			hf = "down_proj"
		}
		if hf != "" {
			var out []float32
			for e = 0; e < tE; e++ {
				out = append(out, src[fmt.Sprintf("model.layers.%d.mlp.experts.%d.%s.weight", l, e, hf)].vals...)
			}
			return out
		}
	}
	m := map[string]string{"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight"}
	if hf, ok := m[name]; ok {
		return src[hf].vals
	}
	var rest string
	fmt.Sscanf(name, "blk.%d.%s", &l, &rest)
	per := map[string]string{
		"attn_norm.weight": "input_layernorm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
		"attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
		"attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
		"attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
		"ffn_gate_inp.weight": "mlp.gate.weight",
	}
	return src[fmt.Sprintf("model.layers.%d.%s", l, per[rest])].vals
}

func dequant(t *testing.T, f *gguf.File, ti *gguf.TensorInfo) []float32 {
	t.Helper()
	n := int(ti.Elements())
	ne0 := int(ti.Dims[0])
	out := make([]float32, n)
	data := f.Data(ti)
	rb, _ := ti.Type.RowBytes(int64(ne0))
	for r := 0; r < n/ne0; r++ {
		if err := quant.DequantizeRow(ti.Type, data[r*int(rb):(r+1)*int(rb)], out[r*ne0:(r+1)*ne0]); err != nil {
			t.Fatalf("%s: %v", ti.Name, err)
		}
	}
	return out
}

func convertTo(t *testing.T, dir string, typ quant.Type) *gguf.File {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.gguf")
	sum, err := ConvertFile(dir, out, Options{Type: typ, Name: "tiny"})
	if err != nil {
		t.Fatalf("convert %s: %v", typ, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatalf("parse %s output: %v", typ, err)
	}
	if sum.Tensors != len(f.Tensors) || sum.Tensors != 2+12*tL {
		t.Fatalf("%d tensors (summary %d), want %d", len(f.Tensors), sum.Tensors, 2+12*tL)
	}
	return f
}

func TestConvertSynthetic(t *testing.T) {
	dir := t.TempDir()
	src := writeCheckpoint(t, dir, false, false)
	// relative RMS error allowed per output type
	tol := map[quant.Type]float64{quant.F32: 0, quant.F16: 1e-3, quant.BF16: 5e-3, quant.Q8_0: 1e-2, quant.Q4_K: 0.12}
	for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_K} {
		t.Run(typ.String(), func(t *testing.T) {
			f := convertTo(t, dir, typ)
			wantDims := map[string][]uint64{
				"token_embd.weight":          {tD, tV},
				"output_norm.weight":         {tD},
				"blk.1.attn_q.weight":        {tD, tH * tHD},
				"blk.1.attn_k.weight":        {tD, tKV * tHD},
				"blk.1.attn_output.weight":   {tH * tHD, tD},
				"blk.1.attn_q_norm.weight":   {tHD},
				"blk.1.ffn_gate_inp.weight":  {tD, tE},
				"blk.1.ffn_gate_exps.weight": {tD, tF, tE},
				"blk.1.ffn_up_exps.weight":   {tD, tF, tE},
				"blk.1.ffn_down_exps.weight": {tF, tD, tE},
			}
			for name, dims := range wantDims {
				ti, ok := f.Tensor(name)
				if !ok {
					t.Fatalf("%s missing", name)
				}
				if fmt.Sprint(ti.Dims) != fmt.Sprint(dims) {
					t.Errorf("%s dims %v, want %v", name, ti.Dims, dims)
				}
			}
			if _, ok := f.Tensor("output.weight"); ok {
				t.Errorf("output.weight written for tied embeddings")
			}
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				want := tensorType(ti.Name, ti.Dims, typ)
				if ti.Type != want {
					t.Errorf("%s type %s, want %s", ti.Name, ti.Type, want)
				}
				got, exp := dequant(t, f, ti), expect(src, ti.Name)
				if len(got) != len(exp) {
					t.Fatalf("%s: %d values, want %d", ti.Name, len(got), len(exp))
				}
				var se, ss float64
				for j := range got {
					d := float64(got[j] - exp[j])
					se += d * d
					ss += float64(exp[j]) * float64(exp[j])
				}
				rel := math.Sqrt(se / ss)
				lim := tol[ti.Type]
				if ti.Type == quant.Q8_0 {
					lim = tol[quant.Q8_0]
				}
				if rel > lim {
					t.Errorf("%s (%s): relative RMS error %.3g > %.3g", ti.Name, ti.Type, rel, lim)
				}
			}
			// rows of 32 cannot be Q4_K: down experts fall back to Q8_0
			if ti, _ := f.Tensor("blk.0.ffn_down_exps.weight"); typ == quant.Q4_K && ti.Type != quant.Q8_0 {
				t.Errorf("down experts %s, want Q8_0 fallback", ti.Type)
			}
			for k, want := range map[string]uint64{"block_count": tL, "embedding_length": tD, "expert_count": tE,
				"expert_used_count": tK, "expert_feed_forward_length": tF, "attention.head_count": tH,
				"attention.head_count_kv": tKV, "attention.key_length": tHD, "attention.value_length": tHD,
				"context_length": 512, "feed_forward_length": 128} {
				if got, ok := f.ArchUint(k); !ok || got != want {
					t.Errorf("qwen3moe.%s = %d (%v), want %d", k, got, ok, want)
				}
			}
			if v, _ := f.ArchFloat("rope.freq_base"); v != 10000 {
				t.Errorf("rope.freq_base %v", v)
			}
		})
	}
}

func TestConvertVocab(t *testing.T) {
	for _, pairs := range []bool{false, true} {
		dir := t.TempDir()
		writeCheckpoint(t, dir, false, pairs)
		f := convertTo(t, dir, quant.F16)
		toks, _ := f.Strings("tokenizer.ggml.tokens")
		if len(toks) != tV || toks[259] != "<|endoftext|>" || toks[263] != "[PAD263]" || toks[32] != "Ġ" {
			t.Fatalf("tokens: len %d, %q %q %q", len(toks), toks[259], toks[263], toks[32])
		}
		a, _ := f.Array("tokenizer.ggml.token_type")
		types := a.Data.([]int32)
		for id, want := range map[int]int32{0: TokenNormal, 258: TokenNormal, 259: TokenControl, 261: TokenControl, 262: TokenUserDefined, 263: TokenUnused} {
			if types[id] != want {
				t.Errorf("token %d type %d, want %d", id, types[id], want)
			}
		}
		merges, _ := f.Strings("tokenizer.ggml.merges")
		if fmt.Sprint(merges) != "[Ġ t h e Ġt he]" {
			t.Errorf("merges %q", merges)
		}
		for k, want := range map[string]uint64{"tokenizer.ggml.bos_token_id": 259, "tokenizer.ggml.eos_token_id": 261, "tokenizer.ggml.padding_token_id": 259} {
			if got, ok := f.Uint(k); !ok || got != want {
				t.Errorf("%s = %d (%v), want %d", k, got, ok, want)
			}
		}
		for k, want := range map[string]string{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "qwen2",
			"tokenizer.chat_template": "{{ messages }}", "general.architecture": "qwen3moe", "general.name": "tiny"} {
			if got, _ := f.String(k); got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
		if b, ok := f.Bool("tokenizer.ggml.add_bos_token"); !ok || b {
			t.Errorf("add_bos_token = %v (%v)", b, ok)
		}
	}
}

func TestConvertFusedExperts(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeCheckpoint(t, a, false, false)
	writeCheckpoint(t, b, true, false)
	fa, fb := convertTo(t, a, quant.Q8_0), convertTo(t, b, quant.Q8_0)
	for i := range fa.Tensors {
		ta := &fa.Tensors[i]
		tb, ok := fb.Tensor(ta.Name)
		if !ok || !bytes.Equal(fa.Data(ta), fb.Data(tb)) {
			t.Errorf("%s differs between per-expert and fused checkpoints", ta.Name)
		}
	}
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	writeCheckpoint(t, dir, false, false)
	// an extra unknown tensor
	extra := safetensorsBytes([]stTensor{{name: "model.layers.0.mlp.shared_expert.weight", dtype: "F32", shape: []int{2}, vals: []float32{1, 2}}})
	os.WriteFile(filepath.Join(dir, "extra.safetensors"), extra, 0o644)
	if _, err := Convert(dir, &bytes.Buffer{}, Options{Type: quant.F16}); err == nil {
		t.Error("unknown tensor accepted")
	}
	os.Remove(filepath.Join(dir, "extra.safetensors"))
	// a missing expert
	os.Remove(filepath.Join(dir, "model-00002-of-00002.safetensors"))
	if _, err := Convert(dir, &bytes.Buffer{}, Options{Type: quant.F16}); err == nil {
		t.Error("missing tensors accepted")
	}
	if _, err := Convert(dir, &bytes.Buffer{}, Options{Type: quant.Q4_0}); err == nil {
		t.Error("unsupported output type accepted")
	}
	if _, err := ParseType("q3"); err == nil {
		t.Error("ParseType accepted q3")
	}
}
