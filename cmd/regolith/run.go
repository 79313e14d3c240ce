package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/regolith/regolith/defaultmodel"
	"github.com/regolith/regolith/engine"
	"github.com/regolith/regolith/expert"
	"github.com/regolith/regolith/internal/units"
	"github.com/regolith/regolith/kvcache"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/sample"
)

func init() {
	commands = append(commands, command{"run", "generate text from a prompt", runRun})
}

// genFlags are the flags run and bench share: model, threads, context, and the memory
// budget that streams experts from disk.
type genFlags struct {
	model     *string
	threads   *int
	ctx       *int
	batch     *int
	mem       *string
	directIO  *autoBool // default: on with --mem (flags.go)
	ioThreads *int
	trace     *traceFlag // --trace FILE: record the routing (trace.go)
	moce      *float64
	protect   *int
	prefetch  *int
}

func addGenFlags(fs interface {
	String(string, string, string) *string
	Int(string, int, string) *int
	Bool(string, bool, string) *bool
	Float64(string, float64, string) *float64
	Var(flag.Value, string, string)
}) genFlags {
	directIO := new(autoBool)
	fs.Var(directIO, "direct-io", directIOUsage)
	return genFlags{
		model:     fs.String("m", "", "GGUF model file (default: the embedded gomoe model, trained on Go source)"),
		threads:   fs.Int("t", 0, "worker threads (0: all CPUs)"),
		ctx:       fs.Int("c", 4096, "context size in tokens (KV cache positions)"),
		batch:     fs.Int("b", 0, "prompt tokens per forward pass (prefill chunk; 0: 512, or with --mem the largest power of two\nup to 8192 whose scratch takes at most 1/16 of the budget left after dense weights and KV cache)"),
		mem:       fs.String("mem", "", "memory budget (e.g. 8GiB): dense weights, KV cache and scratch come first, routed experts stream\nfrom disk through an arena of the rest (default: no budget, the whole file memory-mapped)"),
		directIO:  directIO,
		ioThreads: fs.Int("io-threads", 0, "with --mem: reader goroutines issuing expert reads in parallel (0: 4)"),
		trace:     addTraceFlag(fs),
		moce:      fs.Float64("moce", 0, "with --mem: cache-aware routing strength λ (0: the exact model; lossy above 0, e.g. 0.05-0.1)"),
		protect:   fs.Int("moce-protect", 2, "with --moce: the experts with the largest router logits always chosen"),
		prefetch:  fs.Int("prefetch", 0, "with --mem: in decode, predict this many experts of the next layer and read the predicted\nones not resident onto a prefetch shelf of this many experts per size class, taken from the\nbudget; a shelf entry is used only when a miss asks for it (0: off)"),
	}
}

// open loads the model and makes a session; with --mem, the session's experts come from an
// expert store (returned, nil otherwise) sized from the budget, which it prints on stderr.
func (g genFlags) open() (*engine.Engine, *model.Session, *expert.Store, error) {
	if *g.model == "" {
		p, err := defaultmodel.Path()
		if err != nil {
			return nil, nil, nil, err
		}
		*g.model = p
	}
	if *g.mem == "" && (g.directIO.explicitlyOn() || *g.ioThreads != 0) {
		return nil, nil, nil, fmt.Errorf("--direct-io and --io-threads apply to the expert store: pass --mem SIZE too")
	}
	if *g.moce != 0 && *g.mem == "" {
		return nil, nil, nil, fmt.Errorf("--moce biases routing toward experts resident in the expert store: pass --mem SIZE too")
	}
	if *g.ioThreads < 0 || *g.prefetch < 0 || *g.batch < 0 {
		return nil, nil, nil, fmt.Errorf("-b, --io-threads and --prefetch must not be negative")
	}
	if *g.prefetch != 0 && *g.mem == "" {
		return nil, nil, nil, fmt.Errorf("--prefetch reads experts ahead into the expert store: pass --mem SIZE too")
	}
	var mem int64
	if *g.mem != "" {
		var err error
		if mem, err = units.ParseBytes(*g.mem); err != nil {
			return nil, nil, nil, fmt.Errorf("--mem: %w", err)
		}
	}
	e, err := engine.Open(*g.model)
	if err != nil {
		return nil, nil, nil, err
	}
	opts := model.Options{Ctx: *g.ctx, Threads: *g.threads, MoCE: model.MoCE{Lambda: float32(*g.moce), Protect: *g.protect}}
	var st *expert.Store
	if *g.mem == "" && *g.batch == 0 {
		*g.batch = 512
	}
	if *g.mem != "" {
		po := expert.PlanOptions{Ctx: *g.ctx, Chunk: *g.batch, Threads: threadsUsed(*g.threads), DirectIO: g.directIO.on(true), Prefetch: *g.prefetch}
		if *g.batch == 0 {
			*g.batch = expert.AutoChunk(e.Model, e.File, mem, po)
			po.Chunk = *g.batch
			fmt.Fprintf(os.Stderr, "prefill chunk %d tokens, sized from the budget (-b to choose)\n", *g.batch)
		}
		b, err := expert.Plan(e.Model, e.File, mem, po)
		if err != nil {
			e.Close()
			return nil, nil, nil, err
		}
		fmt.Fprintln(os.Stderr, b)
		cfg := b.Config()
		cfg.Readers, cfg.DirectIO, cfg.Log = *g.ioThreads, g.directIO.on(true), os.Stderr
		if st, err = expert.New(e.Model, e.File, cfg); err != nil {
			e.Close()
			return nil, nil, nil, err
		}
		fmt.Fprintln(os.Stderr, st.Describe())
		opts.Experts = st
	}
	if err := g.trace.attach(e, &opts); err != nil {
		st.Close()
		e.Close()
		return nil, nil, nil, err
	}
	s, err := model.NewSession(e.Model, opts)
	if err != nil {
		st.Close()
		e.Close()
		return nil, nil, nil, err
	}
	return e, s, st, nil
}

type runResult struct {
	PromptIDs    []int32 `json:"prompt_ids"`
	GeneratedIDs []int32 `json:"generated_ids"`
	Text         string  `json:"text"`
	engine.Stats
	PromptTPS float64 `json:"prompt_tokens_per_s"`
	DecodeTPS float64 `json:"decode_tokens_per_s"`
	Seed      uint64  `json:"seed"`
	// ExpertStore is the expert store's counters, with --mem.
	ExpertStore *expert.Stats `json:"expert_store,omitempty"`
	// ReusedTokens are prompt tokens restored by --load-session instead of computed.
	ReusedTokens int `json:"reused_tokens"`
}

// restoreSession loads a session file into s and keeps its longest prefix shared with the
// prompt, less at least one token (the last prompt token is always run, for its logits).
// It returns how many prompt tokens are reused. Exactness: the reused positions are the
// saved run's, bit for bit; continuing from them equals continuing that run (0 KLD), which
// can differ in the last bits from computing the whole prompt in one pass, as llama.cpp's
// attention and matmul kernels depend on the chunk size.
func restoreSession(s *model.Session, path string, fp kvcache.Fingerprint, prompt []int32) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "session file %s does not exist yet: starting fresh\n", path)
		return 0, nil
	}
	saved, err := s.Cache().Load(path, fp)
	if err != nil {
		if kvcache.IsCorrupt(err) {
			return 0, fmt.Errorf("%w (delete the file to start fresh)", err)
		}
		return 0, err
	}
	n := 0
	for n < len(saved) && n < len(prompt)-1 && saved[n] == prompt[n] {
		n++
	}
	n = s.Truncate(n) // a recurrent model may go back further, to its last state checkpoint
	fmt.Fprintf(os.Stderr, "restored %d of %d saved positions from %s\n", n, len(saved), path)
	return n, nil
}

func runRun(args []string) error {
	fs := newFlags("run", "-m FILE.gguf -p TEXT [flags]", "Generates text after a prompt and streams it to stdout; prompt and decode speeds go to\nstderr. Control tokens written in the prompt (e.g. <|im_start|>) are parsed as tokens.\nCtrl-C stops generation cleanly.")
	g := addGenFlags(fs)
	prompt := fs.String("p", "", "prompt text")
	promptFile := fs.String("f", "", "read the prompt from this file")
	n := fs.Int("n", 128, "tokens to generate (-1: until end of generation or a full context)")
	d := sample.DefaultParams()
	temp := fs.Float64("temp", float64(d.Temp), "temperature (0: greedy)")
	topK := fs.Int("top-k", d.TopK, "top-k sampling (0: off)")
	topP := fs.Float64("top-p", float64(d.TopP), "top-p (nucleus) sampling (1: off)")
	minP := fs.Float64("min-p", float64(d.MinP), "min-p sampling (0: off)")
	repeat := fs.Float64("repeat-penalty", float64(d.RepeatPenalty), "repetition penalty (1: off)")
	lastN := fs.Int("repeat-last-n", d.PenaltyLastN, "tokens the repetition penalty looks back over")
	seed := fs.Int64("seed", -1, "random seed (-1: random)")
	chat := fs.Bool("chat", false, "format the prompt as a user message of the model's ChatML chat template")
	asJSON := fs.Bool("json", false, "print one JSON object (prompt_ids, generated_ids, text, timings) instead of streaming")
	loadSession := fs.String("load-session", "", "restore the state saved in this file and reuse it for the prompt's matching prefix\n(a missing file is not an error: the run starts fresh)")
	saveSession := fs.String("save-session", "", "after generating, save the state (KV cache and token ids) to this file")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	text := *prompt
	if *promptFile != "" {
		b, err := os.ReadFile(*promptFile)
		if err != nil {
			return err
		}
		text = string(b)
	}
	if text == "" {
		fs.Usage()
		return fmt.Errorf("no prompt: pass -p TEXT or -f FILE")
	}
	e, s, st, err := g.open()
	if err != nil {
		return err
	}
	defer e.Close()
	defer st.Close()
	defer s.Close()
	defer g.trace.close()
	if *chat {
		if text, err = chatML(e, text); err != nil {
			return err
		}
	}
	p := d
	p.Temp, p.TopK, p.TopP, p.MinP = float32(*temp), *topK, float32(*topP), float32(*minP)
	p.RepeatPenalty, p.PenaltyLastN = float32(*repeat), *lastN
	if *seed >= 0 {
		p.Seed = uint64(*seed)
	}
	smp := sample.New(p, e.Model.Cfg.NVocab)
	ids := e.Tok.Encode(text, true, true)
	var fp kvcache.Fingerprint
	if *loadSession != "" || *saveSession != "" {
		mfp, err := e.File.Fingerprint()
		if err != nil {
			return err
		}
		fp = kvcache.SessionFingerprint(mfp, s.Cache())
	}
	todo := ids // the prompt tokens to compute
	if *loadSession != "" {
		reused, err := restoreSession(s, *loadSession, fp, ids)
		if err != nil {
			return err
		}
		for _, id := range ids[:reused] {
			smp.Accept(id)
		}
		todo = ids[reused:]
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out := bufio.NewWriter(os.Stdout)
	dec := e.Tok.NewDecoder()
	if !*asJSON {
		fmt.Fprint(out, text)
		out.Flush()
	}
	g.trace.beginRequest(len(ids))
	gen, gs, err := e.Generate(ctx, s, engine.Request{Prompt: todo, MaxTokens: *n, Chunk: *g.batch, Sampler: smp,
		OnToken: func(id int32) bool {
			if !*asJSON {
				fmt.Fprint(out, dec.Add(id))
				out.Flush()
			}
			return true
		}})
	var storeStats *expert.Stats
	if st != nil {
		x := st.Stats()
		storeStats = &x
		defer fmt.Fprintln(os.Stderr, x)
	}
	if err != nil {
		return err
	}
	if *saveSession != "" {
		// The session holds the prompt and every generated token it ran forward.
		all := append(append([]int32(nil), ids...), gen...)
		if err := s.Cache().Save(*saveSession, fp, all[:s.Pos()]); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "saved %d positions to %s\n", s.Pos(), *saveSession)
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(runResult{PromptIDs: ids, GeneratedIDs: gen, Text: e.Tok.Decode(gen),
			Stats: gs, PromptTPS: gs.PromptTPS(), DecodeTPS: gs.DecodeTPS(), Seed: smp.Seed(), ExpertStore: storeStats,
			ReusedTokens: len(ids) - len(todo)})
	}
	fmt.Fprintln(out, dec.Flush())
	out.Flush()
	fmt.Fprintf(os.Stderr, "\nprompt: %d tokens in %s (%.1f tok/s) | generated: %d tokens in %s (%.1f tok/s) | stop: %s\n",
		gs.PromptTokens, gs.PromptTime.Round(time.Millisecond), gs.PromptTPS(),
		gs.GeneratedTokens, gs.DecodeTime.Round(time.Millisecond), gs.DecodeTPS(), gs.StopReason)
	return nil
}

// chatML formats text as one user turn for models whose template is ChatML (Qwen and
// most others that use <|im_start|>). Other templates are refused rather than guessed.
func chatML(e *engine.Engine, text string) (string, error) {
	tmpl, _ := e.File.String("tokenizer.chat_template")
	if _, ok := e.Tok.TokenID("<|im_start|>"); !ok || (tmpl != "" && !strings.Contains(tmpl, "<|im_start|>")) {
		return "", fmt.Errorf("--chat supports ChatML templates (<|im_start|>…<|im_end|>) only; this model's template is not one")
	}
	return "<|im_start|>user\n" + text + "<|im_end|>\n<|im_start|>assistant\n", nil
}
