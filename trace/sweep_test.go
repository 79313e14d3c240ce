package trace

import (
	"bytes"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
)

func TestSweepDeterministicOrder(t *testing.T) {
	tr := synth(3, 32, 4, 16, []int{8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 9)
	var cfgs []Config
	for _, p := range Policies() {
		for _, c := range []int{4, 8, 16} {
			cfgs = append(cfgs, Config{Policy: p, Cache: c})
			if p != Belady {
				cfgs = append(cfgs, Config{Policy: p, Cache: c, Lambda: 0.1, Protect: 2})
			}
		}
	}
	cfgs = append(cfgs, Config{Policy: Belady, Cache: 4, Lambda: 0.1}) // an error, in its place
	one := Sweep(tr, cfgs, 1)
	many := Sweep(tr, cfgs, 7)
	for i := range cfgs {
		r, err := Replay(tr, cfgs[i])
		if i == len(cfgs)-1 {
			if err == nil || one[i].Err == "" || many[i].Err != one[i].Err {
				t.Fatalf("the invalid configuration: %v / %q / %q", err, one[i].Err, many[i].Err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(one[i], r) || !reflect.DeepEqual(many[i], r) {
			t.Fatalf("configuration %d (%s) differs between Replay and sweeps on 1 and 7 workers", i, cfgs[i].Label())
		}
	}
	var b bytes.Buffer
	WriteTable(&b, many)
	if n := strings.Count(b.String(), "\n"); n != len(cfgs)+2 {
		t.Errorf("table of %d lines for %d results", n, len(cfgs))
	}
	b.Reset()
	if err := PlotSVG(&b, many, "a <title> & more", "decode"); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML with one line per label, Belady in black, MoCE dashed.
	d := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	lines, dashed, black := 0, 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG does not parse: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
			for _, a := range se.Attr {
				if a.Name.Local == "stroke-dasharray" {
					dashed++
				}
				if a.Name.Local == "stroke" && a.Value == "black" {
					black++
				}
			}
		}
	}
	if lines != 11 || dashed != 5 || black != 1 {
		t.Errorf("%d lines (want 11), %d dashed (want 5), %d black (want 1)", lines, dashed, black)
	}
	for _, s := range []string{"misses per decoded token", "cache size (experts per layer)", "belady", "lru+moce(λ=0.1,J=2)", "a &lt;title&gt; &amp; more"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the plot lacks %q", s)
		}
	}
}
