package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/regolith/regolith/engine"
	"github.com/regolith/regolith/eval"
	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/prune"
)

func init() {
	commands = append(commands, command{"prune", "REAP expert pruning: measure expert saliency on a corpus, write a GGUF with the kept experts (calibrate, apply)", runPrune})
}

var pruneCommands = []command{
	{"calibrate", "run a calibration corpus and accumulate each expert's saliency (router weight × ‖output‖)", pruneCalibrate},
	{"apply", "write a GGUF with only the highest-scoring experts of every layer, and its keep-map", pruneApply},
}

func runPrune(args []string) error {
	if len(args) > 0 {
		for _, c := range pruneCommands {
			if c.name == args[0] {
				return c.run(args[1:])
			}
		}
	}
	fmt.Fprintf(os.Stderr, "Usage: regolith prune SUBCOMMAND [flags]\n\n")
	for _, c := range pruneCommands {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'regolith prune SUBCOMMAND --help' for its flags.\n")
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return nil
	}
	return fmt.Errorf("unknown subcommand %q", args[0])
}

func pruneCalibrate(args []string) error {
	fs := newFlags("prune calibrate", "-m MODEL --corpus SRC[,SRC…] -o SAL.json [flags]",
		"Runs the model over a calibration corpus and accumulates, per layer and expert, the hit count and\n"+
			"the sum and sum of squares of g·‖y‖₂ (g: the token's router weight for the expert, y: the expert's\n"+
			"output). Each comma-separated --corpus entry is one source (a file, a directory, or a NUL-separated\n"+
			"shard); every source contributes the same number of tokens (balanced by tokens, not characters):\n"+
			"--tokens/sources each, or what the smallest source holds. A source's documents are shuffled with a\n"+
			"fixed seed before the budget cuts them. Special-token text is not parsed.")
	mpath := fs.String("m", "", "GGUF model (default: the embedded gomoe)")
	corpus := fs.String("corpus", "", "calibration sources (comma-separated; each one file, directory or shard)")
	out := fs.String("o", "", "saliency file to write (JSON)")
	tokens := fs.Int("tokens", 262144, "calibration tokens in all, split evenly between the sources")
	ctx := fs.Int("c", 512, "window: tokens per context (each window starts from an empty cache)")
	maxDoc := fs.Int("max-doc-tokens", 512, "use only each document's first N tokens (0: whole documents), so that the budget spreads\nover many documents")
	batch := fs.Int("b", 512, "tokens per forward pass")
	threads := fs.Int("t", 0, "worker threads (0: all CPUs)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *corpus == "" || *out == "" {
		return fmt.Errorf("pass --corpus SRC and -o FILE")
	}
	p, err := modelPath(*mpath)
	if err != nil {
		return err
	}
	e, err := engine.Open(p)
	if err != nil {
		return err
	}
	defer e.Close()
	var srcs []prune.Source
	for _, c := range splitList(*corpus) {
		docs, err := eval.ReadCorpus(c)
		if err != nil {
			return err
		}
		srcs = append(srcs, prune.Source{Name: c, Docs: docs})
	}
	ws, per, err := prune.BalancedWindows(e.Tok, srcs, *tokens, *ctx, *maxDoc)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "prune calibrate: %d sources × %d tokens\n", len(srcs), per)
	t0 := time.Now()
	last := time.Now()
	sal, err := prune.Calibrate(e.Model, srcs, ws, *batch, *threads, func(done, total int) {
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Fprintf(os.Stderr, "  %d/%d tokens (%.0f tok/s)\n", done, total, float64(done)/time.Since(t0).Seconds())
		}
	})
	if err != nil {
		return err
	}
	sal.Model = filepath.Base(p)
	if err := sal.Write(*out); err != nil {
		return err
	}
	zero := 0
	for l := range sal.Count {
		for _, c := range sal.Count[l] {
			if c == 0 {
				zero++
			}
		}
	}
	fmt.Fprintf(os.Stderr, "prune calibrate: %d tokens in %.1f s; %d of %d experts never hit; saliency written to %s\n",
		sal.Tokens, time.Since(t0).Seconds(), zero, sal.NLayer*sal.NExpert, *out)
	return nil
}

func pruneApply(args []string) error {
	fs := newFlags("prune apply", "-m MODEL --scores SAL.json --keep K [--score hybrid] -o OUT.gguf [--keep-map OUT.json]",
		"Keeps the K highest-scoring experts of every layer (ties: more hits, then larger l2_sum, then lowest id;\n"+
			"a zero-hit expert is never kept over one that was hit) and writes a GGUF with only their slices of the\n"+
			"expert tensors and their router rows, expert_count = K (expert_used_count capped at K), every other\n"+
			"tensor and metadata value unchanged. Also writes the keep-map (original expert ids per layer) that\n"+
			"regolith trace replay --keep and regolith eval --test-keep read.\n"+
			"Scores: l2_sum = Σ g·‖y‖; shrink = (c/(c+m))·max(0, mean − SE) (0 for c = 0); hybrid = 0.5·percentile(l2_sum)\n"+
			"+ 0.5·percentile(shrink), rank percentiles within the layer.")
	mpath := fs.String("m", "", "GGUF model the saliency was measured on (default: the embedded gomoe)")
	scores := fs.String("scores", "", "saliency file from prune calibrate")
	keep := fs.String("keep", "", "experts to keep per layer: a count, or a percentage of the experts (e.g. 75%)")
	score := fs.String("score", prune.ScoreHybrid, "score: l2_sum, shrink or hybrid")
	priorM := fs.Float64("prior-m", prune.DefaultPriorM, "shrink's prior strength m (hits)")
	out := fs.String("o", "", "pruned GGUF to write")
	keepMap := fs.String("keep-map", "", "keep-map file to write (default: OUT with .keep.json)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *scores == "" || *keep == "" || *out == "" {
		return fmt.Errorf("pass --scores SAL, --keep K and -o OUT.gguf")
	}
	p, err := modelPath(*mpath)
	if err != nil {
		return err
	}
	sal, err := prune.ReadSaliency(*scores)
	if err != nil {
		return err
	}
	f, err := gguf.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if n, _ := f.ArchUint("expert_count"); int(n) != sal.NExpert {
		return fmt.Errorf("%s has %d experts per layer; the saliency %d", p, n, sal.NExpert)
	}
	K, err := parseKeep(*keep, sal.NExpert)
	if err != nil {
		return err
	}
	sc, err := sal.Scores(*score, *priorM)
	if err != nil {
		return err
	}
	kept, err := sal.Select(sc, K)
	if err != nil {
		return err
	}
	if err := prune.ApplyFile(f, kept, *out); err != nil {
		return err
	}
	if *keepMap == "" {
		*keepMap = strings.TrimSuffix(*out, ".gguf") + ".keep.json"
	}
	if err := prune.WriteKeepMap(*keepMap, prune.KeepMap{Layers: kept, Model: filepath.Base(p), Score: *score, Keep: K, NExpert: sal.NExpert}); err != nil {
		return err
	}
	fi, _ := os.Stat(*out)
	fmt.Fprintf(os.Stderr, "prune apply: kept %d of %d experts per layer by %s; %s (%d bytes), keep-map %s\n", K, sal.NExpert, *score, *out, fi.Size(), *keepMap)
	return nil
}

func parseKeep(s string, n int) (int, error) {
	var k int
	if p, ok := strings.CutSuffix(s, "%"); ok {
		var pct float64
		if _, err := fmt.Sscanf(p, "%g", &pct); err != nil || pct <= 0 || pct > 100 {
			return 0, fmt.Errorf("--keep %q: want a count or a percentage in (0, 100]", s)
		}
		k = int(pct*float64(n)/100 + 0.5)
	} else if _, err := fmt.Sscanf(s, "%d", &k); err != nil {
		return 0, fmt.Errorf("--keep %q: want a count or a percentage", s)
	}
	if k < 1 || k > n {
		return 0, fmt.Errorf("--keep %s: %d of %d experts", s, k, n)
	}
	return k, nil
}
