package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/regolith/regolith/internal/fixtures"
)

// --direct-io defaults to on with --mem: the store opens the file with O_DIRECT unless
// --direct-io=false is given (or the file system refuses O_DIRECT, where the store falls
// back to buffered reads and says so, so the default must open the store exactly as an
// explicit --direct-io does). Without --mem, --direct-io is an error and --direct-io=false
// is accepted.
func TestDirectIODefault(t *testing.T) {
	model := fixtures.Path(t, "models", "qwen3moe-small-q8_0.gguf")
	base := []string{"-m", model, "-t", "2", "-c", "256", "-b", "8"}
	canDirect := false // whether an explicit --direct-io gets O_DIRECT on this file system
	for _, c := range []struct {
		args   []string
		value  string // the flag's String after parsing
		direct bool   // whether the store is asked for O_DIRECT
	}{
		{[]string{"--mem", "24MiB", "--direct-io"}, "true", true},
		{[]string{"--mem", "24MiB"}, "auto", true},
		{[]string{"--mem", "24MiB", "--direct-io=true"}, "true", true},
		{[]string{"--mem", "24MiB", "--direct-io=false"}, "false", false},
		{[]string{"--direct-io=false"}, "false", false},
		{nil, "auto", false},
	} {
		fs := newFlags("t", "", "")
		g := addGenFlags(fs)
		if _, err := parseFlags(fs, append(append([]string{}, base...), c.args...)); err != nil {
			t.Fatal(err)
		}
		if got := g.directIO.String(); got != c.value {
			t.Fatalf("%v: --direct-io is %q, want %q", c.args, got, c.value)
		}
		e, s, st, err := g.open()
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if st == nil {
			if *g.mem != "" {
				t.Fatalf("%v: no store", c.args)
			}
		} else {
			if c.value == "true" {
				canDirect = st.DirectIO()
			}
			want := c.direct && canDirect
			if st.DirectIO() != want {
				t.Fatalf("%v: store direct I/O %v, want %v (O_DIRECT available: %v); %s", c.args, st.DirectIO(), want, canDirect, st.Describe())
			}
			if !want && !strings.Contains(st.Describe(), "buffered") {
				t.Fatalf("%v: %s", c.args, st.Describe())
			}
		}
		s.Close()
		st.Close()
		e.Close()
	}

	// --direct-io without --mem is an error, as before.
	fs := newFlags("t", "", "")
	g := addGenFlags(fs)
	if _, err := parseFlags(fs, append(append([]string{}, base...), "--direct-io")); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := g.open(); err == nil || !strings.Contains(err.Error(), "--mem") {
		t.Fatalf("--direct-io without --mem: %v", err)
	}

	// --help says what the default is and how to turn it off.
	var help bytes.Buffer
	fs = newFlags("t", "", "")
	addGenFlags(fs)
	fs.SetOutput(&help)
	fs.PrintDefaults()
	usage := help.String()
	i := strings.Index(usage, "-direct-io")
	if i < 0 {
		t.Fatal("no --direct-io in the usage")
	}
	if u := usage[i:]; !strings.Contains(u, "default: on with --mem") || !strings.Contains(u, "--direct-io=false") {
		t.Fatalf("usage of --direct-io:\n%s", u[:min(len(u), 400)])
	}
	if !canDirect {
		t.Log("this file system refuses O_DIRECT: the default fell back to buffered reads, as --direct-io does")
	}
}
