package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strings"
	"sync"
)

// Policy is an eviction policy of the simulated arena.
type Policy int

// The policies. Every policy evicts only experts the current chunk does not need, and breaks
// ties by least recent use, then by lowest (layer, expert).
const (
	// LRU evicts the least recently used expert (the engine's policy: a lookup touches hits
	// in ascending expert order, then loads misses in ascending order).
	LRU Policy = iota
	// LFU evicts the expert chosen by the fewest tokens so far (counts survive eviction).
	LFU
	// EMA evicts the lowest popularity score: every token step, every expert's score decays
	// by Decay and each chosen expert gains 1.
	EMA
	// NearPickEMA is EMA where candidates just behind the chosen ones (the next k of the
	// router's ranking) also gain NearCredit.
	NearPickEMA
	// InverseRouterEMA is EMA where every candidate gains its router probability (softmax
	// over the trace's top-N logits): the expert the router has wanted least recently goes.
	InverseRouterEMA
	// Belady is the offline optimum MIN: evict the expert whose next use is farthest in the
	// future (never: farthest; ties lowest id). It is the floor for misses under the trace's
	// own routing, so it does not combine with cache-aware routing.
	Belady
	nPolicies
)

var policyNames = [...]string{"lru", "lfu", "ema", "near_pick_ema", "inverse_router_ema", "belady"}

func (p Policy) String() string {
	if p >= 0 && p < nPolicies {
		return policyNames[p]
	}
	return fmt.Sprintf("policy(%d)", int(p))
}

// MarshalText writes the policy's name.
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a policy's name.
func (p *Policy) UnmarshalText(b []byte) error {
	q, err := ParsePolicy(string(b))
	if err == nil {
		*p = q
	}
	return err
}

// Policies lists every policy in order.
func Policies() []Policy {
	out := make([]Policy, nPolicies)
	for i := range out {
		out[i] = Policy(i)
	}
	return out
}

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if s == n {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q (want one of %s)", s, strings.Join(policyNames[:], ", "))
}

// Default scores' parameters.
const (
	DefaultDecay      = 0.95 // half-life of about 13.5 tokens
	DefaultNearCredit = 0.25
)

// Config is one simulated configuration. Exactly one of Cache, Slots and CacheBytes sizes
// the arena.
type Config struct {
	Policy Policy `json:"policy"`
	// Cache gives every layer its own arena of this many experts (DESIGN §6's replay).
	Cache int `json:"cache,omitempty"`
	// Slots gives every size class (the layers whose experts have one size) one arena of
	// this many slots, shared by its layers: the engine's arena (expert.Config.Slots).
	Slots int `json:"slots,omitempty"`
	// CacheBytes is a shared arena of this many bytes, split between size classes in
	// proportion to their experts' bytes (without the engine's alignment padding).
	CacheBytes int64 `json:"cache_bytes,omitempty"`
	// Lambda > 0 reroutes every token with moce.Select against the simulated residency
	// (closed loop), protecting the Protect top-logit candidates.
	Lambda  float32 `json:"moce_lambda,omitempty"`
	Protect int     `json:"moce_protect,omitempty"`
	// Keep, if set, is a pruned model's experts: the others are skipped.
	Keep     *Keep  `json:"-"`
	KeepName string `json:"keep,omitempty"`
	// Decay (0: DefaultDecay) and NearCredit (0: DefaultNearCredit) tune the EMA policies.
	Decay      float64 `json:"decay,omitempty"`
	NearCredit float64 `json:"near_credit,omitempty"`

	closed bool // route with moce.Select even at λ = 0 (tests)
}

// Label is a short name of the configuration.
func (c Config) Label() string {
	s := c.Policy.String()
	if c.Lambda > 0 {
		s += fmt.Sprintf("+moce(λ=%g,J=%d)", c.Lambda, c.Protect)
	}
	if c.KeepName != "" {
		s += "+keep(" + c.KeepName + ")"
	}
	return s
}

// Phase counts one phase's lookups: prefill (chunks of more than one token) or decode (one
// token per chunk), split as the expert store splits its statistics.
type Phase struct {
	Tokens   int64 `json:"tokens"`
	Lookups  int64 `json:"lookups"` // distinct experts a chunk's layer needs, plus forced misses
	Hits     int64 `json:"hits"`
	Misses   int64 `json:"misses"`   // loads, forced and overflow misses included
	Forced   int64 `json:"forced"`   // keep-map: experts missing from the top-N survivors
	Overflow int64 `json:"overflow"` // misses that found every slot held by the chunk
	Bytes    int64 `json:"bytes"`    // misses × the layer's expert bytes
	Stalls   int64 `json:"stalls"`   // layer acquires that read at least one expert
}

func (p *Phase) add(q Phase) {
	p.Tokens += q.Tokens
	p.Lookups += q.Lookups
	p.Hits += q.Hits
	p.Misses += q.Misses
	p.Forced += q.Forced
	p.Overflow += q.Overflow
	p.Bytes += q.Bytes
	p.Stalls += q.Stalls
}

// HitRate is hits per lookup.
func (p Phase) HitRate() float64 { return div(p.Hits, p.Lookups) }

// MissesPerToken and BytesPerToken are per token of the phase.
func (p Phase) MissesPerToken() float64 { return div(p.Misses, p.Tokens) }
func (p Phase) BytesPerToken() float64  { return div(p.Bytes, p.Tokens) }

func div(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// LayerCounts are one layer's hits and misses.
type LayerCounts struct {
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
}

// Result is a configuration's replay.
type Result struct {
	Config         Config        `json:"config"`
	Label          string        `json:"label"`
	SlotsPerClass  []int         `json:"slots_per_class"`
	Hits           int64         `json:"hits"`
	Misses         int64         `json:"misses"`
	Tokens         int64         `json:"tokens"`
	HitRate        float64       `json:"hit_rate"`
	MissesPerToken float64       `json:"misses_per_token"`
	BytesPerToken  float64       `json:"bytes_per_token"`
	Prefill        Phase         `json:"prefill"`
	Decode         Phase         `json:"decode"`
	Layers         []LayerCounts `json:"layers"`
	Predicted      *Prediction   `json:"predicted,omitempty"` // the latency model, when given
	Err            string        `json:"error,omitempty"`
}

// Total is prefill and decode together.
func (r *Result) Total() Phase {
	p := r.Prefill
	p.add(r.Decode)
	return p
}

// Keep is a pruned model's kept experts per layer.
type Keep struct {
	bits [][]uint64
	n    []int
}

// NewKeep builds a keep-map from each layer's kept expert ids.
func NewKeep(layers [][]int, nExpert int) (*Keep, error) {
	k := &Keep{}
	for l, ids := range layers {
		b := make([]uint64, (nExpert+63)/64)
		for _, e := range ids {
			if e < 0 || e >= nExpert {
				return nil, fmt.Errorf("keep-map: layer %d keeps expert %d of %d", l, e, nExpert)
			}
			b[e/64] |= 1 << (e % 64)
		}
		k.bits = append(k.bits, b)
		c := 0
		for _, w := range b {
			c += bits.OnesCount64(w)
		}
		k.n = append(k.n, c)
	}
	return k, nil
}

// ReadKeep reads a keep-map file: JSON, either {"layers": [[ids of layer 0], …]} or the
// bare array of arrays, one list of kept expert ids per layer.
func ReadKeep(path string, nLayer, nExpert int) (*Keep, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var layers [][]int
	var obj struct {
		Layers [][]int `json:"layers"`
	}
	if err := json.Unmarshal(b, &layers); err != nil {
		if err2 := json.Unmarshal(b, &obj); err2 != nil || obj.Layers == nil {
			return nil, fmt.Errorf("%s: keep-map is not JSON of per-layer expert ids: %v", path, err)
		}
		layers = obj.Layers
	}
	if len(layers) != nLayer {
		return nil, fmt.Errorf("%s: keep-map has %d layers; the trace has %d", path, len(layers), nLayer)
	}
	k, err := NewKeep(layers, nExpert)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

func (k *Keep) kept(l int, e uint16) bool { return k.bits[l][e>>6]>>(e&63)&1 != 0 }

// probs is, per layer and token, the softmax over the trace's top-N logits (computed once).
func (t *Trace) probs() [][]float32 {
	t.probOnce.Do(func() {
		N := t.TopN
		t.prob = make([][]float32, t.NLayer)
		for l := range t.prob {
			p := make([]float32, len(t.Logit[l]))
			z := t.Logit[l]
			for i := 0; i+N <= len(z); i += N {
				m := float64(z[i])
				var s float64
				for j := i; j < i+N; j++ {
					v := math.Exp(float64(z[j]) - m)
					p[j] = float32(v)
					s += v
				}
				for j := i; j < i+N; j++ {
					p[j] = float32(float64(p[j]) / s)
				}
			}
			t.prob[l] = p
		}
	})
	return t.prob
}

type probCache struct {
	probOnce sync.Once
	prob     [][]float32
}

// Replay simulates one configuration over the trace.
func Replay(t *Trace, cfg Config) (*Result, error) {
	s, err := newSim(t, cfg)
	if err != nil {
		return nil, err
	}
	s.run()
	return s.result(), nil
}

var errSize = errors.New("trace: give exactly one of a cache size per layer, slots per class or a byte budget")
