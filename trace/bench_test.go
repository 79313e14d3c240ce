package trace

import (
	"sync"
	"testing"
	"time"
)

var (
	bigOnce  sync.Once
	bigTrace *Trace
)

// big is the speed case: 48 layers, 16,384 tokens, top-8 of 128 experts with 64
// candidates stored: a 4,096-token prompt in chunks of 1,024, then 12,288 decode steps.
func big() *Trace {
	bigOnce.Do(func() {
		chunks := []int{1024, 1024, 1024, 1024}
		for len(chunks) < 4+12288 {
			chunks = append(chunks, 1)
		}
		bigTrace = synth(48, 128, 8, 64, chunks, 42)
	})
	return bigTrace
}

// bigConfigs are 128 configurations: 5 online policies × 8 cache sizes × MoCE λ ∈ {0, 0.05,
// 0.1} (protect 2), and Belady at the 8 sizes.
func bigConfigs() []Config {
	var cfgs []Config
	caches := []int{8, 16, 24, 32, 48, 64, 96, 112}
	for _, lam := range []float32{0, 0.05, 0.1} {
		for _, p := range Policies()[:Belady] {
			for _, c := range caches {
				cfgs = append(cfgs, Config{Policy: p, Cache: c, Lambda: lam, Protect: 2})
			}
		}
	}
	for _, c := range caches {
		cfgs = append(cfgs, Config{Policy: Belady, Cache: c})
	}
	return cfgs
}

// BenchmarkSweep128 replays the 128 configurations over the 48-layer, 16,384-token trace on
// all cores (the issue asks for 120 in under 30 s on 2 cores).
func BenchmarkSweep128(b *testing.B) {
	t := big()
	cfgs := bigConfigs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rs := Sweep(t, cfgs, 0)
		for _, r := range rs {
			if r.Err != "" {
				b.Fatal(r.Err)
			}
		}
		b.ReportMetric(time.Since(t0).Seconds(), "s/sweep")
		b.ReportMetric(float64(len(cfgs)), "configs")
	}
}

// BenchmarkReplay times one configuration of each kind over the big trace.
func BenchmarkReplay(b *testing.B) {
	t := big()
	t.probs()
	for _, cfg := range []Config{{Policy: LRU, Cache: 32}, {Policy: EMA, Cache: 32}, {Policy: InverseRouterEMA, Cache: 32},
		{Policy: LRU, Cache: 32, Lambda: 0.1, Protect: 2}, {Policy: Belady, Cache: 32}} {
		b.Run(cfg.Label(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Replay(t, cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
