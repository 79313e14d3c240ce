package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// feed replays t's routing into a recorder in the order model.Session calls it: per chunk,
// layer after layer, every token of the chunk. It expands the top-N candidates to full logits
// (t.TopN must be t.NExpert).
func feed(rec *Recorder, t *Trace, beginChunk bool) {
	N, K := t.TopN, t.K
	logits := make([]float32, t.NExpert)
	chosen := make([]int32, K)
	for _, c := range t.Chunks {
		if beginChunk {
			rec.BeginChunk(c.Tokens)
		}
		for l := 0; l < t.NLayer; l++ {
			for j := 0; j < c.Tokens; j++ {
				tok := c.Start + j
				for i := 0; i < N; i++ {
					logits[t.Cand[l][tok*N+i]] = t.Logit[l][tok*N+i]
				}
				for i := range chosen {
					chosen[i] = int32(t.Chosen[l][tok*K+i])
				}
				rec.Routed(l, c.Pos+j, logits, chosen, nil)
			}
		}
	}
}

func record(t testing.TB, tr *Trace, beginChunk bool) []byte {
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, tr.Header)
	if err != nil {
		t.Fatal(err)
	}
	feed(rec, tr, beginChunk)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRecordReadRoundTrip(t *testing.T) {
	for _, nE := range []int{12, 300} { // one-byte and two-byte ids
		tr := synth(3, nE, 4, nE, []int{5, 1, 1, 3, 1, 1}, 1)
		for _, bc := range []bool{true, false} {
			b := record(t, tr, bc)
			got, err := Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			for i := range tr.Chunks {
				tr.Chunks[i].Request = 0
			}
			if !reflect.DeepEqual(got.Chunks, tr.Chunks) || !reflect.DeepEqual(got.Cand, tr.Cand) ||
				!reflect.DeepEqual(got.Logit, tr.Logit) || !reflect.DeepEqual(got.Chosen, tr.Chosen) ||
				got.Tokens != tr.Tokens || len(got.Requests) != 1 {
				t.Fatalf("n_expert %d BeginChunk %v: the trace read back differs", nE, bc)
			}
			var enc bytes.Buffer
			if err := got.Encode(&enc); err != nil || !bytes.Equal(enc.Bytes(), b) {
				t.Fatalf("Encode differs from the recorder's bytes (%v)", err)
			}
		}
	}
}

func TestRecorderTopNAndMarkers(t *testing.T) {
	h := Header{NLayer: 2, NExpert: 6, K: 2, TopN: 3, ExpertBytes: []int64{10, 10}}
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	z := []float32{0.5, 2, 0.5, -1, 2, 0.1} // ties: 1 before 4, 0 before 2
	step := func(pos, T int) {
		for l := 0; l < 2; l++ {
			for j := 0; j < T; j++ {
				rec.Routed(l, pos+j, z, []int32{1, 4}, nil)
			}
		}
	}
	rec.BeginRequest(3)
	step(0, 2) // prompt
	step(2, 1) // the prompt's last token: still prompt
	step(3, 1) // decode
	step(0, 4) // the session restarted: a new request, prompt of unknown length
	step(4, 1)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr.Cand[0][:3], []uint16{1, 4, 0}) || !reflect.DeepEqual(tr.Logit[1][:3], []float32{2, 2, 0.5}) {
		t.Fatalf("top-3: %v %v", tr.Cand[0][:3], tr.Logit[1][:3])
	}
	kinds := []int{}
	for _, c := range tr.Chunks {
		kinds = append(kinds, c.Kind, c.Request)
	}
	if want := []int{Prompt, 0, Prompt, 0, Decode, 0, Prompt, 1, Decode, 1}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds/requests %v, want %v", kinds, want)
	}
	if tr.Requests[0].PromptTokens != 3 || tr.Requests[1].PromptTokens != 0 || tr.Requests[1].FirstChunk != 3 {
		t.Fatalf("requests %+v", tr.Requests)
	}
}

func TestRecorderErrors(t *testing.T) {
	h := Header{NLayer: 2, NExpert: 4, K: 1, TopN: 2, ExpertBytes: []int64{10, 10}}
	z := []float32{1, 2, 3, 4}
	cases := map[string]func(r *Recorder){
		"position gap": func(r *Recorder) { r.Routed(0, 0, z, []int32{1}, nil); r.Routed(1, 1, z, []int32{1}, nil) },
		"chunk cut short": func(r *Recorder) {
			r.Routed(0, 0, z, []int32{1}, nil)
			r.Routed(0, 1, z, []int32{1}, nil)
			r.Routed(1, 0, z, []int32{1}, nil)
		},
		"bad expert":   func(r *Recorder) { r.Routed(0, 0, z, []int32{9}, nil) },
		"wrong logits": func(r *Recorder) { r.Routed(0, 0, z[:3], []int32{1}, nil) },
		"layer first":  func(r *Recorder) { r.Routed(1, 0, z, []int32{1}, nil) },
	}
	for name, f := range cases {
		rec, _ := NewRecorder(io.Discard, h)
		f(rec)
		if err := rec.Close(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReadHostile(t *testing.T) {
	tr := synth(2, 8, 2, 8, []int{3, 1, 1}, 2)
	good := record(t, tr, true)
	if _, err := Read(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(good); n++ {
		if _, err := Read(bytes.NewReader(good[:n]), int64(n)); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(good))
		}
	}
	mut := func(off int, b ...byte) []byte {
		m := bytes.Clone(good)
		copy(m[off:], b)
		return m
	}
	hl := fixedHeader + 8*2 + 2 + len("synthetic")
	cases := map[string][]byte{
		"magic":         mut(0, 'X'),
		"version":       mut(8, 9),
		"layers":        mut(56, 0xff, 0xff, 0xff, 0x7f),
		"k over n":      mut(64, 99),
		"top-n below k": mut(68, 1),
		"huge chunk":    mut(hl+5+6, 0xff, 0xff, 0xff, 0x0f),
		"unknown tag":   mut(hl, 'Z'),
		"chunk kind":    mut(hl+5+1, 7),
		"expert id":     mut(hl+5+10, 200),
		"repeated id":   mut(hl+5+10, good[hl+5+11]),
		"unsorted":      mut(hl+5+10+8, 0, 0, 0x80, 0x7f), // +Inf logit
		"trailing":      append(bytes.Clone(good), 0),
		"end counts":    mut(len(good)-24, 99),
	}
	for name, b := range cases {
		if _, err := Read(bytes.NewReader(b), int64(len(b))); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "panic") {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := Read(bytes.NewReader(good[:len(good)-1]), int64(len(good)-1))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v", err)
	}
}

// seedTrace is a small trace recorded from a real model (testdata/seed.trace, written by
// TestEngineReproduction's recording when REGOLITH_WRITE_SEED is set) or a synthetic one.
func seedTrace(t testing.TB) []byte {
	if b, err := os.ReadFile("testdata/seed.trace"); err == nil {
		return b
	}
	return record(t, synth(2, 8, 2, 8, []int{3, 1, 1}, 2), true)
}

func FuzzRead(f *testing.F) {
	f.Add(seedTrace(f))
	f.Add(record(f, synth(2, 300, 2, 300, []int{2, 1}, 3), false))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		// A trace that reads must replay and encode back to the same bytes.
		var enc bytes.Buffer
		if err := tr.Encode(&enc); err != nil || !bytes.Equal(enc.Bytes(), b) {
			t.Fatalf("re-encoding differs (%v)", err)
		}
		for _, p := range Policies() {
			if _, err := Replay(tr, Config{Policy: p, Cache: 2}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
