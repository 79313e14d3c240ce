package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/regolith/regolith/defaultmodel"
	"github.com/regolith/regolith/engine"
	"github.com/regolith/regolith/eval"
	"github.com/regolith/regolith/expert"
	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/prune"
)

func init() {
	commands = append(commands, command{"eval", "measure a model against a reference: KL divergence, top-1 agreement, NLL (teacher-forced over a corpus)", runEval})
}

// modelPath resolves "default" (or "") to the embedded model's file.
func modelPath(p string) (string, error) {
	if p == "" || p == "default" {
		return defaultmodel.Path()
	}
	return p, nil
}

// evalSide is one model of the comparison with its session.
type evalSide struct {
	name string
	e    *engine.Engine
	s    *model.Session
	done func()
}

func (s *evalSide) close() {
	if s == nil {
		return
	}
	if s.s != nil {
		s.s.Close()
	}
	if s.e != nil {
		s.e.Close()
	}
	if s.done != nil {
		s.done()
	}
}

func openEvalSide(path string, ctx, threads int, o evalOptions, tr *traceFlag) (*evalSide, error) {
	p, err := modelPath(path)
	if err != nil {
		return nil, err
	}
	side := &evalSide{name: path}
	if side.name == "" {
		side.name = "default"
	}
	if p, side.done, err = o.prepare(p); err != nil {
		return nil, err
	}
	if side.e, err = engine.Open(p); err != nil {
		side.close()
		return nil, err
	}
	opts := model.Options{Ctx: ctx, Threads: threads}
	if err := o.apply(side, &opts); err != nil {
		side.close()
		return nil, err
	}
	if tr != nil && *tr.path != "" {
		if o.lambda != 0 {
			side.close()
			return nil, fmt.Errorf("--trace records the test model's own routing: leave out --moce (trace replay --moce reroutes it)")
		}
		if err := tr.attach(side.e, &opts); err != nil {
			side.close()
			return nil, err
		}
	}
	if side.s, err = model.NewSession(side.e.Model, opts); err != nil {
		side.close()
		return nil, err
	}
	return side, nil
}

func runEval(args []string) error {
	fs := newFlags("eval", "(--ref MODEL | --ref-logits FILE) [--test MODEL] --corpus PATH[,PATH…] [flags]",
		"Teacher-forces a corpus through a reference and a test model and compares their next-token\n"+
			"distributions at every position: full-vocabulary KL(p_ref ‖ p_test) (nats, float64), top-1\n"+
			"agreement and the NLL of the actual next token under each; per-document and corpus means with\n"+
			"bootstrap 95% confidence intervals (blocks of 32 positions, 1000 resamples, fixed seed), argmax\n"+
			"flips n/N and the positions carrying the most KL. Documents: text files, directories of them, or\n"+
			"NUL-separated (optionally gzipped) shards; special-token text is not parsed; BOS only if the\n"+
			"model adds one; each document is cut into windows of -c tokens evaluated from an empty context.\n"+
			"MODEL may be \"default\" (the embedded gomoe). --save-ref writes the reference's logits once;\n"+
			"--ref-logits compares against them instead of running the reference (the windows come from the file).\n"+
			"--trace FILE records the test model's routing over the same windows (each window a request; with\n"+
			"-b 1 every position is a decode step) for trace replay.")
	ref := fs.String("ref", "", "reference GGUF model (\"default\": the embedded model)")
	test := fs.String("test", "", "test GGUF model (\"default\": the embedded model); without it, --save-ref only writes the reference")
	corpus := fs.String("corpus", "", "documents: files, directories or NUL-separated .gz shards (comma-separated)")
	saveRef := fs.String("save-ref", "", "write the reference's logits to this file (reusable with --ref-logits)")
	refEnc := fs.String("ref-encoding", "f16", "--save-ref row encoding: f16 (z − max z as half floats, bounded) or f32 (exact)")
	refLogits := fs.String("ref-logits", "", "compare against these saved reference logits instead of running --ref")
	ctx := fs.Int("c", 512, "window: tokens per evaluation context (each window starts from an empty cache)")
	maxDoc := fs.Int("max-doc-tokens", 0, "use only each document's first N tokens (0: all)")
	maxTok := fs.Int("max-tokens", 0, "stop after N tokens in all (0: the whole corpus)")
	batch := fs.Int("b", 512, "tokens per forward pass")
	threads := fs.Int("t", 0, "worker threads (0: all CPUs)")
	worst := fs.Int("worst", 10, "list this many highest-KL positions")
	asJSON := fs.Bool("json", false, "print the report as JSON (top-level kld_mean)")
	to := addEvalOptions(fs)
	tr := addTraceFlag(fs)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if (*ref == "") == (*refLogits == "") {
		return fmt.Errorf("pass exactly one of --ref MODEL and --ref-logits FILE")
	}
	if *refLogits != "" && *saveRef != "" {
		return fmt.Errorf("--save-ref writes a reference run's logits; with --ref-logits there is none")
	}
	if *test == "" && *saveRef == "" {
		return fmt.Errorf("nothing to do: pass --test MODEL, or --save-ref FILE to only save the reference")
	}
	if *refLogits == "" && *corpus == "" {
		return fmt.Errorf("no corpus: pass --corpus PATH")
	}
	if *ctx < 2 {
		return fmt.Errorf("-c must be at least 2")
	}
	enc, err := eval.ParseEncoding(*refEnc)
	if err != nil {
		return err
	}
	start := time.Now()

	var refSide, testSide *evalSide
	defer func() { refSide.close(); testSide.close() }()
	defer tr.close()
	var rd *eval.RefReader
	var windows []eval.Window
	refName := *ref
	var vocab int
	if *refLogits != "" {
		f, err := os.Open(*refLogits)
		if err != nil {
			return err
		}
		defer f.Close()
		if rd, err = eval.NewRefReader(f); err != nil {
			return fmt.Errorf("%s: %w", *refLogits, err)
		}
		refName, vocab = rd.Model+" (saved: "+*refLogits+")", rd.Vocab
		if *corpus != "" {
			fmt.Fprintf(os.Stderr, "eval: --corpus ignored: the windows come from %s\n", *refLogits)
		}
	} else {
		if refSide, err = openEvalSide(*ref, *ctx, *threads, evalOptions{}, nil); err != nil {
			return fmt.Errorf("--ref: %w", err)
		}
		refName, vocab = refSide.name, refSide.e.Model.Cfg.NVocab
		docs, err := eval.ReadCorpus(splitList(*corpus)...)
		if err != nil {
			return err
		}
		windows = eval.Windows(refSide.e.Tok, docs, *ctx, *maxDoc, *maxTok)
		if len(windows) == 0 {
			return fmt.Errorf("the corpus has no window of 2 or more tokens")
		}
	}
	if *test != "" {
		o := to.options()
		o.chunk = *batch
		if testSide, err = openEvalSide(*test, *ctx, *threads, o, tr); err != nil {
			return fmt.Errorf("--test: %w", err)
		}
		if v := testSide.e.Model.Cfg.NVocab; v != vocab {
			return fmt.Errorf("the test model's vocabulary has %d tokens, the reference's %d", v, vocab)
		}
		testSide.name = *test + to.describe()
	}
	var wr *eval.RefWriter
	var saveF *os.File
	if *saveRef != "" {
		if saveF, err = os.Create(*saveRef); err != nil {
			return err
		}
		defer saveF.Close()
		if wr, err = eval.NewRefWriter(saveF, enc, vocab, refName); err != nil {
			return err
		}
	}

	acc := &eval.Accumulator{NWorst: *worst}
	var cmp eval.Comparer
	var refBuf, testBuf []float32
	tokens := 0
	for i := 0; ; i++ {
		var w eval.Window
		if rd != nil {
			var ok bool
			if w, refBuf, ok, err = rd.Next(refBuf); err != nil {
				return fmt.Errorf("%s: %w", *refLogits, err)
			}
			if !ok {
				break
			}
			if len(w.Tokens) > testSide.s.Ctx() {
				return fmt.Errorf("a saved window of %d tokens exceeds -c %d", len(w.Tokens), testSide.s.Ctx())
			}
		} else {
			if i == len(windows) {
				break
			}
			w = windows[i]
			if refBuf, err = eval.Logits(refSide.s, w.Tokens, *batch, vocab, refBuf); err != nil {
				return fmt.Errorf("reference: %w", err)
			}
			if wr != nil {
				if err := wr.Window(w, refBuf); err != nil {
					return err
				}
			}
		}
		for _, t := range w.Tokens {
			if t < 0 || int(t) >= vocab {
				return fmt.Errorf("token %d outside the vocabulary of %d", t, vocab)
			}
		}
		tokens += len(w.Tokens)
		if testSide == nil {
			continue
		}
		if testBuf, err = eval.Logits(testSide.s, w.Tokens, *batch, vocab, testBuf); err != nil {
			return fmt.Errorf("test: %w", err)
		}
		eval.CompareWindow(acc, &cmp, w, refBuf, testBuf, vocab)
	}
	if wr != nil {
		if err := wr.Close(); err != nil {
			return err
		}
		if err := saveF.Close(); err != nil {
			return err
		}
		fi, _ := os.Stat(*saveRef)
		fmt.Fprintf(os.Stderr, "eval: reference logits of %d tokens saved to %s (%d bytes)\n", tokens, *saveRef, fi.Size())
	}
	if testSide == nil {
		return nil
	}
	r := acc.Report()
	r.Ref, r.Test = refName, testSide.name
	tok := testSide.e.Tok
	for i := range r.Worst {
		w := &r.Worst[i]
		w.NextStr, w.RefStr, w.TestStr = tok.Decode([]int32{w.Next}), tok.Decode([]int32{w.RefTop}), tok.Decode([]int32{w.TestTop})
	}
	fmt.Fprintf(os.Stderr, "eval: %d tokens in %.1f s\n", tokens, time.Since(start).Seconds())
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printEvalReport(os.Stdout, r)
	return nil
}

func printEvalReport(w io.Writer, r *eval.Report) {
	fmt.Fprintf(w, "ref:  %s\ntest: %s\n%d positions in %d documents\n\n", r.Ref, r.Test, r.Positions, len(r.Documents))
	ci := func(m eval.Metric, f string) string {
		return fmt.Sprintf(f+"  ["+f+", "+f+"]", m.Mean, m.Lo, m.Hi)
	}
	pct := func(m eval.Metric) eval.Metric {
		return eval.Metric{Mean: 100 * m.Mean, Lo: 100 * m.Lo, Hi: 100 * m.Hi}
	}
	fmt.Fprintf(w, "%-22s %s\n", "metric", "mean  [95% CI]")
	fmt.Fprintf(w, "%-22s %s\n", "KLD (nats)", ci(r.KLD, "%.5f"))
	fmt.Fprintf(w, "%-22s %s\n", "top-1 agreement (%)", ci(pct(r.Top1), "%.2f"))
	fmt.Fprintf(w, "%-22s %s\n", "NLL ref (nats)", ci(r.NLLRef, "%.4f"))
	fmt.Fprintf(w, "%-22s %s\n", "NLL test (nats)", ci(r.NLLTest, "%.4f"))
	fmt.Fprintf(w, "%-22s %s\n", "ΔNLL test − ref", ci(r.DeltaNLL, "%+.4f"))
	fmt.Fprintf(w, "%-22s %.5f / %.5f / %.5f\n", "KLD median/p99/max", r.KLDMedian, r.KLDP99, r.KLDMax)
	fmt.Fprintf(w, "%-22s %s\n\n", "argmax flips", r.FlipsText)

	docs := append([]eval.DocReport(nil), r.Documents...)
	title := "documents"
	if len(docs) > 15 {
		sort.SliceStable(docs, func(i, j int) bool { return docs[i].KLD.Mean > docs[j].KLD.Mean })
		docs = docs[:15]
		title = "the 15 documents with the highest mean KLD"
	}
	fmt.Fprintf(w, "%s:\n%-40s %9s %26s %22s %8s\n", title, "document", "positions", "KLD [95% CI]", "top-1 % [95% CI]", "flips")
	for _, d := range docs {
		name := d.Name
		if len(name) > 40 {
			name = "…" + name[len(name)-39:]
		}
		fmt.Fprintf(w, "%-40s %9d %26s %22s %8d\n", name, d.Positions, ci(d.KLD, "%.4f"), ci(pct(d.Top1), "%.1f"), d.Flips)
	}
	if len(r.Worst) > 0 {
		fmt.Fprintf(w, "\npositions with the most KL:\n%-40s %6s %9s  %-14s %-14s %-14s\n", "document", "pos", "KLD", "next", "ref top-1", "test top-1")
		for _, x := range r.Worst {
			name := x.Doc
			if len(name) > 40 {
				name = "…" + name[len(name)-39:]
			}
			fmt.Fprintf(w, "%-40s %6d %9.4f  %-14q %-14q %-14q\n", name, x.Pos, x.KLD, x.NextStr, x.RefStr, x.TestStr)
		}
	}
}

// evalOptions are the test side's options: a keep-map (the model pruned in a temporary
// file, exactly as prune apply writes it), an expert store of S slots (as trace replay
// --slots S), and MoCE cache-aware routing against that store's residency.
type evalOptions struct {
	keep    string
	slots   int
	lambda  float64
	protect int
	chunk   int
}

type evalOptionFlags struct {
	keep           *string
	slots, protect *int
	lambda         *float64
}

func addEvalOptions(fs interface {
	String(string, string, string) *string
	Float64(string, float64, string) *float64
	Int(string, int, string) *int
}) *evalOptionFlags {
	return &evalOptionFlags{
		keep:    fs.String("test-keep", "", "test side: prune the test model to this keep-map (JSON, as prune apply writes) in a temporary file"),
		slots:   fs.Int("test-slots", 0, "test side: stream experts through an expert store of this many slots per size class (as trace\nreplay --slots; 0: all resident)"),
		lambda:  fs.Float64("moce", 0, "test side: MoCE cache-aware routing λ against the --test-slots store's residency (lossy above 0)"),
		protect: fs.Int("moce-protect", 2, "test side, with --moce: the top-logit experts always chosen"),
	}
}

func (f *evalOptionFlags) options() evalOptions {
	return evalOptions{keep: *f.keep, slots: *f.slots, lambda: *f.lambda, protect: *f.protect}
}

func (f *evalOptionFlags) describe() string {
	var p []string
	if *f.keep != "" {
		p = append(p, "keep="+*f.keep)
	}
	if *f.slots > 0 {
		p = append(p, fmt.Sprintf("slots=%d", *f.slots))
	}
	if *f.lambda != 0 {
		p = append(p, fmt.Sprintf("moce λ=%g J=%d", *f.lambda, *f.protect))
	}
	if len(p) == 0 {
		return ""
	}
	return " [" + strings.Join(p, ", ") + "]"
}

// prepare replaces the model file by its pruned copy when a keep-map is given; done removes it.
func (o evalOptions) prepare(path string) (string, func(), error) {
	if o.keep == "" {
		return path, nil, nil
	}
	k, err := prune.ReadKeepMap(o.keep)
	if err != nil {
		return "", nil, err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	tmp, err := os.CreateTemp("", "regolith-eval-pruned-*.gguf")
	if err != nil {
		return "", nil, err
	}
	done := func() { os.Remove(tmp.Name()) }
	err = prune.Apply(f, k.Layers, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		done()
		return "", nil, fmt.Errorf("--test-keep %s: %w", o.keep, err)
	}
	return tmp.Name(), done, nil
}

// apply sets up the expert store and MoCE.
func (o evalOptions) apply(side *evalSide, opts *model.Options) error {
	if o.lambda < 0 || o.protect < 0 || o.slots < 0 {
		return fmt.Errorf("--moce, --moce-protect and --test-slots must not be negative")
	}
	if o.lambda > 0 && o.slots == 0 {
		return fmt.Errorf("--moce routes toward experts resident in an expert store: pass --test-slots S")
	}
	if o.slots > 0 {
		st, err := expert.New(side.e.Model, side.e.File, expert.Config{Slots: o.slots, ChunkTokens: max(o.chunk, 1)})
		if err != nil {
			return err
		}
		prev := side.done
		side.done = func() {
			st.Close()
			if prev != nil {
				prev()
			}
		}
		opts.Experts = st
	}
	opts.MoCE = model.MoCE{Lambda: float32(o.lambda), Protect: o.protect}
	return nil
}
