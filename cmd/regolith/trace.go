package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/regolith/regolith/engine"
	"github.com/regolith/regolith/internal/units"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/sample"
	"github.com/regolith/regolith/trace"
)

func init() {
	commands = append(commands, command{"trace", "record routing traces; replay them against simulated expert caches (record, info, replay, sweep)", runTrace})
}

// traceFlag is --trace FILE on run and bench (genFlags): the session's routing goes to a
// trace file through a trace.Recorder, which changes nothing about the output.
type traceFlag struct {
	path *string
	top  *int
	rec  *trace.Recorder
	f    *os.File
}

func addTraceFlag(fs interface {
	String(string, string, string) *string
	Int(string, int, string) *int
}) *traceFlag {
	return &traceFlag{
		path: fs.String("trace", "", "record every token's routing (top router candidates and logits per layer) to this trace file\n(see regolith trace)"),
		top:  fs.Int("trace-top", 64, "with --trace: router candidates stored per token and layer (capped at the experts per layer)"),
	}
}

// attach makes opts record the routing when --trace was given.
func (t *traceFlag) attach(e *engine.Engine, opts *model.Options) error {
	if t == nil || *t.path == "" {
		return nil
	}
	h, err := trace.HeaderFor(e.Model, e.File, *t.top)
	if err != nil {
		return err
	}
	f, err := os.Create(*t.path)
	if err != nil {
		return fmt.Errorf("--trace: %w", err)
	}
	rec, err := trace.NewRecorder(f, h)
	if err != nil {
		f.Close()
		return fmt.Errorf("--trace: %w", err)
	}
	src := opts.Experts
	if src == nil {
		src = model.NewResident(e.Model)
	}
	opts.Experts, opts.Observer = rec.Wrap(src), rec
	t.rec, t.f = rec, f
	return nil
}

func (t *traceFlag) beginRequest(promptTokens int) {
	if t != nil && t.rec != nil {
		t.rec.BeginRequest(promptTokens)
	}
}

// close finishes the trace file; a failure is reported on stderr.
func (t *traceFlag) close() {
	if t == nil || t.rec == nil {
		return
	}
	err := t.rec.Close()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "regolith: --trace %s: %v\n", *t.path, err)
	} else if fi, err := os.Stat(*t.path); err == nil {
		fmt.Fprintf(os.Stderr, "trace: %s written to %s\n", units.FormatBytes(fi.Size()), *t.path)
	}
	t.rec = nil
}

var traceCommands = []command{
	{"record", "run a prompt (teacher-forced in chunks) and greedy decoding, recording the routing", traceRecord},
	{"info", "describe a trace", traceInfo},
	{"replay", "simulate an expert cache over a trace", traceReplay},
	{"sweep", "replay the cross product of cache sizes, policies, MoCE settings and keep-maps in parallel", traceSweep},
}

func runTrace(args []string) error {
	if len(args) > 0 {
		for _, c := range traceCommands {
			if c.name == args[0] {
				return c.run(args[1:])
			}
		}
	}
	fmt.Fprintf(os.Stderr, "Usage: regolith trace SUBCOMMAND [flags]\n\n")
	for _, c := range traceCommands {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'regolith trace SUBCOMMAND --help' for its flags.\n")
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return nil
	}
	return fmt.Errorf("unknown subcommand %q", args[0])
}

func traceRecord(args []string) error {
	fs := newFlags("trace record", "[-m FILE.gguf] (-f PROMPT_FILE | -p TEXT) -n N -o OUT.trace [flags]",
		"Runs the prompt through the model in -b token chunks (teacher-forced: the prompt's own tokens), then\ngenerates -n tokens (greedy unless --temp), recording every token's routing to -o.")
	g := addGenFlags(fs)
	out := fs.String("o", "", "trace file to write")
	prompt := fs.String("p", "", "prompt text")
	promptFile := fs.String("f", "", "read the prompt from this file")
	n := fs.Int("n", 128, "tokens to generate after the prompt")
	maxPrompt := fs.Int("max-prompt", 0, "keep only the first N tokens of the prompt (0: all)")
	temp := fs.Float64("temp", 0, "sampling temperature (0: greedy)")
	seed := fs.Int64("seed", 1, "random seed for --temp > 0")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("no output: pass -o FILE")
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
		return fmt.Errorf("no prompt: pass -p TEXT or -f FILE")
	}
	*g.trace.path = *out
	e, s, st, err := g.open()
	if err != nil {
		return err
	}
	defer e.Close()
	defer st.Close()
	defer s.Close()
	defer g.trace.close()
	ids := e.Tok.Encode(text, true, false)
	if *maxPrompt > 0 && len(ids) > *maxPrompt {
		ids = ids[:*maxPrompt]
	}
	if len(ids)+*n > s.Ctx() {
		return fmt.Errorf("%d prompt tokens + %d generated exceed the context of %d (raise -c)", len(ids), *n, s.Ctx())
	}
	p := sample.DefaultParams()
	p.Temp, p.Seed = float32(*temp), uint64(*seed)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	g.trace.beginRequest(len(ids))
	gen, gs, err := e.Generate(ctx, s, engine.Request{Prompt: ids, MaxTokens: *n, Chunk: *g.batch, Sampler: sample.New(p, e.Model.Cfg.NVocab)})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "recorded %d prompt tokens (%.1f tok/s) and %d generated (%.1f tok/s, stop: %s)\n",
		gs.PromptTokens, gs.PromptTPS(), len(gen), gs.DecodeTPS(), gs.StopReason)
	return nil
}

func openTrace(fs interface{ Args() []string }) (*trace.Trace, string, error) {
	if len(fs.Args()) != 1 {
		return nil, "", fmt.Errorf("give one trace file")
	}
	p := fs.Args()[0]
	t0 := time.Now()
	t, err := trace.Open(p)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(os.Stderr, "trace %s: %d tokens (%d chunks, %d requests), %d layers, top-%d of %d experts, k %d; read in %s\n",
		p, t.Tokens, len(t.Chunks), len(t.Requests), t.NLayer, t.TopN, t.NExpert, t.K, time.Since(t0).Round(time.Millisecond))
	return t, p, nil
}

type traceSummary struct {
	Model        string  `json:"model"`
	Fingerprint  string  `json:"fingerprint"`
	ModelBytes   uint64  `json:"model_bytes"`
	Layers       int     `json:"layers"`
	Experts      int     `json:"experts"`
	K            int     `json:"k"`
	TopN         int     `json:"top_n"`
	ExpertBytes  []int64 `json:"expert_bytes"`
	Tokens       int     `json:"tokens"`
	PromptTokens int     `json:"prompt_tokens"`
	DecodeTokens int     `json:"decode_tokens"`
	Chunks       int     `json:"chunks"`
	Requests     int     `json:"requests"`
	// ChosenNotTopK counts (token, layer) pairs whose chosen experts are not the top-k of
	// the stored logits (ties of the softmax probabilities can do that).
	ChosenNotTopK int `json:"chosen_not_top_k"`
}

func summarizeTrace(t *trace.Trace) traceSummary {
	s := traceSummary{Model: t.Name, Fingerprint: fmt.Sprintf("%x", t.Fingerprint), ModelBytes: t.ModelSize, Layers: t.NLayer,
		Experts: t.NExpert, K: t.K, TopN: t.TopN, ExpertBytes: t.ExpertBytes, Tokens: t.Tokens, Chunks: len(t.Chunks), Requests: len(t.Requests)}
	for _, c := range t.Chunks {
		if c.Kind == trace.Prompt {
			s.PromptTokens += c.Tokens
		} else {
			s.DecodeTokens += c.Tokens
		}
	}
	for l := 0; l < t.NLayer; l++ {
		for tok := 0; tok < t.Tokens; tok++ {
			top := t.Cand[l][tok*t.TopN : tok*t.TopN+t.K]
			for j, e := range t.Chosen[l][tok*t.K : (tok+1)*t.K] {
				if top[j] != e {
					s.ChosenNotTopK++
					break
				}
			}
		}
	}
	return s
}

func traceInfo(args []string) error {
	fs := newFlags("trace info", "FILE [--json]", "Describes a trace: the model it was recorded from, its size and its markers.")
	asJSON := fs.Bool("json", false, "print JSON")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	t, _, err := openTrace(fs)
	if err != nil {
		return err
	}
	s := summarizeTrace(t)
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(s)
	}
	fmt.Printf("model:        %s (%s, fingerprint %s…)\n", s.Model, units.FormatBytes(int64(s.ModelBytes)), s.Fingerprint[:16])
	fmt.Printf("routing:      %d layers, %d experts, top-%d; %d candidates stored per token and layer\n", s.Layers, s.Experts, s.K, s.TopN)
	fmt.Printf("expert bytes: %s (layer 0)\n", units.FormatBytes(s.ExpertBytes[0]))
	fmt.Printf("tokens:       %d (%d prompt, %d decode) in %d chunks, %d requests\n", s.Tokens, s.PromptTokens, s.DecodeTokens, s.Chunks, s.Requests)
	fmt.Printf("chosen ≠ top-k of logits: %d of %d (token, layer) pairs\n", s.ChosenNotTopK, s.Tokens*s.Layers)
	return nil
}

// replayFlags are the flags replay and sweep share.
type replayFlags struct {
	policy, cache, slots, bytes, moce, protect, keep *string
	decay, near                                      *float64
}

func addReplayFlags(fs interface {
	String(string, string, string) *string
	Float64(string, float64, string) *float64
}, sweep bool) replayFlags {
	list := ""
	if sweep {
		list = " (comma-separated list)"
	}
	r := replayFlags{
		cache:   fs.String("cache", "", "arena of this many experts per layer"+list),
		slots:   fs.String("slots", "", "one arena per size class with this many slots shared by its layers, as the engine's expert\nstore (expert.Config.Slots)"+list),
		bytes:   fs.String("cache-bytes", "", "one shared arena of this many bytes (e.g. 64MiB), split between size classes by their\nexperts' bytes"+list),
		decay:   fs.Float64("decay", trace.DefaultDecay, "EMA policies: every expert's score decays by this factor every token"),
		near:    fs.Float64("near-credit", trace.DefaultNearCredit, "near_pick_ema: credit of the k candidates behind the chosen ones"),
		keep:    fs.String("keep", "", "keep-map of a pruned model (JSON: per layer, the kept expert ids)"+list),
		policy:  fs.String("policy", "lru", "eviction policy: lru, lfu, ema, near_pick_ema, inverse_router_ema, belady"+map[bool]string{true: " (list, or all)"}[sweep]),
		moce:    fs.String("moce", "0", "MoCE cache-aware routing λ in closed loop against the simulated residency (0: off)"+list),
		protect: fs.String("moce-protect", "2", "MoCE: the top-logit experts always chosen"+list),
	}
	return r
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// configs is the cross product of the flags' lists, in a fixed order: keep-map, MoCE
// setting, policy, cache size. λ = 0 is one setting whatever the protect list; Belady only
// runs without MoCE.
func (r replayFlags) configs(t *trace.Trace) ([]trace.Config, error) {
	var base []trace.Config
	n := 0
	for _, s := range []string{*r.cache, *r.slots, *r.bytes} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("give one of --cache, --slots, --cache-bytes")
	}
	for _, f := range splitList(*r.cache) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--cache %q: want a positive number of experts", f)
		}
		base = append(base, trace.Config{Cache: v})
	}
	for _, f := range splitList(*r.slots) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--slots %q: want a positive number of slots", f)
		}
		base = append(base, trace.Config{Slots: v})
	}
	for _, f := range splitList(*r.bytes) {
		v, err := units.ParseBytes(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--cache-bytes %q: %v", f, err)
		}
		base = append(base, trace.Config{CacheBytes: v})
	}
	var pols []trace.Policy
	for _, f := range splitList(*r.policy) {
		if f == "all" {
			pols = append(pols, trace.Policies()...)
			continue
		}
		p, err := trace.ParsePolicy(f)
		if err != nil {
			return nil, err
		}
		pols = append(pols, p)
	}
	type mset struct {
		lambda  float32
		protect int
	}
	var ms []mset
	for _, f := range splitList(*r.moce) {
		l, err := strconv.ParseFloat(f, 32)
		if err != nil || l < 0 {
			return nil, fmt.Errorf("--moce %q: want λ ≥ 0", f)
		}
		if l == 0 {
			ms = append(ms, mset{})
			continue
		}
		for _, pf := range splitList(*r.protect) {
			p, err := strconv.Atoi(pf)
			if err != nil || p < 0 {
				return nil, fmt.Errorf("--moce-protect %q: want a count ≥ 0", pf)
			}
			ms = append(ms, mset{float32(l), p})
		}
	}
	type km struct {
		k    *trace.Keep
		name string
	}
	keeps := []km{{}}
	if *r.keep != "" {
		keeps = nil
		for _, f := range splitList(*r.keep) {
			k, err := trace.ReadKeep(f, t.NLayer, t.NExpert)
			if err != nil {
				return nil, err
			}
			keeps = append(keeps, km{k, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))})
		}
	}
	var out []trace.Config
	for _, k := range keeps {
		for _, m := range ms {
			for _, p := range pols {
				if p == trace.Belady && m.lambda > 0 {
					continue
				}
				for _, b := range base {
					c := b
					c.Policy, c.Lambda, c.Protect, c.Keep, c.KeepName = p, m.lambda, m.protect, k.k, k.name
					c.Decay, c.NearCredit = *r.decay, *r.near
					if m.lambda == 0 {
						c.Protect = 0
					}
					out = append(out, c)
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no configuration to replay")
	}
	return out, nil
}

func traceReplay(args []string) error {
	fs := newFlags("trace replay", "FILE (--cache C | --slots S | --cache-bytes B) [--policy P] [--moce λ --moce-protect J] [--keep FILE] [--json]",
		"Simulates an expert arena over a trace: every chunk's layer needs all its experts resident at once\n(never evicting one the chunk needs, as the engine); misses take a free slot or evict the policy's\nvictim. With --moce every token is rerouted with the engine's MoCE selection against the simulated\nresidency (closed loop). Reports hits, misses, hit rate and bytes per token, split prefill/decode\nand per layer.")
	rf := addReplayFlags(fs, false)
	asJSON := fs.Bool("json", false, "print the result as JSON (top-level hits and misses, prefill, decode, layers)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	t, _, err := openTrace(fs)
	if err != nil {
		return err
	}
	cfgs, err := rf.configs(t)
	if err != nil {
		return err
	}
	if len(cfgs) != 1 {
		return fmt.Errorf("replay runs one configuration (%d given): use regolith trace sweep for lists", len(cfgs))
	}
	r, err := trace.Replay(t, cfgs[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	fmt.Printf("%s, cache %g %s (slots per class %v)\n", r.Label, r.Size(), r.SizeUnit(), r.SlotsPerClass)
	fmt.Printf("all:     %d tokens, %d hits, %d misses (%.3f per token), hit rate %.2f%%, %.3f MB per token\n",
		r.Tokens, r.Hits, r.Misses, r.MissesPerToken, 100*r.HitRate, r.BytesPerToken/1e6)
	for _, p := range []struct {
		name string
		p    trace.Phase
	}{{"prefill", r.Prefill}, {"decode", r.Decode}} {
		fmt.Printf("%-8s %d tokens, %d lookups, %d hits, %d misses (%.3f per token; %d forced, %d overflow), hit rate %.2f%%, %.3f MB per token\n",
			p.name+":", p.p.Tokens, p.p.Lookups, p.p.Hits, p.p.Misses, p.p.MissesPerToken(), p.p.Forced, p.p.Overflow,
			100*p.p.HitRate(), p.p.BytesPerToken()/1e6)
	}
	fmt.Printf("per layer (hits/misses):")
	for l, c := range r.Layers {
		fmt.Printf(" %d:%d/%d", l, c.Hits, c.Misses)
	}
	fmt.Println()
	return nil
}

type sweepOut struct {
	Trace   traceSummary    `json:"trace"`
	Seconds float64         `json:"seconds"`
	Results []*trace.Result `json:"results"`
}

func traceSweep(args []string) error {
	fs := newFlags("trace sweep", "FILE --cache 8,16,32 --policy all --moce 0,0.05,0.1 --moce-protect 2 [--keep A.json,B.json] [-j N] [--json OUT] [--svg OUT]",
		"Replays the cross product of cache sizes × policies × MoCE settings × keep-maps over a trace, in\nparallel (one goroutine per configuration), and prints a table in a fixed order. Belady runs\nwithout MoCE only (it is the bound for the trace's own routing).")
	rf := addReplayFlags(fs, true)
	*rf.policy = "all"
	jobs := fs.Int("j", 0, "configurations replayed at once (0: all cores)")
	jsonOut := fs.String("json", "", "write the results as JSON to this file")
	svgOut := fs.String("svg", "", "write a plot (misses per token against cache size) as SVG to this file")
	metric := fs.String("plot", "decode", "what the plot shows: decode (misses per decoded token) or all (per token)")
	title := fs.String("title", "", "plot title (default: the model and trace)")
	diskMBps := fs.Float64("disk-mbps", 0, "latency model: expert bytes read per second in MB/s (regolith bench --disk); 0: no prediction")
	computeMs := fs.Float64("compute-ms", 0, "latency model: decode compute per token in ms with every expert resident (regolith bench)")
	prefillMs := fs.Float64("prefill-compute-ms", 0, "latency model: prefill compute per prompt token in ms, experts resident")
	stallMs := fs.Float64("stall-ms", 0, "latency model: ms lost per layer that waits for reads (workers parked and woken)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *diskMBps < 0 || *computeMs < 0 || *prefillMs < 0 || *stallMs < 0 {
		return fmt.Errorf("--disk-mbps, --compute-ms and --prefill-compute-ms must not be negative")
	}
	t, path, err := openTrace(fs)
	if err != nil {
		return err
	}
	cfgs, err := rf.configs(t)
	if err != nil {
		return err
	}
	t0 := time.Now()
	rs := trace.Sweep(t, cfgs, *jobs)
	el := time.Since(t0)
	if *diskMBps > 0 {
		lat := trace.Latency{DiskBytesPerSec: *diskMBps * 1e6, DecodeCompute: *computeMs / 1e3, PrefillCompute: *prefillMs / 1e3, StallSeconds: *stallMs / 1e3}
		for _, r := range rs {
			if r.Err == "" {
				p := lat.Predict(r)
				r.Predicted = &p
			}
		}
	}
	fmt.Fprintf(os.Stderr, "%d configurations in %s\n", len(cfgs), el.Round(time.Millisecond))
	trace.WriteTable(os.Stdout, rs)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(sweepOut{summarizeTrace(t), el.Seconds(), rs}, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *svgOut != "" {
		if *title == "" {
			*title = fmt.Sprintf("%s: %s (%d tokens, top-%d of %d)", t.Name, filepath.Base(path), t.Tokens, t.K, t.NExpert)
		}
		f, err := os.Create(*svgOut)
		if err != nil {
			return err
		}
		if err := trace.PlotSVG(f, rs, *title, *metric); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
