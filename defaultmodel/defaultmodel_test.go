package defaultmodel

import (
	"bytes"
	"os"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/quant"
)

func TestEmbeddedModel(t *testing.T) {
	f, err := gguf.Parse(Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if a := f.Arch(); a != "qwen3moe" {
		t.Fatalf("architecture %q", a)
	}
	for k, want := range map[string]uint64{"block_count": 8, "embedding_length": 256, "expert_count": 64,
		"expert_used_count": 4, "expert_feed_forward_length": 64, "attention.head_count": 8,
		"attention.head_count_kv": 2, "attention.key_length": 32, "context_length": 1024} {
		if got, ok := f.ArchUint(k); !ok || got != want {
			t.Errorf("%s = %d, %v; want %d", k, got, ok, want)
		}
	}
	if pre, _ := f.String("tokenizer.ggml.pre"); pre != "qwen2" {
		t.Errorf("tokenizer.ggml.pre = %q", pre)
	}
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	if len(toks) != 8192 || toks[8177] != "<|endoftext|>" || toks[8179] != "<|im_end|>" {
		t.Errorf("tokens: %d, want 8192 with <|endoftext|> at 8177", len(toks))
	}
	if len(f.Tensors) != 98 {
		t.Errorf("%d tensors, want 98", len(f.Tensors))
	}
	ti, ok := f.Tensor("blk.7.ffn_down_exps.weight")
	if !ok || ti.Type != quant.Q8_0 || len(ti.Dims) != 3 || ti.Dims[0] != 64 || ti.Dims[1] != 256 || ti.Dims[2] != 64 {
		t.Fatalf("blk.7.ffn_down_exps.weight: %+v", ti)
	}
	if ti, ok := f.Tensor("blk.0.ffn_gate_inp.weight"); !ok || ti.Type != quant.F32 {
		t.Errorf("router: %+v", ti)
	}
	if _, ok := f.Tensor("output.weight"); ok {
		t.Errorf("output.weight present; the model ties its embeddings")
	}
}

func TestWriteTo(t *testing.T) {
	dir := t.TempDir()
	p, err := WriteTo(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(b, Bytes()) {
		t.Fatalf("copy differs (%v)", err)
	}
	if p2, err := WriteTo(dir); err != nil || p2 != p {
		t.Fatalf("second WriteTo: %q, %v", p2, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d files in the cache directory, want 1", len(ents))
	}
}
