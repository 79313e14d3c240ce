package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/regolith/regolith/expert"
	"github.com/regolith/regolith/internal/units"
)

func init() {
	commands = append(commands, command{"bench", "measure prefill and decode speed (like llama-bench)", runBench})
}

type benchResult struct {
	Model      string    `json:"model"`
	CPU        string    `json:"cpu"`
	Threads    int       `json:"threads"`
	Test       string    `json:"test"`
	Tokens     int       `json:"tokens"`
	TPS        []float64 `json:"tokens_per_s"`
	Median     float64   `json:"median_tokens_per_s"`
	Min        float64   `json:"min_tokens_per_s"`
	Max        float64   `json:"max_tokens_per_s"`
	PeakRSSMiB float64   `json:"peak_rss_mib"`
	// With --mem: the expert store over the measured repetitions of this test.
	HitRate    *float64 `json:"expert_hit_rate,omitempty"`
	MBPerToken *float64 `json:"expert_mb_read_per_token,omitempty"`
	WaitPerTok *float64 `json:"expert_io_wait_ms_per_token,omitempty"`
	// With --prefetch: the share of misses the shelf served, and the megabytes per token
	// read onto the shelf and dropped unused.
	Hidden           *float64 `json:"expert_misses_hidden,omitempty"`
	PrefetchMBPerTok *float64 `json:"expert_prefetch_mb_per_token,omitempty"`
	WastedMBPerTok   *float64 `json:"expert_prefetch_wasted_mb_per_token,omitempty"`
}

func runBench(args []string) error {
	fs := newFlags("bench", "-m FILE.gguf [flags]", "Measures prompt processing (prefill of -p random tokens, in -b chunks) and text generation\n(-n tokens one at a time after the prompt) like llama-bench, repeated -r times after one\nwarm-up run. Prints the median tokens per second, the spread, the machine and peak RSS.")
	g := addGenFlags(fs)
	nPrompt := fs.Int("p", 512, "prompt tokens to prefill (0: skip the prefill test)")
	nGen := fs.Int("n", 64, "tokens to generate (0: skip the decode test)")
	reps := fs.Int("r", 5, "repetitions")
	asJSON := fs.Bool("json", false, "print JSON lines instead of a table")
	disk := addDiskFlags(fs)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured runs to this file (go tool pprof)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *disk.on {
		return disk.run(g, *asJSON)
	}
	if *reps < 1 || *nPrompt < 0 || *nGen < 0 {
		return fmt.Errorf("-r must be at least 1, -p and -n not negative")
	}
	e, s, st, err := g.open()
	if err != nil {
		return err
	}
	defer e.Close()
	defer st.Close()
	defer s.Close()
	defer g.trace.close()
	// The store's counters over the measured (not warm-up) runs of each test.
	var ppStore, tgStore expert.Stats
	snap := func() expert.Stats {
		if st == nil {
			return expert.Stats{}
		}
		return st.Stats()
	}
	if *nPrompt+*nGen+1 > s.Ctx() {
		return fmt.Errorf("-p %d + -n %d do not fit the context of %d (raise -c)", *nPrompt, *nGen, s.Ctx())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	nv := e.Model.Cfg.NVocab
	tokens := func(n int) []int32 {
		t := make([]int32, n)
		for i := range t {
			t[i] = int32(rng.IntN(nv))
		}
		return t
	}
	chunk := max(*g.batch, 1)
	prefill := func(p []int32) error {
		for i := 0; i < len(p); i += chunk {
			if _, err := s.Forward(p[i:min(i+chunk, len(p))], false); err != nil {
				return err
			}
		}
		return nil
	}
	var pp, tg []float64
	for r := 0; r <= *reps; r++ { // run 0 is the warm-up
		if r == 1 && *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return err
			}
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
		if *nPrompt > 0 {
			s.Truncate(0)
			p := tokens(*nPrompt)
			before := snap()
			t0 := time.Now()
			if err := prefill(p); err != nil {
				return err
			}
			if r > 0 {
				pp = append(pp, float64(*nPrompt)/time.Since(t0).Seconds())
				ppStore = ppStore.Add(snap().Sub(before))
			}
		}
		if *nGen > 0 {
			s.Truncate(0)
			if err := prefill(tokens(1)); err != nil {
				return err
			}
			gen := tokens(*nGen)
			before := snap()
			t0 := time.Now()
			for _, id := range gen {
				if _, err := s.Forward([]int32{id}, false); err != nil {
					return err
				}
			}
			if r > 0 {
				tg = append(tg, float64(*nGen)/time.Since(t0).Seconds())
				tgStore = tgStore.Add(snap().Sub(before))
			}
		}
	}
	base := benchResult{Model: *g.model, CPU: cpuName(), Threads: threadsUsed(*g.threads), PeakRSSMiB: peakRSSMiB()}
	var rows []benchResult
	var stores []expert.PhaseStats
	if len(pp) > 0 {
		rows = append(rows, summarize(base, fmt.Sprintf("pp%d", *nPrompt), *nPrompt, pp))
		stores = append(stores, ppStore.Total())
	}
	if len(tg) > 0 {
		rows = append(rows, summarize(base, fmt.Sprintf("tg%d", *nGen), *nGen, tg))
		stores = append(stores, tgStore.Total())
	}
	if st != nil {
		for i := range rows {
			p := stores[i]
			hr, mb, w := p.HitRate(), p.MBPerToken(), float64(p.WaitPerToken())/1e6
			rows[i].HitRate, rows[i].MBPerToken, rows[i].WaitPerTok = &hr, &mb, &w
			if *g.prefetch > 0 {
				h, pmb, wmb := p.HiddenFraction(), ratio(p.PrefetchBytes, p.Tokens)/1e6, ratio(p.PrefetchWasted, p.Tokens)/1e6
				rows[i].Hidden, rows[i].PrefetchMBPerTok, rows[i].WastedMBPerTok = &h, &pmb, &wmb
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	fi, _ := os.Stat(*g.model)
	fmt.Printf("model: %s (%s, %s)\ncpu: %s, %d threads\n\n", *g.model, e.Model.Cfg.Arch, units.FormatBytes(fi.Size()), base.CPU, base.Threads)
	fmt.Printf("| %-8s | %12s | %12s | %12s |\n", "test", "median t/s", "min t/s", "max t/s")
	fmt.Printf("|%s|%s|%s|%s|\n", strings.Repeat("-", 10), strings.Repeat("-", 14), strings.Repeat("-", 14), strings.Repeat("-", 14))
	for _, r := range rows {
		fmt.Printf("| %-8s | %12.1f | %12.1f | %12.1f |\n", r.Test, r.Median, r.Min, r.Max)
	}
	fmt.Printf("\npeak RSS: %.1f MiB, %d repetitions after one warm-up\n", base.PeakRSSMiB, *reps)
	if st != nil {
		fmt.Printf("\nexpert store (%s):\n", st.Describe())
		for i, r := range rows {
			p := stores[i]
			fmt.Printf("  %-8s hit rate %5.1f%%, %.3f MB read/token, I/O wait %.3f ms/token (%d lookups, %d misses, %d reads)\n",
				r.Test, 100*p.HitRate(), p.MBPerToken(), float64(p.WaitPerToken())/1e6, p.Lookups, p.Misses, p.Reads)
			if *g.prefetch > 0 {
				fmt.Printf("  %-8s %s\n", "", p.PrefetchString())
			}
		}
		fmt.Fprintln(os.Stderr, st.Stats())
	}
	return nil
}

func summarize(b benchResult, test string, n int, tps []float64) benchResult {
	b.Test, b.Tokens, b.TPS = test, n, tps
	s := append([]float64(nil), tps...)
	sort.Float64s(s)
	b.Min, b.Max = s[0], s[len(s)-1]
	if len(s)%2 == 1 {
		b.Median = s[len(s)/2]
	} else {
		b.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return b
}

func threadsUsed(t int) int {
	if t > 0 {
		return t
	}
	return runtime.NumCPU()
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
