package synth

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/quant"
)

// nextSmall is the geometry of the fixture qwen3next-small-*.gguf (fixtures/README.md):
// 8 layers (6 Gated DeltaNet + 2 gated attention), n_embd 256, 4/2 heads of 64, rope dims
// 16, 16 experts top-4 of 256 plus a shared expert of 256, linear attention 2 key / 4 value
// heads of 64, conv 4, the 4,116-token vocabulary.
var nextSmall = Shape{Name: "next-small", Arch: "qwen3next", NLayer: 8, NEmbd: 256, NHead: 4, NHeadKV: 2, HeadDim: 64,
	NExpert: 16, NExpertUsed: 4, NFFExp: 256, NFF: 1024, NVocab: 4116, CtxTrain: 32768, RopeBase: 1e6, Eps: 1e-6,
	NFFShared: 256, AttnInterval: 4, RopeDims: 16, SSMConv: 4, SSMHeadDim: 64, SSMKHeads: 2, SSMVHeads: 4}

// A qwen3next plan with the fixture's geometry and vocabulary has the fixture's metadata
// (every key, type and value but the model's name, in file order) and its tensor table
// (names, types, dimensions, in file order): the fixture was written by llama.cpp's
// converter and quantizer, so the synth layout is llama.cpp's.
func TestSynthQwen3NextMirrorsFixture(t *testing.T) {
	f, err := gguf.Open(fixtures.Path(t, "models", "qwen3next-small-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vocab []gguf.KV
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			vocab = append(vocab, kv)
		}
	}
	p, err := NewPlan(Options{Shape: nextSmall, Type: quant.Q8_0, Seed: 1, Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	got := p.KV()
	if len(got) != len(f.KV) {
		t.Errorf("%d metadata keys, the fixture %d", len(got), len(f.KV))
	}
	for i := 0; i < min(len(got), len(f.KV)); i++ {
		g, w := got[i], f.KV[i]
		if g.Key != w.Key || g.Type != w.Type {
			t.Errorf("key %d: %s (%v), the fixture %s (%v)", i, g.Key, g.Type, w.Key, w.Type)
			continue
		}
		if g.Key != "general.name" && !reflect.DeepEqual(g.Value, w.Value) {
			t.Errorf("%s = %v, the fixture %v", g.Key, g.Value, w.Value)
		}
	}
	specs := p.Tensors()
	if len(specs) != len(f.Tensors) {
		t.Errorf("%d tensors, the fixture %d", len(specs), len(f.Tensors))
	}
	for i := 0; i < min(len(specs), len(f.Tensors)); i++ {
		g, w := specs[i], f.Tensors[i]
		if g.Name != w.Name || g.Type != w.Type || !reflect.DeepEqual(g.Dims, w.Dims) {
			t.Errorf("tensor %d: %s %s %v, the fixture %s %s %v", i, g.Name, g.Type, g.Dims, w.Name, w.Type, w.Dims)
		}
	}
}

// The qwen3-next-80b-a3b shape is Qwen3-Next-80B-A3B: its parameter counts match the
// model card's (80B in total, 79B without embeddings, about 3B active per token), and its
// layers alternate as 12 × (3 Gated DeltaNet + 1 gated attention).
func TestSynthQwen3NextShape(t *testing.T) {
	s, err := ShapeByName("qwen3-next-80b-a3b")
	if err != nil {
		t.Fatal(err)
	}
	toks := make([]string, s.NVocab)
	for i := range toks {
		toks[i] = fmt.Sprint(i)
	}
	vocab := []gguf.KV{{Key: "tokenizer.ggml.tokens", Type: gguf.TypeArray, Value: gguf.Array{Elem: gguf.TypeString, Data: toks}}}
	p, err := NewPlan(Options{Shape: s, Type: quant.Q8_0, Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	var total, embed, experts, active float64
	kinds := map[string]int{}
	for _, ts := range p.Tensors() {
		e := 1.0
		for _, d := range ts.Dims {
			e *= float64(d)
		}
		total += e
		switch {
		case ts.Name == "token_embd.weight" || ts.Name == "output.weight":
			embed += e
		case strings.HasSuffix(ts.Name, "_exps.weight"):
			experts += e
			active += e * float64(s.NExpertUsed) / float64(s.NExpert)
		default:
			active += e
		}
		for _, k := range []string{"ssm_conv1d.weight", "attn_q.weight", "ffn_up_shexp.weight"} {
			if strings.HasSuffix(ts.Name, "."+k) {
				kinds[k]++
			}
		}
		if ts.Name == "blk.3.attn_q.weight" && !reflect.DeepEqual(ts.Dims, []uint64{2048, 2 * 16 * 256}) {
			t.Errorf("attn_q %v: query and gate of 16 heads of 256", ts.Dims)
		}
		if ts.Name == "blk.0.attn_qkv.weight" && !reflect.DeepEqual(ts.Dims, []uint64{2048, 2*16*128 + 32*128}) {
			t.Errorf("attn_qkv %v", ts.Dims)
		}
	}
	if kinds["ssm_conv1d.weight"] != 36 || kinds["attn_q.weight"] != 12 || kinds["ffn_up_shexp.weight"] != 48 {
		t.Errorf("layer kinds %v: want 36 Gated DeltaNet, 12 attention, 48 shared experts", kinds)
	}
	t.Logf("%.2fB parameters, %.2fB without embeddings, %.2fB active without embeddings; %d bytes in Q8_0", total/1e9, (total-embed)/1e9, active/1e9, p.Size())
	if total < 79e9 || total > 81e9 || total-embed < 78.5e9 || total-embed > 79.5e9 {
		t.Errorf("%.2fB parameters, %.2fB without embeddings: want 80B and 79B", total/1e9, (total-embed)/1e9)
	}
	if active < 2.8e9 || active > 3.5e9 {
		t.Errorf("%.2fB active non-embedding parameters per token: want about 3B", active/1e9)
	}
	// Q8_0: 34 bytes per 32 weights; the experts are nearly all of the file.
	if want := experts * 34 / 32; float64(p.Size()) < want || float64(p.Size()) > want*1.04 {
		t.Errorf("file %d bytes, experts alone %.0f", p.Size(), want)
	}
	for _, l := range []int{1, 3} {
		if _, err := NewPlan(Options{Shape: s, Layers: l, Type: quant.Q8_0, Vocab: vocab}); err == nil {
			t.Errorf("--layers %d (no full-attention layer) accepted", l)
		}
	}
}

// A synthesized qwen3next model loads and runs in regolith: 3 Gated DeltaNet layers and one
// gated attention layer, finite and decisive logits, non-uniform routing, bytes a function
// of the seed alone.
func TestSynthQwen3NextRoundTrip(t *testing.T) {
	for _, qt := range []quant.Type{quant.Q8_0, quant.Q4_K} {
		t.Run(qt.String(), func(t *testing.T) {
			o := Options{Shape: nextSmall, Layers: 4, Type: qt, Seed: 7, Vocab: tinyVocab(t), Workers: 2}
			path, b := write(t, o)
			o.Workers = 1
			if _, b2 := write(t, o); sha256.Sum256(b) != sha256.Sum256(b2) {
				t.Fatal("same seed, different bytes (1 vs 2 workers)")
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := model.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if nx := m.Cfg.Next; nx == nil || nx.NRecurrent != 3 || nx.NAttn != 1 || m.Cfg.RopeDims != 16 {
				t.Fatalf("loaded as %+v (rope dims %d)", nx, m.Cfg.RopeDims)
			}
			checkRun(t, m, 2)
		})
	}
}
