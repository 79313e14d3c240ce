// Command routestats measures a qwen3moe model's routing with regolith's engine: per-layer
// expert popularity over a text read teacher-forced (share of the most and least used
// expert, entropy of the picks) and, over greedy decoding from prompts cut from the same
// text, the reuse distance of expert picks (tokens until the same expert of the same layer
// is picked again). MODEL.md's routing table comes from it:
//
//	go run ./tools/routestats -f .train/heldout.txt.gz -tokens 65536 -decode 16x128
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/regolith/regolith/defaultmodel"
	"github.com/regolith/regolith/engine"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/sample"
)

type counter struct {
	picks   [][]int64 // [layer][expert]
	decode  bool
	step    int
	lastUse [][]int // [layer][expert] decode step of the last pick, -1 if none
	dists   []int
}

func (c *counter) Routed(layer, pos int, logits []float32, chosen []int32, w []float32) {
	if !c.decode {
		for _, e := range chosen {
			c.picks[layer][e]++
		}
		return
	}
	for _, e := range chosen {
		if last := c.lastUse[layer][e]; last >= 0 {
			c.dists = append(c.dists, c.step-last)
		}
		c.lastUse[layer][e] = c.step
	}
}

func main() {
	modelPath := flag.String("m", "", "GGUF model (default: the embedded default model)")
	text := flag.String("f", "", "text file, optionally .gz")
	nTok := flag.Int("tokens", 65536, "tokens to read teacher-forced for popularity")
	decode := flag.String("decode", "16x128", "PROMPTSxTOKENS of greedy decoding for reuse distances")
	threads := flag.Int("t", 0, "threads")
	flag.Parse()
	if err := run(*modelPath, *text, *nTok, *decode, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "routestats:", err)
		os.Exit(1)
	}
}

func readText(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(r); err != nil {
			return "", err
		}
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	return string(b), err
}

func run(path, textPath string, nTok int, decode string, threads int) error {
	if path == "" {
		p, err := defaultmodel.Path()
		if err != nil {
			return err
		}
		path = p
	}
	var nPrompts, nDecode int
	if _, err := fmt.Sscanf(decode, "%dx%d", &nPrompts, &nDecode); err != nil {
		return fmt.Errorf("-decode %q: want PROMPTSxTOKENS", decode)
	}
	txt, err := readText(textPath)
	if err != nil {
		return err
	}
	e, err := engine.Open(path)
	if err != nil {
		return err
	}
	defer e.Close()
	cfg := e.Model.Cfg
	c := &counter{picks: make([][]int64, cfg.NLayer), lastUse: make([][]int, cfg.NLayer)}
	for l := range c.picks {
		c.picks[l] = make([]int64, cfg.NExpert)
		c.lastUse[l] = make([]int, cfg.NExpert)
	}
	s, err := model.NewSession(e.Model, model.Options{Ctx: cfg.CtxTrain, Threads: threads, Observer: c})
	if err != nil {
		return err
	}
	defer s.Close()
	ids := e.Tok.Encode(txt, false, false)
	if len(ids) > nTok {
		ids = ids[:nTok]
	}
	// Teacher-forced, in windows of the training context, chunks of 512.
	win := min(cfg.CtxTrain, 1024)
	for i := 0; i < len(ids); i += win {
		s.Truncate(0)
		w := ids[i:min(i+win, len(ids))]
		for j := 0; j < len(w); j += 512 {
			if _, err := s.Forward(w[j:min(j+512, len(w))], false); err != nil {
				return err
			}
		}
	}
	fmt.Printf("popularity over %d tokens (top-%d of %d; uniform share %.4f, entropy %.3f bits)\n\n",
		len(ids), cfg.NExpertUsed, cfg.NExpert, 1/float64(cfg.NExpert), math.Log2(float64(cfg.NExpert)))
	fmt.Println("| layer | most used | least used | entropy (bits) |\n| --- | --- | --- | --- |")
	for l, p := range c.picks {
		var tot int64
		mx, mn := p[0], p[0]
		for _, v := range p {
			tot += v
			mx, mn = max(mx, v), min(mn, v)
		}
		var h float64
		for _, v := range p {
			if v > 0 {
				q := float64(v) / float64(tot)
				h -= q * math.Log2(q)
			}
		}
		fmt.Printf("| %d | %.4f | %.4f | %.3f |\n", l, float64(mx)/float64(tot), float64(mn)/float64(tot), h)
	}
	// Greedy decoding from prompts of 64 tokens spread over the text.
	c.decode = true
	p := sample.DefaultParams()
	p.Temp = 0
	for k := 0; k < nPrompts; k++ {
		at := k * (len(ids) - 64) / max(nPrompts, 1)
		for l := range c.lastUse {
			for x := range c.lastUse[l] {
				c.lastUse[l][x] = -1
			}
		}
		s.Truncate(0)
		c.step = 0
		c.decode = false // the prompt's picks do not count as decode steps
		_, _, err := e.Generate(context.Background(), s, engine.Request{Prompt: ids[at : at+64], MaxTokens: nDecode,
			Sampler: sample.New(p, cfg.NVocab), OnToken: func(int32) bool { c.decode = true; c.step++; return true }})
		if err != nil {
			return err
		}
	}
	sort.Ints(c.dists)
	if len(c.dists) == 0 {
		return fmt.Errorf("no decode reuse observed")
	}
	q := func(f float64) int { return c.dists[min(len(c.dists)-1, int(f*float64(len(c.dists))))] }
	fmt.Printf("\ndecode reuse distance over %d prompts × %d tokens (%d reuses): median %d, p90 %d tokens\n",
		nPrompts, nDecode, len(c.dists), q(0.5), q(0.9))
	return nil
}
