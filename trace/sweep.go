package trace

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Sweep replays every configuration over the trace, one goroutine per configuration on up
// to workers goroutines at a time (0: GOMAXPROCS). Results come back in the order of cfgs
// whatever the scheduling; a configuration that cannot run has its Err set.
func Sweep(t *Trace, cfgs []Config, workers int) []*Result {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for _, c := range cfgs {
		if c.Policy == InverseRouterEMA {
			t.probs() // once, before the workers share it
			break
		}
	}
	out := make([]*Result, len(cfgs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(cfgs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(cfgs) {
					return
				}
				r, err := Replay(t, cfgs[i])
				if err != nil {
					r = &Result{Config: cfgs[i], Label: cfgs[i].Label(), Err: err.Error()}
				}
				out[i] = r
			}
		}()
	}
	wg.Wait()
	return out
}

// Size is the cache size a result was replayed with: experts per layer, slots per class, or
// bytes.
func (r *Result) Size() float64 {
	switch {
	case r.Config.Cache > 0:
		return float64(r.Config.Cache)
	case r.Config.Slots > 0:
		return float64(r.Config.Slots)
	}
	return float64(r.Config.CacheBytes)
}

// SizeUnit names Size's unit.
func (r *Result) SizeUnit() string {
	switch {
	case r.Config.Cache > 0:
		return "experts per layer"
	case r.Config.Slots > 0:
		return "slots per size class"
	}
	return "bytes"
}

// WriteTable writes results as a Markdown table (with the latency model's predicted decode
// tok/s and prefill time when the results carry them).
func WriteTable(w io.Writer, rs []*Result) {
	pred := false
	for _, r := range rs {
		pred = pred || r.Predicted != nil
	}
	fmt.Fprintf(w, "| %-36s | %10s | %8s | %12s | %12s | %10s | %12s | %12s |", "configuration", "cache", "hit rate",
		"misses/token", "MB/token", "decode hit", "decode miss/t", "prefill miss/t")
	if pred {
		fmt.Fprintf(w, " %14s | %11s |", "pred decode t/s", "pred prefill")
	}
	fmt.Fprintf(w, "\n|%s|%s|%s|%s|%s|%s|%s|%s|", strings.Repeat("-", 38), strings.Repeat("-", 12), strings.Repeat("-", 10),
		strings.Repeat("-", 14), strings.Repeat("-", 14), strings.Repeat("-", 12), strings.Repeat("-", 15), strings.Repeat("-", 16))
	if pred {
		fmt.Fprintf(w, "%s|%s|", strings.Repeat("-", 17), strings.Repeat("-", 13))
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		if r.Err != "" {
			fmt.Fprintf(w, "| %-36s | %10g | %s |\n", r.Label, r.Size(), r.Err)
			continue
		}
		fmt.Fprintf(w, "| %-36s | %10g | %7.2f%% | %12.3f | %12.3f | %9.2f%% | %13.3f | %14.3f |", r.Label, r.Size(),
			100*r.HitRate, r.MissesPerToken, r.BytesPerToken/1e6, 100*r.Decode.HitRate(), r.Decode.MissesPerToken(), r.Prefill.MissesPerToken())
		if p := r.Predicted; p != nil {
			fmt.Fprintf(w, " %15.1f | %10.2fs |", p.DecodeTPS, p.PrefillSeconds)
		}
		fmt.Fprintln(w)
	}
}

// PlotSVG draws misses per token (metric "decode": decode steps; otherwise all tokens)
// against cache size, one line per configuration label (policy, MoCE, keep-map): Belady
// as the floor in black, MoCE variants dashed. The SVG is written by hand: axes with ticks
// and labels, a legend, a title.
func PlotSVG(w io.Writer, rs []*Result, title, metric string) error {
	type pt struct{ x, y float64 }
	series := map[string][]pt{}
	var order []string
	unit := ""
	for _, r := range rs {
		if r.Err != "" {
			continue
		}
		y := r.MissesPerToken
		if metric == "decode" {
			y = r.Decode.MissesPerToken()
		}
		if _, ok := series[r.Label]; !ok {
			order = append(order, r.Label)
		}
		series[r.Label] = append(series[r.Label], pt{r.Size(), y})
		unit = r.SizeUnit()
	}
	if len(order) == 0 {
		return fmt.Errorf("trace: nothing to plot")
	}
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range series {
		sort.Slice(s, func(a, b int) bool { return s[a].x < s[b].x })
		for _, p := range s {
			xmin, xmax, ymax = min(xmin, p.x), max(xmax, p.x), max(ymax, p.y)
		}
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	ystep := niceStep(ymax / 5)
	ytop := math.Ceil(ymax/ystep) * ystep
	if ytop == 0 {
		ytop, ystep = 1, 0.2
	}
	const W, H, ml, mr, mt, mb = 1140, 600, 80, 400, 50, 70
	pw, ph := float64(W-ml-mr), float64(H-mt-mb)
	X := func(x float64) float64 { return ml + (x-xmin)/(xmax-xmin)*pw }
	Y := func(y float64) float64 { return mt + ph - y/ytop*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="28" font-size="16" font-weight="bold">%s</text>`+"\n", ml, esc(title))
	// Grid and ticks.
	for y := 0.0; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", ml, ml+pw, Y(y), Y(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", ml-8, Y(y)+4, trimFloat(y))
	}
	xs := map[float64]bool{}
	for _, s := range series {
		for _, p := range s {
			xs[p.x] = true
		}
	}
	var xticks []float64
	for x := range xs {
		xticks = append(xticks, x)
	}
	sort.Float64s(xticks)
	last := math.Inf(-1)
	for _, x := range xticks {
		if X(x)-last < 28 { // keep tick labels apart
			continue
		}
		last = X(x)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", X(x), X(x), float64(mt), mt+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", X(x), mt+ph+20, trimFloat(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="black"/>`+"\n", ml, mt, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">cache size (%s)</text>`+"\n", ml+pw/2, H-20, unit)
	ylabel := "misses per token (all tokens)"
	if metric == "decode" {
		ylabel = "misses per decoded token"
	}
	fmt.Fprintf(&b, `<text transform="translate(22 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", mt+ph/2, ylabel)
	colors := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"}
	policyColor := map[string]string{}
	for i, p := range policyNames {
		policyColor[p] = colors[i%len(colors)]
	}
	policyColor["belady"] = "black"
	for i, label := range order {
		s := series[label]
		pol, _, _ := strings.Cut(label, "+")
		color, ok := policyColor[pol]
		if !ok {
			color = colors[i%len(colors)]
		}
		dash, width := "", 2.0
		if strings.Contains(label, "moce") {
			dash = ` stroke-dasharray="7 4"`
			if strings.Count(label, "λ=") > 0 && !strings.Contains(label, firstLambda(order)) {
				dash = ` stroke-dasharray="2 3"`
			}
		}
		if pol == "belady" {
			width = 3
		}
		var pts []string
		for _, p := range s {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(p.x), Y(p.y)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%.0f"%s points="%s"/>`+"\n", color, width, dash, strings.Join(pts, " "))
		for _, p := range s {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`+"\n", X(p.x), Y(p.y), color)
		}
		ly := float64(mt + 10 + 20*i)
		lx := float64(W - mr + 20)
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="%.0f"%s/>`+"\n", lx, lx+30, ly, ly, color, width, dash)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f">%s</text>`+"\n", lx+38, ly+4, esc(label))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// firstLambda is the "λ=…" text of the first MoCE label, to tell two λ apart by dash style.
func firstLambda(labels []string) string {
	for _, l := range labels {
		if i := strings.Index(l, "λ="); i >= 0 {
			j := strings.IndexAny(l[i:], ",)")
			if j > 0 {
				return l[i : i+j]
			}
		}
	}
	return "\x00"
}

func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-0" {
		return "0"
	}
	return s
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// Latency holds the latency model's measured inputs (DESIGN §6): predicted time per token =
// compute time per token with every expert resident + misses × expert bytes ÷ disk bandwidth
// (measured in the store's read pattern by regolith bench --disk) + stalls × the cost of one
// stall (a layer whose compute waits for reads: the workers park and must be woken; measured
// by fitting one real run, see docs/TRACES.md). It assumes no overlap of reads with compute,
// which is how the expert store runs (a layer's reads complete before its experts compute).
type Latency struct {
	DiskBytesPerSec float64 // expert payload bytes read per second
	DecodeCompute   float64 // seconds per decoded token, experts resident
	PrefillCompute  float64 // seconds per prompt token, experts resident
	StallSeconds    float64 // seconds lost per layer acquire that reads (0: none)
}

// Prediction is the latency model's answer for one replayed configuration.
type Prediction struct {
	DecodeSecondsPerToken float64 `json:"decode_s_per_token"`
	DecodeTPS             float64 `json:"decode_tokens_per_s"`
	PrefillSeconds        float64 `json:"prefill_s"`
	PrefillTPS            float64 `json:"prefill_tokens_per_s"`
}

// Predict applies the model to a result (its decode and prefill bytes per token).
func (l Latency) Predict(r *Result) Prediction {
	var p Prediction
	if l.DiskBytesPerSec <= 0 {
		return p
	}
	p.DecodeSecondsPerToken = l.DecodeCompute + r.Decode.BytesPerToken()/l.DiskBytesPerSec +
		div(r.Decode.Stalls, r.Decode.Tokens)*l.StallSeconds
	if p.DecodeSecondsPerToken > 0 {
		p.DecodeTPS = 1 / p.DecodeSecondsPerToken
	}
	p.PrefillSeconds = float64(r.Prefill.Tokens)*l.PrefillCompute + float64(r.Prefill.Bytes)/l.DiskBytesPerSec +
		float64(r.Prefill.Stalls)*l.StallSeconds
	if p.PrefillSeconds > 0 {
		p.PrefillTPS = float64(r.Prefill.Tokens) / p.PrefillSeconds
	}
	return p
}
