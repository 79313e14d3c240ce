package synth

import (
	"bytes"
	"crypto/sha256"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/quant"
)

// tiny is a test-only shape: two layers, every dimension a multiple of Q4_K's 256, the
// 4,116-token vocabulary of gguf/testdata.
var tiny = Shape{Name: "tiny", Arch: "qwen3moe", NLayer: 4, NEmbd: 256, NHead: 4, NHeadKV: 2, HeadDim: 64,
	NExpert: 16, NExpertUsed: 4, NFFExp: 256, NFF: 1024, NVocab: 4116, CtxTrain: 4096, RopeBase: 1e6, Eps: 1e-6}

func tinyVocab(t *testing.T) []gguf.KV {
	f, err := gguf.Open("../gguf/testdata/vocab-qwen3-4k.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var kvs []gguf.KV
	for _, kv := range f.KV {
		if len(kv.Key) > 10 && kv.Key[:10] == "tokenizer." {
			kvs = append(kvs, kv)
		}
	}
	return kvs
}

func write(t *testing.T, o Options) (string, []byte) {
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	n, err := p.WriteTo(f, func(w int64) {
		if w < last {
			t.Errorf("progress went back from %d to %d", last, w)
		}
		last = w
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(b)) || n != p.Size() || last != n {
		t.Fatalf("WriteTo says %d bytes, Size %d, progress %d, file %d", n, p.Size(), last, len(b))
	}
	return path, b
}

// A synthesized model loads (gguf, model), runs, routes non-uniformly, keeps activations
// bounded, and is a function of the seed alone.
func TestSynthRoundTrip(t *testing.T) {
	for _, qt := range []quant.Type{quant.Q8_0, quant.Q4_K} {
		t.Run(qt.String(), func(t *testing.T) {
			o := Options{Shape: tiny, Layers: 2, Type: qt, Seed: 7, Vocab: tinyVocab(t), Workers: 2}
			path, b := write(t, o)
			o.Workers = 1
			_, b2 := write(t, o)
			if sha256.Sum256(b) != sha256.Sum256(b2) {
				t.Fatal("same seed, different bytes (1 vs 2 workers)")
			}
			o.Seed = 8
			_, b3 := write(t, o)
			if bytes.Equal(b, b3) {
				t.Fatal("different seeds, same bytes")
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if n, _ := f.ArchUint("block_count"); n != 2 {
				t.Fatalf("block_count %d", n)
			}
			// The quantized weights have the intended scale: attn_q's σ = 1/√n_embd.
			ti, _ := f.Tensor("blk.0.attn_q.weight")
			row := make([]float32, tiny.NEmbd*int(ti.Dims[1]))
			if err := quant.DequantizeRow(qt, f.Data(ti), row); err != nil {
				t.Fatal(err)
			}
			var s, ss float64
			for _, v := range row {
				s += float64(v)
				ss += float64(v) * float64(v)
			}
			mean, sd := s/float64(len(row)), math.Sqrt(ss/float64(len(row)))
			if want := 1 / math.Sqrt(float64(tiny.NEmbd)); math.Abs(sd/want-1) > 0.05 || math.Abs(mean) > 0.05*want {
				t.Fatalf("attn_q: mean %g σ %g, want 0 and %g", mean, sd, want)
			}
			m, err := model.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, m, 1)
		})
	}
}

func TestSynthRejects(t *testing.T) {
	v := tinyVocab(t)
	bad := []Options{
		{Shape: tiny, Type: quant.F16, Vocab: v},
		{Shape: tiny, Type: quant.Q8_0, Layers: 9, Vocab: v},
		{Shape: tiny, Type: quant.Q8_0},
	}
	for i, o := range bad {
		if _, err := NewPlan(o); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	s, err := ShapeByName("qwen3-30b-a3b")
	if err != nil || s.NLayer != 48 || s.NExpert != 128 || s.NVocab != 151936 {
		t.Fatalf("qwen3-30b-a3b: %+v %v", s, err)
	}
}

type observer func(layer int, chosen []int32)

func (o observer) Routed(layer, pos int, logits []float32, chosen []int32, weights []float32) {
	o(layer, chosen)
}

// checkRun runs 256 random tokens through m and checks that the logits are finite, decisive
// and bounded (RMS 1-20), and that the routers' popularity at the given layer is clearly
// not uniform (the most used expert gets at least 1.5× a uniform share).
func checkRun(t *testing.T, m *model.Model, layer int) {
	t.Helper()
	c := m.Cfg
	counts := make([]int, c.NExpert)
	obs := observer(func(l int, chosen []int32) {
		if l == layer {
			for _, e := range chosen {
				counts[e]++
			}
		}
	})
	sess, err := model.NewSession(m, model.Options{Ctx: 512, Threads: 2, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	toks := make([]int32, 256)
	g := rng{3}
	for i := range toks {
		toks[i] = int32(g.next() % uint64(c.NVocab))
	}
	logits, err := sess.Forward(toks, true)
	if err != nil {
		t.Fatal(err)
	}
	var lss float64
	for _, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("non-finite logit")
		}
		lss += float64(v) * float64(v)
	}
	if rms := math.Sqrt(lss / float64(len(logits))); rms < 1 || rms > 20 {
		t.Fatalf("logit RMS %.2f: not decisive or not bounded", rms)
	}
	mx, total := 0, 0
	for _, n := range counts {
		mx = max(mx, n)
		total += n
	}
	if total != len(toks)*c.NExpertUsed {
		t.Fatalf("observed %d selections", total)
	}
	if share := float64(mx) / float64(total); share < 1.5/float64(c.NExpert) {
		t.Fatalf("most popular expert has %.3f of selections: popularity is near uniform", share)
	}
}
