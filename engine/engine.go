// Package engine ties a GGUF file, its model, tokenizer and sampler into text generation:
// the loop that `regolith run`, `bench` and `serve` share.
package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/sample"
	"github.com/regolith/regolith/tokenizer"
)

// Engine is an opened model.
type Engine struct {
	File  *gguf.File
	Model *model.Model
	Tok   *tokenizer.Tokenizer
}

// Open memory-maps a GGUF model and loads its architecture and vocabulary.
func Open(path string) (*Engine, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := model.Load(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Engine{File: f, Model: m, Tok: tok}, nil
}

// Close unmaps the file.
func (e *Engine) Close() error { return e.File.Close() }

// Stats are the timings of one generation.
type Stats struct {
	PromptTokens    int           `json:"prompt_tokens"`
	GeneratedTokens int           `json:"generated_tokens"`
	PromptTime      time.Duration `json:"prompt_ns"`
	DecodeTime      time.Duration `json:"decode_ns"`
	StopReason      string        `json:"stop_reason"` // "length", "eog", "context", "cancelled"
}

// PromptTPS and DecodeTPS are tokens per second.
func (s Stats) PromptTPS() float64 { return rate(s.PromptTokens, s.PromptTime) }
func (s Stats) DecodeTPS() float64 { return rate(s.GeneratedTokens, s.DecodeTime) }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Request is one generation.
type Request struct {
	Prompt    []int32
	MaxTokens int // < 0: until end of generation or a full context
	Chunk     int // prompt tokens per forward pass (0: 512)
	Sampler   *sample.Sampler
	// OnToken receives each generated token; returning false stops generation.
	OnToken func(id int32) bool
	// OnSample, when set, sees the logits each token was sampled from (e.g. for
	// log-probabilities), before OnToken.
	OnSample func(logits []float32, id int32)
}

// Generate prefills the prompt into the session (after what it already holds) and samples
// up to MaxTokens tokens. It stops early at an end-of-generation token, a full context or
// a cancelled context.
func (e *Engine) Generate(ctx context.Context, s *model.Session, r Request) ([]int32, Stats, error) {
	st := Stats{PromptTokens: len(r.Prompt), StopReason: "length"}
	if len(r.Prompt) == 0 {
		return nil, st, fmt.Errorf("engine: empty prompt")
	}
	if s.Pos()+len(r.Prompt) > s.Ctx() {
		return nil, st, fmt.Errorf("engine: prompt of %d tokens does not fit the context of %d (%d used)", len(r.Prompt), s.Ctx(), s.Pos())
	}
	chunk := r.Chunk
	if chunk <= 0 {
		chunk = 512
	}
	t0 := time.Now()
	var logits []float32
	var err error
	for i := 0; i < len(r.Prompt); i += chunk {
		if ctx.Err() != nil {
			st.StopReason = "cancelled"
			return nil, st, nil
		}
		if logits, err = s.Forward(r.Prompt[i:min(i+chunk, len(r.Prompt))], false); err != nil {
			return nil, st, err
		}
	}
	st.PromptTime = time.Since(t0)
	for _, id := range r.Prompt {
		r.Sampler.Accept(id)
	}
	var out []int32
	t1 := time.Now()
	for r.MaxTokens < 0 || len(out) < r.MaxTokens {
		id := r.Sampler.Sample(logits)
		if id < 0 {
			return out, st, fmt.Errorf("engine: no token can be sampled (all logits masked)")
		}
		if r.OnSample != nil {
			r.OnSample(logits, id)
		}
		r.Sampler.Accept(id)
		out = append(out, id)
		if e.Tok.IsEOG(id) {
			st.StopReason = "eog"
			break
		}
		if r.OnToken != nil && !r.OnToken(id) {
			st.StopReason = "stopped"
			break
		}
		if ctx.Err() != nil {
			st.StopReason = "cancelled"
			break
		}
		if r.MaxTokens >= 0 && len(out) == r.MaxTokens {
			break
		}
		if s.Pos() >= s.Ctx() {
			st.StopReason = "context"
			break
		}
		if logits, err = s.Forward([]int32{id}, false); err != nil {
			return out, st, err
		}
	}
	st.DecodeTime = time.Since(t1)
	st.GeneratedTokens = len(out)
	return out, st, nil
}
