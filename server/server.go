// Package server is regolith's OpenAI-compatible HTTP API: /v1/chat/completions (with
// server-sent-event streaming, tools, logprobs), /v1/completions, /v1/models, /health,
// /metrics (Prometheus), and llama.cpp-style /slots save and restore.
//
// One model instance serves one generation at a time; requests wait in a bounded queue
// (429 when it is full). The session's state after each request stays in RAM, and the next
// request reuses the longest common token prefix (exact: the cached positions hold what
// recomputing them would). With a cache directory, every request's state is also saved to
// disk and a later request whose prompt shares a longer prefix with a saved file than with
// RAM restores it (the disk tier, LRU-evicted beyond a size cap).
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/regolith/regolith/chat"
	"github.com/regolith/regolith/engine"
	"github.com/regolith/regolith/expert"
	"github.com/regolith/regolith/internal/units"
	"github.com/regolith/regolith/kvcache"
	"github.com/regolith/regolith/model"
	"github.com/regolith/regolith/sample"
)

// Config sets a server up.
type Config struct {
	Engine    *engine.Engine
	Session   *model.Session
	Store     *expert.Store // nil: experts resident
	ModelPath string        // the GGUF file (its name is the model id; it is fingerprinted)
	ModelID   string        // overrides the id derived from ModelPath
	Chunk     int           // prefill chunk (0: 512)
	MaxQueue  int           // requests that may wait behind the running one (0: 16; < 0: none)
	CacheDir  string        // disk tier and slot files ("" : off)
	CacheSize int64         // disk tier cap in bytes (0: 10 GiB)
	Log       io.Writer     // nil: stderr
	// MinRestoreGain is how many more prefix tokens a disk file must cover than RAM
	// before it is restored instead of recomputed (0: 32).
	MinRestoreGain int
}

// Server serves one model.
type Server struct {
	cfg     Config
	e       *engine.Engine
	sess    *model.Session
	tmpl    *chat.Template
	modelID string
	fp      kvcache.Fingerprint
	log     io.Writer

	admit chan struct{} // running + queued requests
	busy  chan struct{} // the one generation

	// Guarded by busy.
	cached    []int32 // the tokens whose state the session holds (len == sess.Pos())
	flash     []bool  // per cached position: computed in a chunk of >= flashRows rows
	promptLen int     // the prompt length of the request in progress

	disk    *diskCache
	metrics *metrics
	// genFn runs one generation (generate; tests may script the model's output).
	genFn func(context.Context, *genRequest) (*genResult, error)

	base     context.Context // cancelled to stop in-flight generations at shutdown
	cancel   context.CancelFunc
	draining atomic.Bool
	reqSeq   atomic.Uint64
}

// New prepares a server: chat template, fingerprint, and (with a cache directory) the
// index of saved states.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil || cfg.Session == nil {
		return nil, errors.New("server: an engine and a session are required")
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = 512
	}
	if cfg.MaxQueue == 0 {
		cfg.MaxQueue = 16
	}
	if cfg.MaxQueue < 0 {
		cfg.MaxQueue = 0
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = 10 << 30
	}
	if cfg.MinRestoreGain <= 0 {
		cfg.MinRestoreGain = 32
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	s := &Server{cfg: cfg, e: cfg.Engine, sess: cfg.Session, log: cfg.Log,
		admit: make(chan struct{}, 1+cfg.MaxQueue), busy: make(chan struct{}, 1)}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.modelID = cfg.ModelID
	if s.modelID == "" {
		s.modelID = strings.TrimSuffix(filepath.Base(cfg.ModelPath), ".gguf")
		if cfg.ModelPath == "" {
			s.modelID = "regolith"
		}
	}
	src, _ := s.e.File.String("tokenizer.chat_template")
	if src == "" {
		if _, ok := s.e.Tok.TokenID("<|im_start|>"); ok {
			src = chat.ChatML
			fmt.Fprintln(s.log, "server: the model has no chat template; using ChatML (its vocabulary has <|im_start|>)")
		}
	}
	if src != "" {
		t, err := chat.New(src)
		if err != nil {
			return nil, fmt.Errorf("server: the model's chat template: %w", err)
		}
		s.tmpl = t
	}
	mfp, err := s.e.File.Fingerprint()
	if err != nil {
		return nil, err
	}
	s.fp = kvcache.SessionFingerprint(mfp, s.sess.Cache())
	s.metrics = newMetrics(s)
	s.genFn = s.generate
	if cfg.CacheDir != "" {
		t0 := time.Now()
		d, err := openDiskCache(cfg.CacheDir, cfg.CacheSize, s.fp, s.log)
		if err != nil {
			return nil, err
		}
		s.disk = d
		fmt.Fprintf(s.log, "server: prompt cache %s: %d files, %s, indexed in %s\n", cfg.CacheDir, d.len(), units.FormatBytes(d.total()), time.Since(t0).Round(time.Microsecond))
	}
	return s, nil
}

// ModelID is the id /v1/models reports and requests name.
func (s *Server) ModelID() string { return s.modelID }

// Close cancels generations still running (Shutdown of the http.Server should come first,
// so that requests finish and save their state).
func (s *Server) Close() {
	s.draining.Store(true)
	s.cancel()
}

// Drain refuses new requests (503) from now on.
func (s *Server) Drain() { s.draining.Store(true) }

// errQueueFull and errDraining are the admission refusals.
var (
	errQueueFull = errors.New("server: the request queue is full")
	errDraining  = errors.New("server: shutting down")
)

// acquire admits a request and waits for the model. release must be called when it
// returns nil.
func (s *Server) acquire(ctx context.Context) (release func(), err error) {
	if s.draining.Load() {
		return nil, errDraining
	}
	select {
	case s.admit <- struct{}{}:
	default:
		s.metrics.rejected.Inc()
		return nil, errQueueFull
	}
	s.metrics.queue.Inc()
	select {
	case s.busy <- struct{}{}:
	case <-ctx.Done():
		s.metrics.queue.Dec()
		<-s.admit
		return nil, ctx.Err()
	case <-s.base.Done():
		s.metrics.queue.Dec()
		<-s.admit
		return nil, errDraining
	}
	s.metrics.queue.Dec()
	return func() { <-s.busy; <-s.admit }, nil
}

// genRequest is one generation, as the HTTP layer hands it over.
type genRequest struct {
	prompt      []int32
	maxTokens   int // < 0: until EOG or a full context
	params      sample.Params
	stop        []string
	logprobs    bool
	topLogprobs int
	keepLogits  bool // tests: keep the logits of the first sampled token
	// onText receives text as it becomes final (stop strings held back) and the
	// log-probabilities of the tokens generated since the last call; false stops.
	onText func(text string, lps []tokenLogprob) bool
}

type tokenLogprob struct {
	Token   string
	Logprob float32
	Top     []sample.TokenLogprob
}

type genResult struct {
	text         string
	ids          []int32
	finish       string // "stop", "length", "cancelled"
	promptTokens int
	cachedTokens int    // prompt tokens not recomputed
	source       string // where they came from: "", "ram", "disk"
	lps          []tokenLogprob
	ttft         time.Duration // request start (after the queue) to the first token
	firstLogits  []float32     // with keepLogits
	stats        engine.Stats
}

// flashRows is the chunk size from which the model's attention takes llama.cpp's tiled path
// (model.faTileQ). A position's cached K/V depend on which path computed it: rows of chunks
// of at least flashRows rows equal a one-pass computation of the prompt; rows of smaller
// chunks (and decoded tokens) equal a one-pass computation only of prompts shorter than
// flashRows. Reuse keeps to positions of the class a one-pass computation of the new
// prompt would give, and prefills the rest in chunks of at least flashRows rows, so that
// reused logits are bit-identical to recomputing the prompt from scratch (exact).
const flashRows = 64

// generate runs one request on the session; the caller holds the model.
func (s *Server) generate(ctx context.Context, r *genRequest) (*genResult, error) {
	t0 := time.Now()
	res := &genResult{promptTokens: len(r.prompt)}
	cached, source, err := s.reuse(r.prompt)
	if err != nil {
		return nil, err
	}
	res.cachedTokens, res.source = cached, source
	smp := sample.New(r.params, s.e.Model.Cfg.NVocab)
	for _, id := range r.prompt[:cached] {
		smp.Accept(id)
	}
	// Prefill all chunks but the last here (sizes as equal as possible, each at least
	// flashRows when the prompt is that long); the engine runs the last and generates.
	flash := len(r.prompt) >= flashRows
	rest := r.prompt[cached:]
	chunk := max(s.cfg.Chunk, 1)
	if flash {
		chunk = max(chunk, 2*flashRows)
	}
	// A recurrent model has its state only where a chunk ended (a checkpoint): its last
	// flashRows prompt tokens get a chunk of their own, so that the same prompt sent again
	// resumes flashRows tokens before its end, as reuse does for attention-only models.
	tail := 0
	if flash && s.sess.Cache().Rec != nil && len(rest) >= 2*flashRows {
		tail = flashRows
	}
	k := (len(rest) - tail + chunk - 1) / chunk // chunks before the tail
	here := k - 1
	if tail > 0 {
		here = k
	}
	tPrefill := time.Now()
	for i := 0; i < here; i++ {
		if ctx.Err() != nil {
			s.setCached(r.prompt[:s.sess.Pos()], flash)
			return &genResult{finish: "cancelled", promptTokens: len(r.prompt)}, nil
		}
		size := (len(rest) - tail) / (k - i)
		if _, err := s.sess.Forward(rest[:size], false); err != nil {
			s.setCached(nil, false)
			s.sess.Truncate(0)
			return nil, err
		}
		for _, id := range rest[:size] {
			smp.Accept(id)
		}
		rest = rest[size:]
	}
	ownPrefill := time.Since(tPrefill)
	nPrompt := len(r.prompt)
	dec := s.e.Tok.NewDecoder()
	var text strings.Builder // all generated text
	emitted := 0             // bytes of text handed to onText
	var pending []tokenLogprob
	stopped := false
	maxStop := 0
	for _, st := range r.stop {
		maxStop = max(maxStop, len(st))
	}
	// flush hands over the text that can no longer become part of a stop string.
	flush := func(final bool) bool {
		all := text.String()
		end := len(all)
		if !final {
			for _, st := range r.stop {
				end = min(end, len(all)-partialSuffix(all, st))
			}
		}
		if end <= emitted && len(pending) == 0 {
			return true
		}
		piece := all[emitted:max(end, emitted)]
		emitted = max(end, emitted)
		lps := pending
		pending = nil
		if r.onText != nil {
			return r.onText(piece, lps)
		}
		return true
	}
	gen, st, err := s.e.Generate(ctx, s.sess, engine.Request{
		Prompt: rest, MaxTokens: r.maxTokens, Chunk: len(rest), Sampler: smp,
		OnSample: func(logits []float32, id int32) {
			if res.ttft == 0 {
				res.ttft = time.Since(t0)
				if r.keepLogits {
					res.firstLogits = append([]float32(nil), logits...)
				}
			}
			if r.logprobs && !s.e.Tok.IsEOG(id) {
				lp, top := smp.Logprobs(logits, id, r.topLogprobs)
				t := tokenLogprob{Token: s.e.Tok.Piece(id), Logprob: lp}
				t.Top = append(t.Top, top...)
				pending = append(pending, t)
				res.lps = append(res.lps, t)
			}
		},
		OnToken: func(id int32) bool {
			text.WriteString(dec.Add(id))
			if len(r.stop) > 0 {
				all := text.String()
				from := max(0, emitted-maxStop)
				cut := -1
				for _, st := range r.stop {
					if i := strings.Index(all[from:], st); i >= 0 && (cut < 0 || from+i < cut) {
						cut = from + i
					}
				}
				if cut >= 0 {
					rest := all[:cut]
					text.Reset()
					text.WriteString(rest)
					stopped = true
					return false
				}
			}
			return flush(false)
		},
	})
	st.PromptTokens = nPrompt - cached
	st.PromptTime += ownPrefill
	res.stats = st
	// The session now holds the prompt (of class flash) and the generated tokens it ran
	// forward (decoded one by one).
	full := append(append([]int32(nil), r.prompt...), gen...)
	if p := s.sess.Pos(); p <= len(full) {
		s.setCached(full[:p], flash)
	} else {
		s.setCached(nil, false)
		s.sess.Truncate(0)
	}
	if err != nil {
		return nil, err
	}
	if !stopped {
		text.WriteString(dec.Flush())
	}
	res.ids = gen
	if len(gen) > 0 && s.e.Tok.IsEOG(gen[len(gen)-1]) {
		res.ids = gen[:len(gen)-1]
	}
	switch {
	case stopped || st.StopReason == "eog":
		res.finish = "stop"
	case st.StopReason == "cancelled":
		res.finish = "cancelled"
	case st.StopReason == "stopped":
		res.finish = "cancelled" // onText refused (the client went away)
	default:
		res.finish = "length"
	}
	if res.finish != "cancelled" {
		flush(true)
	}
	res.text = text.String()
	s.metrics.observe(res)
	return res, nil
}

// setCached records the session's tokens: with flash, the positions before promptLen are
// of class flash; the others were decoded one by one or prefilled in small chunks.
func (s *Server) setCached(toks []int32, flash bool) {
	s.cached = toks
	s.flash = s.flash[:0]
	for range toks {
		s.flash = append(s.flash, false)
	}
	if flash {
		for i := range min(s.promptLen, len(toks)) {
			s.flash[i] = true
		}
	}
}

// reuse positions the session at the longest prefix of prompt it can keep without
// changing a logit (see flashRows), from RAM or, when that covers MinRestoreGain more
// tokens, from a disk file. At least one prompt token is always left to run.
func (s *Server) reuse(prompt []int32) (int, string, error) {
	N := len(prompt)
	flash := N >= flashRows
	limit := N - 1
	if flash {
		limit = N - flashRows
	}
	n := min(lcp(s.cached, prompt), limit)
	for i := 0; i < n; i++ {
		if s.flash[i] != flash {
			n = i
			break
		}
	}
	source := "ram"
	if s.disk != nil && flash {
		// Disk files hold prompt positions of class flash only. Compare what each would
		// really keep: a recurrent model resumes at a saved state inside the shared prefix.
		ram := s.sess.Cache().Resumable(n)
		if path, m := s.disk.best(prompt, limit); path != "" && m >= ram+s.cfg.MinRestoreGain {
			t0 := time.Now()
			toks, err := s.sess.Cache().Load(path, s.fp)
			if err != nil {
				// The session's old state may be gone: start from nothing.
				s.setCached(nil, false)
				s.sess.Truncate(0)
				n = 0
				s.disk.failed(path, err)
			} else {
				s.promptLen = len(toks)
				s.setCached(toks, true)
				n = m
				source = "disk"
				s.disk.touch(path)
				s.metrics.diskRestore.Observe(time.Since(t0).Seconds())
			}
		}
	}
	n = s.sess.Truncate(n) // a recurrent model may go back to an earlier checkpoint
	s.cached, s.flash = s.cached[:min(n, len(s.cached))], s.flash[:min(n, len(s.flash))]
	s.promptLen = N
	if n == 0 {
		source = ""
	}
	return n, source, nil
}

// afterRequest saves the session's prompt state (positions of class flash) to the disk
// tier.
func (s *Server) afterRequest() {
	if s.disk == nil {
		return
	}
	n := s.sess.Cache().Resumable(s.canonical()) // a recurrent model: where a state is
	if n < flashRows {
		return
	}
	if err := s.disk.save(s.sess.Cache(), s.cached[:n]); err != nil {
		fmt.Fprintf(s.log, "server: prompt cache: %v\n", err)
	}
}

// canonical is how many leading cached positions are of class flash (what session files
// hold).
func (s *Server) canonical() int {
	for i, f := range s.flash {
		if !f {
			return i
		}
	}
	return len(s.flash)
}

func lcp(a, b []int32) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// partialSuffix is the length of the longest suffix of s that is a proper prefix of m.
func partialSuffix(s, m string) int {
	for n := min(len(s), len(m)-1); n > 0; n-- {
		if strings.HasSuffix(s, m[:n]) {
			return n
		}
	}
	return 0
}

// Handler is the server's HTTP routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/completions", s.handleCompletions)
	mux.HandleFunc("POST /completions", s.handleCompletions)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /models", s.handleModels)
	mux.HandleFunc("GET /health", s.handleHealth)
	mux.Handle("GET /metrics", s.metrics.handler())
	mux.HandleFunc("POST /slots/save", func(w http.ResponseWriter, r *http.Request) { s.handleSlot(w, r, "save") })
	mux.HandleFunc("POST /slots/restore", func(w http.ResponseWriter, r *http.Request) { s.handleSlot(w, r, "restore") })
	mux.HandleFunc("POST /slots/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "0" {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "id_slot", "this server has one slot: 0")
			return
		}
		s.handleSlot(w, r, r.URL.Query().Get("action"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "", fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
	return s.metrics.wrap(mux)
}
