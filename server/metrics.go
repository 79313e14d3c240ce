package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus series, in a registry of its own.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	promptToks  prometheus.Counter
	genToks     prometheus.Counter
	cachedToks  *prometheus.CounterVec
	cacheHits   *prometheus.CounterVec
	decodeTPS   prometheus.Gauge
	prefillTPS  prometheus.Gauge
	ttft        prometheus.Histogram
	queue       prometheus.Gauge
	rejected    prometheus.Counter
	diskRestore prometheus.Histogram
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "regolith_requests_total", Help: "HTTP requests by route and status code."}, []string{"path", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "regolith_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"path"})
	m.promptToks = prometheus.NewCounter(prometheus.CounterOpts{Name: "regolith_prompt_tokens_total", Help: "Prompt tokens of completed generations (cached or computed)."})
	m.genToks = prometheus.NewCounter(prometheus.CounterOpts{Name: "regolith_generated_tokens_total", Help: "Generated tokens."})
	m.cachedToks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "regolith_prompt_cached_tokens_total", Help: "Prompt tokens reused instead of recomputed, by tier (ram, disk)."}, []string{"tier"})
	m.cacheHits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "regolith_prompt_cache_hits_total", Help: "Generations that reused a cached prefix, by tier (ram, disk); tier none: no reuse."}, []string{"tier"})
	m.decodeTPS = prometheus.NewGauge(prometheus.GaugeOpts{Name: "regolith_decode_tokens_per_second", Help: "Decode speed of the last generation."})
	m.prefillTPS = prometheus.NewGauge(prometheus.GaugeOpts{Name: "regolith_prefill_tokens_per_second", Help: "Prefill speed of the last generation (computed tokens only)."})
	m.ttft = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "regolith_time_to_first_token_seconds", Help: "From the model being free to the first sampled token.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 3, 12)})
	m.queue = prometheus.NewGauge(prometheus.GaugeOpts{Name: "regolith_queue_waiting", Help: "Requests waiting for the model."})
	m.rejected = prometheus.NewCounter(prometheus.CounterOpts{Name: "regolith_queue_rejected_total", Help: "Requests refused with 429 (queue full)."})
	m.diskRestore = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "regolith_prompt_cache_restore_seconds", Help: "Time to load a session file from the disk tier.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 3, 12)})
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.promptToks, m.genToks, m.cachedToks, m.cacheHits,
		m.decodeTPS, m.prefillTPS, m.ttft, m.queue, m.rejected, m.diskRestore} {
		f(c)
	}
	if st := s.cfg.Store; st != nil {
		f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "regolith_expert_hit_rate", Help: "Expert store hits per lookup since start (prefill and decode)."},
			func() float64 { return st.Stats().Total().HitRate() }))
		f(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "regolith_expert_bytes_read_total", Help: "Expert bytes read from the model file."},
			func() float64 { return float64(st.Stats().Total().BytesRead) }))
		f(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "regolith_expert_misses_total", Help: "Expert store misses."},
			func() float64 { return float64(st.Stats().Total().Misses) }))
		f(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "regolith_expert_io_wait_seconds_total", Help: "Time generation waited on expert reads."},
			func() float64 { return st.Stats().Total().Wait.Seconds() }))
	}
	f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "regolith_prompt_cache_files", Help: "Session files in the disk tier."},
		func() float64 {
			if s.disk == nil {
				return 0
			}
			return float64(s.disk.len())
		}))
	f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "regolith_prompt_cache_bytes", Help: "Bytes of the disk tier's session files."},
		func() float64 {
			if s.disk == nil {
				return 0
			}
			return float64(s.disk.total())
		}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *metrics) observe(r *genResult) {
	m.promptToks.Add(float64(r.promptTokens))
	m.genToks.Add(float64(len(r.ids)))
	tier := r.source
	if tier == "" {
		tier = "none"
	} else {
		m.cachedToks.WithLabelValues(tier).Add(float64(r.cachedTokens))
	}
	m.cacheHits.WithLabelValues(tier).Inc()
	if r.stats.GeneratedTokens > 1 {
		m.decodeTPS.Set(r.stats.DecodeTPS())
	}
	if r.stats.PromptTime > 0 {
		m.prefillTPS.Set(r.stats.PromptTPS())
	}
	if r.ttft > 0 {
		m.ttft.Observe(r.ttft.Seconds())
	}
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
	w.ResponseWriter.WriteHeader(c)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrap counts requests by route and status.
func (m *metrics) wrap(h http.Handler) http.Handler {
	known := map[string]bool{"/v1/chat/completions": true, "/chat/completions": true, "/v1/completions": true, "/completions": true,
		"/v1/models": true, "/models": true, "/health": true, "/metrics": true, "/slots/save": true, "/slots/restore": true, "/slots/0": true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		path := r.URL.Path
		if !known[path] {
			path = "other"
		}
		code := sw.code
		if code == 0 {
			code = 499 // the client left before a response
		}
		m.requests.WithLabelValues(path, strconv.Itoa(code)).Inc()
		m.duration.WithLabelValues(path).Observe(time.Since(t0).Seconds())
	})
}
