package model

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
)

// parityCase is one fixture of ../shared/fixtures/parity: llama.cpp's logits for a model
// and prompt (see the fixtures README for the acceptance criteria used below).
type parityCase struct {
	Model          string      `json:"model"`
	NVocab         int         `json:"n_vocab"`
	NPrompt        int         `json:"n_prompt"`
	NGen           int         `json:"n_gen"`
	PromptIDs      []int32     `json:"prompt_ids"`
	GreedyIDs      []int32     `json:"greedy_ids"`
	Top16IDs       [][]int32   `json:"top16_ids"`
	Top16Logits    [][]float32 `json:"top16_logits"`
	Margins        []float32   `json:"margins"`
	GreedyStrict   bool        `json:"greedy_strict"`
	LogitsFile     string      `json:"logits_file"`
	LogitsFirstRow int         `json:"logits_file_first_row"`
}

// Acceptance, from the fixtures README: F32 models within 2e-3 of every stored logit with
// the same argmax everywhere; quantized models mean KL ≤ 5e-4 with the same argmax where
// llama.cpp's top-2 margin is at least 0.1. regolith sums in llama.cpp's order (quant's
// LlamaMatMul, glibc's expf, cosf and sinf, GCC's fused multiply-adds), and on every case
// (F32, Q8_0 and Q4_K_M; short and 898-token prompts) its logits are bit-identical to the
// fixtures' stored logits.
const (
	f32MaxDiff  = 2e-3
	quantMeanKL = 5e-4
	flipMargin  = 0.1
)

// llamaUbatch is llama.cpp's default micro-batch: a long prompt is computed in pieces of
// this many tokens, which decides the attention kernel it uses.
const llamaUbatch = 512

func loadParity(t *testing.T, path string) (*parityCase, []float32) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pc parityCase
	if err := json.Unmarshal(b, &pc); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(path), pc.LogitsFile))
	if err != nil {
		t.Fatal(err)
	}
	ref := make([]float32, len(raw)/4)
	for i := range ref {
		ref[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return &pc, ref
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// kl is KL(p‖q) of the softmaxes of logits a (reference) and b.
func kl(a, b []float32) float64 {
	lse := func(x []float32) float64 {
		m := math.Inf(-1)
		for _, v := range x {
			m = math.Max(m, float64(v))
		}
		var s float64
		for _, v := range x {
			s += math.Exp(float64(v) - m)
		}
		return m + math.Log(s)
	}
	la, lb := lse(a), lse(b)
	var d float64
	for i := range a {
		lp := float64(a[i]) - la
		d += math.Exp(lp) * (lp - (float64(b[i]) - lb))
	}
	return d
}

func TestParityQwen3MoE(t *testing.T) { testParity(t, "parity/qwen3moe-*.json") }

func TestParityQwen3Next(t *testing.T) { testParity(t, "parity/qwen3next-*.json") }

func testParity(t *testing.T, pattern string) {
	cases := fixtures.Glob(t, pattern)
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			if testing.Short() && strings.Contains(name, ".long") {
				t.Skip("long prompt in -short mode")
			}
			pc, ref := loadParity(t, path)
			f, err := gguf.Open(fixtures.Path(t, "models", pc.Model))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSession(m, Options{Ctx: 4096, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			isF32 := strings.Contains(pc.Model, "f32")
			V := pc.NVocab
			var maxDiff, sumKL float64
			nKL, flips := 0, 0
			check := func(row int, logits []float32) {
				// Every row: the top-1 of llama.cpp's top-16 table.
				if am := argmax(logits); int32(am) != pc.Top16IDs[row][0] {
					if pc.Margins[row] >= flipMargin || isF32 {
						flips++
						t.Errorf("row %d: argmax %d, llama.cpp %d (margin %.3f)", row, am, pc.Top16IDs[row][0], pc.Margins[row])
					}
				}
				if row < pc.LogitsFirstRow {
					for i, id := range pc.Top16IDs[row] {
						if d := math.Abs(float64(logits[id] - pc.Top16Logits[row][i])); isF32 && d > maxDiff {
							maxDiff = d
						}
					}
					return
				}
				r := ref[(row-pc.LogitsFirstRow)*V : (row-pc.LogitsFirstRow+1)*V]
				for i := range r {
					if d := math.Abs(float64(logits[i] - r[i])); d > maxDiff {
						maxDiff = d
					}
				}
				sumKL += kl(r, logits)
				nKL++
			}
			for p0 := 0; p0 < pc.NPrompt; p0 += llamaUbatch {
				chunk := pc.PromptIDs[p0:min(p0+llamaUbatch, pc.NPrompt)]
				logits, err := s.Forward(chunk, true)
				if err != nil {
					t.Fatal(err)
				}
				for i := range chunk {
					check(p0+i, logits[i*V:(i+1)*V])
				}
			}
			// Feed llama.cpp's greedy tokens: row n_prompt+g is the output after token g. With
			// the argmax equal at every row, regolith's own greedy continuation is the same.
			for g, id := range pc.GreedyIDs {
				if g > 0 && pc.GreedyIDs[g] != pc.Top16IDs[pc.NPrompt+g-1][0] {
					t.Fatalf("fixture inconsistent at step %d", g)
				}
				logits, err := s.Forward([]int32{id}, false)
				if err != nil {
					t.Fatal(err)
				}
				check(pc.NPrompt+g, logits)
			}
			meanKL := sumKL / float64(max(nKL, 1))
			t.Logf("%s: max |Δlogit| %.2e, mean KL %.2e over %d rows, decisive argmax flips %d", name, maxDiff, meanKL, nKL, flips)
			if isF32 && maxDiff > f32MaxDiff {
				t.Errorf("max |Δlogit| %.3g > %g", maxDiff, f32MaxDiff)
			}
			if !isF32 && meanKL > quantMeanKL {
				t.Errorf("mean KL %.3g > %g", meanKL, quantMeanKL)
			}
		})
	}
}
