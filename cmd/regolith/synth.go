package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/units"
	"github.com/regolith/regolith/quant"
	"github.com/regolith/regolith/synth"
)

func init() {
	commands = append(commands, command{"synth", "write a random-weight GGUF with the shape of a real model", runSynth})
}

func runSynth(args []string) error {
	fs := newFlags("synth", "-o FILE.gguf [flags]", "Writes a random-weight model with the shape of a real one (every tensor, llama.cpp's layout),\ndeterministic from --seed, streamed to disk one tensor at a time with a progress bar.\nThe routers give a non-uniform expert popularity (see package synth). The tokenizer\nmetadata is copied from --vocab (default: $REGOLITH_FIXTURES/vocab/ggml-vocab-qwen3.gguf).")
	out := fs.String("o", "", "output file (required)")
	shape := fs.String("shape", "qwen3-30b-a3b", "model shape: "+strings.Join(synth.Shapes(), ", "))
	layers := fs.Int("layers", 0, "keep only the first N layers (0: all; qwen3-next-80b-a3b: at least 4, the first full-attention layer)")
	typ := fs.String("type", "q8_0", "matrix type: q8_0 or q4_k (norms, routers and the Gated DeltaNet's conv, A and dt stay F32)")
	seed := fs.Uint64("seed", 1, "random seed")
	vocab := fs.String("vocab", "", "GGUF file to copy the tokenizer.* metadata from")
	bias := fs.Float64("bias", 0, "σ of the experts' popularity bias in logit units (0: 1.0; negative: uniform popularity)")
	quiet := fs.Bool("q", false, "no progress bar")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-o FILE is required")
	}
	sh, err := synth.ShapeByName(*shape)
	if err != nil {
		return err
	}
	var qt quant.Type
	switch strings.ToLower(*typ) {
	case "q8_0":
		qt = quant.Q8_0
	case "q4_k":
		qt = quant.Q4_K
	default:
		return fmt.Errorf("--type %q: q8_0 or q4_k", *typ)
	}
	vpath := *vocab
	if vpath == "" {
		d := os.Getenv("REGOLITH_FIXTURES")
		if d == "" {
			return fmt.Errorf("--vocab FILE is required (or set REGOLITH_FIXTURES)")
		}
		vpath = filepath.Join(d, "vocab", "ggml-vocab-qwen3.gguf")
	}
	kvs, err := vocabKVs(vpath)
	if err != nil {
		return err
	}
	plan, err := synth.NewPlan(synth.Options{Shape: sh, Layers: *layers, Type: qt, Seed: *seed, Vocab: kvs, Bias: *bias})
	if err != nil {
		return err
	}
	tmp := *out + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op once renamed
	var bar *progressbar.ProgressBar
	if !*quiet {
		bar = progressbar.NewOptions64(plan.Size(),
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription(filepath.Base(*out)),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(200_000_000),
			progressbar.OptionShowCount(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(os.Stderr) }),
			progressbar.OptionFullWidth())
	}
	n, err := plan.WriteTo(f, func(w int64) {
		if bar != nil {
			_ = bar.Set64(w)
		}
	})
	if err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fi, err := os.Stat(tmp)
	if err != nil {
		return err
	}
	if fi.Size() != n || n != plan.Size() {
		return fmt.Errorf("wrote %d bytes, the file has %d, the layout %d", n, fi.Size(), plan.Size())
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	nl := sh.NLayer
	if *layers > 0 {
		nl = *layers
	}
	fmt.Printf("%s: %s %d layers, %s, seed %d, %d tensors, %s\n", *out, sh.Name, nl, qt, *seed, len(plan.Tensors()), units.FormatBytes(n))
	return nil
}

// vocabKVs reads the tokenizer.* metadata of a GGUF file.
func vocabKVs(path string) ([]gguf.KV, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var kvs []gguf.KV
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			kvs = append(kvs, kv)
		}
	}
	if len(kvs) == 0 {
		return nil, fmt.Errorf("%s has no tokenizer metadata", path)
	}
	return kvs, nil
}
