package eval

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// Bootstrap settings: resamples of blocks of consecutive positions (blocks never span two
// documents), so that the interval accounts for neighbouring positions being correlated.
// The generator is seeded with a constant: the same inputs give the same intervals.
const (
	BootstrapResamples = 1000
	BootstrapBlock     = 32
	BootstrapSeed      = 1
)

// Metric is a mean with its bootstrap 95% confidence interval (percentile method).
type Metric struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"ci_lo"`
	Hi   float64 `json:"ci_hi"`
}

// DocReport is one document's means.
type DocReport struct {
	Name      string `json:"name"`
	Positions int    `json:"positions"`
	KLD       Metric `json:"kld"`
	Top1      Metric `json:"top1"`
	NLLRef    Metric `json:"nll_ref"`
	NLLTest   Metric `json:"nll_test"`
	Flips     int    `json:"flips"`
}

// Worst is a position carrying much KL.
type Worst struct {
	Doc     string  `json:"doc"`
	Pos     int     `json:"pos"` // index in the document of the token whose logits these are
	KLD     float64 `json:"kld"`
	Next    int32   `json:"next"`
	RefTop  int32   `json:"ref_top"`
	TestTop int32   `json:"test_top"`
	Context string  `json:"context,omitempty"` // the text just before the predicted token
	NextStr string  `json:"next_text,omitempty"`
	RefStr  string  `json:"ref_top_text,omitempty"`
	TestStr string  `json:"test_top_text,omitempty"`
}

// Report is a corpus's comparison.
type Report struct {
	Ref       string      `json:"ref"`
	Test      string      `json:"test"`
	KLDMean   float64     `json:"kld_mean"` // = KLD.Mean
	KLD       Metric      `json:"kld"`
	Top1      Metric      `json:"top1"`
	NLLRef    Metric      `json:"nll_ref"`
	NLLTest   Metric      `json:"nll_test"`
	DeltaNLL  Metric      `json:"delta_nll"` // NLLTest − NLLRef, paired
	KLDMedian float64     `json:"kld_median"`
	KLDP99    float64     `json:"kld_p99"`
	KLDMax    float64     `json:"kld_max"`
	Flips     int         `json:"flips"`
	Positions int         `json:"positions"`
	FlipsText string      `json:"flips_text"` // "n/N"
	Documents []DocReport `json:"documents"`
	Worst     []Worst     `json:"worst"`
	Bootstrap struct {
		Resamples int    `json:"resamples"`
		Block     int    `json:"block"`
		Seed      uint64 `json:"seed"`
		Unit      string `json:"unit"`
	} `json:"bootstrap"`
}

// Accumulator collects positions document by document.
type Accumulator struct {
	docs  []docAcc
	worst []Worst // kept sorted by KLD descending, at most NWorst
	// NWorst is how many of the highest-KL positions to keep (default 10).
	NWorst int
}

type docAcc struct {
	name              string
	kl, agree, nr, nt []float64
}

// Add records position pos (the index of the token whose logits were compared) of the
// named document. Documents are kept in order of first appearance.
func (a *Accumulator) Add(doc string, pos int, p Position) {
	if len(a.docs) == 0 || a.docs[len(a.docs)-1].name != doc {
		a.docs = append(a.docs, docAcc{name: doc})
	}
	d := &a.docs[len(a.docs)-1]
	ag := 0.0
	if p.Agree {
		ag = 1
	}
	d.kl, d.agree = append(d.kl, p.KL), append(d.agree, ag)
	d.nr, d.nt = append(d.nr, p.NLLRef), append(d.nt, p.NLLTest)
	n := a.NWorst
	if n == 0 {
		n = 10
	}
	if len(a.worst) < n || p.KL > a.worst[len(a.worst)-1].KLD {
		w := Worst{Doc: doc, Pos: pos, KLD: p.KL, Next: p.NextTok, RefTop: p.RefTop, TestTop: p.TestTop}
		i := sort.Search(len(a.worst), func(i int) bool { return a.worst[i].KLD < p.KL })
		a.worst = append(a.worst, Worst{})
		copy(a.worst[i+1:], a.worst[i:])
		a.worst[i] = w
		if len(a.worst) > n {
			a.worst = a.worst[:n]
		}
	}
}

// Positions is the number of positions added.
func (a *Accumulator) Positions() int {
	n := 0
	for _, d := range a.docs {
		n += len(d.kl)
	}
	return n
}

// block is a run of consecutive positions of one document: its sums.
type block struct{ n, kl, agree, nr, nt float64 }

func blocks(ds []docAcc) []block {
	var bs []block
	for _, d := range ds {
		for i := 0; i < len(d.kl); i += BootstrapBlock {
			var b block
			for j := i; j < min(i+BootstrapBlock, len(d.kl)); j++ {
				b.n++
				b.kl += d.kl[j]
				b.agree += d.agree[j]
				b.nr += d.nr[j]
				b.nt += d.nt[j]
			}
			bs = append(bs, b)
		}
	}
	return bs
}

// bootstrap returns the five means (KL, top-1, NLL ref, NLL test, ΔNLL) with their 95%
// intervals over block resamples (ratio of sums: a resample's mean per position).
func bootstrap(bs []block) [5]Metric {
	var tot block
	for _, b := range bs {
		tot.n += b.n
		tot.kl += b.kl
		tot.agree += b.agree
		tot.nr += b.nr
		tot.nt += b.nt
	}
	var out [5]Metric
	if tot.n == 0 {
		return out
	}
	means := func(b block) [5]float64 {
		return [5]float64{b.kl / b.n, b.agree / b.n, b.nr / b.n, b.nt / b.n, (b.nt - b.nr) / b.n}
	}
	m := means(tot)
	samples := make([][]float64, 5)
	rng := rand.New(rand.NewPCG(BootstrapSeed, 0))
	for r := 0; r < BootstrapResamples; r++ {
		var s block
		for range bs {
			b := bs[rng.IntN(len(bs))]
			s.n += b.n
			s.kl += b.kl
			s.agree += b.agree
			s.nr += b.nr
			s.nt += b.nt
		}
		v := means(s)
		for i := range samples {
			samples[i] = append(samples[i], v[i])
		}
	}
	for i := range out {
		sort.Float64s(samples[i])
		out[i] = Metric{Mean: m[i], Lo: quantile(samples[i], 0.025), Hi: quantile(samples[i], 0.975)}
	}
	return out
}

// quantile of sorted values, linear interpolation between order statistics.
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	x := q * float64(len(s)-1)
	i := int(x)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}

// Report computes the means, intervals and flips.
func (a *Accumulator) Report() *Report {
	r := &Report{}
	r.Bootstrap.Resamples, r.Bootstrap.Block, r.Bootstrap.Seed = BootstrapResamples, BootstrapBlock, BootstrapSeed
	r.Bootstrap.Unit = "blocks of consecutive positions within a document"
	var all []float64
	for _, d := range a.docs {
		m := bootstrap(blocks([]docAcc{d}))
		dr := DocReport{Name: d.name, Positions: len(d.kl), KLD: m[0], Top1: m[1], NLLRef: m[2], NLLTest: m[3]}
		for _, g := range d.agree {
			if g == 0 {
				dr.Flips++
			}
		}
		r.Flips += dr.Flips
		r.Positions += dr.Positions
		r.Documents = append(r.Documents, dr)
		all = append(all, d.kl...)
	}
	m := bootstrap(blocks(a.docs))
	r.KLD, r.Top1, r.NLLRef, r.NLLTest, r.DeltaNLL = m[0], m[1], m[2], m[3], m[4]
	r.KLDMean = r.KLD.Mean
	sort.Float64s(all)
	if len(all) > 0 {
		r.KLDMedian, r.KLDP99, r.KLDMax = quantile(all, 0.5), quantile(all, 0.99), all[len(all)-1]
	}
	r.FlipsText = strconv.Itoa(r.Flips) + "/" + strconv.Itoa(r.Positions)
	r.Worst = append([]Worst(nil), a.worst...)
	return r
}
