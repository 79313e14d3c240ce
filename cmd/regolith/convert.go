package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/regolith/regolith/convert"
)

func init() {
	commands = append(commands, command{
		name:    "convert",
		summary: "convert a Hugging Face qwen3moe checkpoint (safetensors) to GGUF",
		run:     runConvert,
	})
}

func runConvert(args []string) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	out := fs.String("o", "", "output GGUF `file` (required)")
	typ := fs.String("type", "f16", "weight `type`: f32, f16, bf16, q8_0 or q4_k (norms and the router stay f32)")
	name := fs.String("name", "", "general.name (default: the checkpoint directory's name)")
	pre := fs.String("pre", "", "tokenizer.ggml.pre `name` (default: detected from tokenizer.json; Qwen2's regex is \"qwen2\")")
	verbose := fs.Bool("v", false, "print each tensor's name, type and dimensions")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: regolith convert [flags] -o OUT.gguf CHECKPOINT_DIR

Converts a Hugging Face checkpoint of a Qwen3-MoE model (Qwen3MoeForCausalLM): the directory's
*.safetensors files, config.json, tokenizer.json and, when present, tokenizer_config.json
(special tokens, chat template). The GGUF is written in llama.cpp's layout and naming, with the
experts of each layer stacked into 3-D tensors, and loads in llama.cpp as well as in regolith.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() != 1 || *out == "" {
		fs.Usage()
		return errors.New("need -o OUT.gguf and one checkpoint directory")
	}
	t, err := convert.ParseType(*typ)
	if err != nil {
		return err
	}
	opt := convert.Options{Type: t, Name: *name, Pre: *pre}
	if *verbose {
		opt.Log = os.Stderr
	}
	start := time.Now()
	sum, err := convert.ConvertFile(fs.Arg(0), *out, opt)
	if err != nil {
		return err
	}
	types := make([]string, 0, len(sum.ByType))
	for k, v := range sum.ByType {
		types = append(types, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(types)
	fmt.Printf("wrote %s: %s, %d tensors (%v), %.1fM weights, %.1f MB of tensor data, %d tokens, in %.1fs\n",
		*out, sum.Arch, sum.Tensors, types, float64(sum.Params)/1e6, float64(sum.Bytes)/1e6, sum.Vocab, time.Since(start).Seconds())
	return nil
}
