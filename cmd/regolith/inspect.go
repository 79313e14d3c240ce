package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/regolith/regolith/expert"
	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/units"
	"github.com/regolith/regolith/model"
)

func init() {
	commands = append(commands, command{"inspect", "show a GGUF model's architecture, tensors and expert sizes", runInspect})
}

// inspectReport is what `regolith inspect --json` prints.
type inspectReport struct {
	File        string         `json:"file"`
	Version     uint32         `json:"gguf_version"`
	Arch        string         `json:"arch"`
	Hyper       map[string]any `json:"hyperparameters"`
	Tensors     []tensorRow    `json:"tensors"`
	Summary     model.Summary  `json:"summary"`
	MemBudget   int64          `json:"mem_budget_bytes,omitempty"`
	ArenaBytes  int64          `json:"arena_bytes,omitempty"`
	FitExperts  int            `json:"experts_that_fit,omitempty"`
	Budget      *expert.Budget `json:"budget,omitempty"` // the split of --mem, for runnable models
	BudgetError string         `json:"budget_error,omitempty"`
}

type tensorRow struct {
	Name  string   `json:"name"`
	Type  string   `json:"type"`
	Shape []uint64 `json:"shape"`
	Bytes uint64   `json:"bytes"`
}

func runInspect(args []string) error {
	fs := newFlags("inspect", "[flags] FILE.gguf", "Prints the architecture and key hyperparameters, a table of every tensor (name, type,\nshape, bytes), the bytes of dense (resident) weights against routed experts, the bytes\nof one expert per layer and, with --mem, how many experts an arena of that budget holds.")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	mem := fs.String("mem", "", "memory budget (e.g. 8GiB): dense weights come first, the rest is the expert arena")
	noTensors := fs.Bool("no-tensors", false, "leave out the tensor table")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("expected one GGUF file, got %d arguments", fs.NArg())
	}
	f, err := gguf.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	r := inspectReport{File: fs.Arg(0), Version: f.Version, Arch: f.Arch(), Hyper: map[string]any{}, Summary: model.Summarize(f)}
	prefix := r.Arch + "."
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, prefix) {
			if _, isArray := kv.Value.(gguf.Array); !isArray {
				r.Hyper[strings.TrimPrefix(kv.Key, prefix)] = kv.Value
			}
		}
	}
	for _, t := range f.Tensors {
		r.Tensors = append(r.Tensors, tensorRow{t.Name, t.Type.String(), t.Dims, t.Size})
	}
	if *mem != "" {
		if r.MemBudget, err = units.ParseBytes(*mem); err != nil {
			return err
		}
		// The split regolith run would make (context 4096, chunks of 512); for an
		// architecture it cannot run yet, everything but the dense weights.
		r.ArenaBytes = max(0, r.MemBudget-r.Summary.DenseBytes)
		if m, err := model.Load(f); err == nil {
			b, err := expert.Plan(m, f, r.MemBudget, expert.PlanOptions{Ctx: 4096, Chunk: 512, Threads: runtime.NumCPU()})
			if err != nil {
				r.BudgetError = err.Error()
			} else {
				r.Budget, r.ArenaBytes = &b, b.Arena
			}
		}
		r.FitExperts = r.Summary.ExpertsThatFit(r.ArenaBytes)
	}
	if *asJSON {
		e := json.NewEncoder(os.Stdout)
		e.SetIndent("", "  ")
		return e.Encode(r)
	}
	printInspect(os.Stdout, &r, !*noTensors)
	return nil
}

func printInspect(w io.Writer, r *inspectReport, tensors bool) {
	s := r.Summary
	fmt.Fprintf(w, "file:          %s (GGUF v%d)\narchitecture:  %s\n", r.File, r.Version, r.Arch)
	keys := make([]string, 0, len(r.Hyper))
	for k := range r.Hyper {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-34s %v\n", k, r.Hyper[k])
	}
	if tensors {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\ntensor\ttype\tshape\tbytes\t\n")
		for _, t := range r.Tensors {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%d\t\n", t.Name, t.Type, t.Shape, t.Bytes)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\ntensors:       %d, %s\n", len(r.Tensors), units.FormatBytes(s.TotalBytes))
	fmt.Fprintf(w, "dense:         %s (resident)\n", units.FormatBytes(s.DenseBytes))
	fmt.Fprintf(w, "routed:        %s in %d experts (%d layers × up to %d)\n", units.FormatBytes(s.ExpertBytes), s.TotalExperts, len(s.ExpertLayers), s.ExpertsPerLayer)
	for _, ls := range s.ExpertLayers {
		fmt.Fprintf(w, "  layer %-3d    %d experts × %s\n", ls.Layer, ls.Experts, units.FormatBytes(ls.BytesPerExp))
	}
	if r.Budget != nil {
		fmt.Fprintf(w, "budget:        %s\n", r.Budget)
	}
	if r.BudgetError != "" {
		fmt.Fprintf(w, "budget:        %s\n", strings.TrimPrefix(r.BudgetError, "expert: "))
	}
	if r.MemBudget > 0 {
		pct := 0.0
		if s.TotalExperts > 0 {
			pct = 100 * float64(r.FitExperts) / float64(s.TotalExperts)
		}
		note := ""
		if r.Budget == nil {
			note = ", counting only the dense weights against the budget"
		}
		fmt.Fprintf(w, "with --mem %s: arena %s holds %d of %d experts (%.1f%%%s)\n",
			units.FormatBytes(r.MemBudget), units.FormatBytes(r.ArenaBytes), r.FitExperts, s.TotalExperts, pct, note)
	}
}
