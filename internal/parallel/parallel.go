// Package parallel runs loops over a fixed set of worker goroutines, so hot paths (one
// matmul per layer per token) neither spawn goroutines nor allocate.
//
// A decode step runs about a hundred short loops of a few microseconds each, so waking a
// parked goroutine for every one (a futex round trip) would cost as much as the work.
// Workers therefore spin on a generation counter for a while after each loop and park
// only when no work came (as llama.cpp's thread pool does).
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is how long an idle worker polls for the next loop before parking.
const spinFor = 50 * time.Microsecond

// Pool runs For loops on n workers (the calling goroutine is worker 0).
type Pool struct {
	n       int
	gen     atomic.Uint64 // bumped for every loop, and to stop
	pending atomic.Int32  // workers still running the current loop
	closed  atomic.Bool

	// The current loop, written before gen is bumped.
	fn          func(lo, hi int)
	size, parts int
	step        int

	workers []*worker
	mu      sync.Mutex // serializes For calls from different goroutines

	// The caller of For parks on done when the workers take longer than spinFor (a busy
	// machine): the worker that finishes last sends.
	waiting atomic.Uint64 // the generation the caller parks for (0: none)
	done    chan struct{}
}

type worker struct {
	sleeping atomic.Bool
	wake     chan struct{}
}

// New starts a pool of n workers; n <= 0 means runtime.NumCPU().
func New(n int) *Pool {
	if n <= 0 {
		n = runtime.NumCPU()
	}
	p := &Pool{n: n, done: make(chan struct{}, 1)}
	for i := 1; i < n; i++ {
		w := &worker{wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		go p.run(i, w)
	}
	return p
}

// testAfterDecrement, when set (tests only), runs in a worker between its decrement of
// pending and its wake-up check: a descheduled worker, on demand.
var testAfterDecrement func()

// Threads is the number of workers.
func (p *Pool) Threads() int { return p.n }

func (p *Pool) run(id int, w *worker) {
	seen := uint64(0)
	for {
		g := p.wait(w, seen)
		if p.closed.Load() {
			return
		}
		seen = g
		if id < p.parts {
			lo, hi := id*p.step, min((id+1)*p.step, p.size)
			if lo < hi {
				p.fn(lo, hi)
			}
		}
		// Only the loop the caller waits for may wake it: a worker late from loop g (its
		// decrement done, descheduled before this check) must not wake the caller of loop
		// g+1, which would return before this worker ran it.
		left := p.pending.Add(-1)
		if testAfterDecrement != nil {
			testAfterDecrement()
		}
		if left == 0 && p.waiting.Load() == g && p.waiting.CompareAndSwap(g, 0) {
			p.done <- struct{}{}
		}
	}
}

// wait returns once gen differs from seen: spinning first, then parked on w.wake.
func (p *Pool) wait(w *worker, seen uint64) uint64 {
	deadline := time.Now().Add(spinFor)
	for i := 0; ; i++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if i&255 == 255 && time.Now().After(deadline) {
			break
		}
	}
	for {
		w.sleeping.Store(true)
		if g := p.gen.Load(); g != seen { // published before we said we sleep
			if !w.sleeping.CompareAndSwap(true, false) {
				<-w.wake // For saw us sleeping and sent a wake-up: consume it
			}
			return g
		}
		<-w.wake
		if g := p.gen.Load(); g != seen {
			return g
		}
	}
}

// For splits [0, n) into contiguous ranges of at least grain items, one per worker,
// and waits for all of them. fn must be safe to call concurrently on disjoint ranges.
func (p *Pool) For(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	parts := p.n
	if grain < 1 {
		grain = 1
	}
	if m := (n + grain - 1) / grain; m < parts {
		parts = m
	}
	if parts <= 1 {
		fn(0, n)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	step := (n + parts - 1) / parts
	p.fn, p.size, p.parts, p.step = fn, n, parts, step
	p.pending.Store(int32(len(p.workers)))
	g := p.gen.Add(1)
	p.wakeSleepers()
	fn(0, min(step, n))
	p.awaitWorkers(g)
	p.fn = nil
}

// awaitWorkers spins until the workers are done, then parks if they are slow.
func (p *Pool) awaitWorkers(g uint64) {
	deadline := time.Now().Add(spinFor)
	for i := 0; p.pending.Load() != 0; i++ {
		if i&255 != 255 || time.Now().Before(deadline) {
			continue
		}
		p.waiting.Store(g)
		if p.pending.Load() == 0 { // finished before we said we wait
			if !p.waiting.CompareAndSwap(g, 0) {
				<-p.done
			}
			return
		}
		<-p.done
		return
	}
}

func (p *Pool) wakeSleepers() {
	for _, w := range p.workers {
		if w.sleeping.Load() && w.sleeping.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
}

// Close stops the workers.
func (p *Pool) Close() {
	if p.closed.Swap(true) {
		return
	}
	p.gen.Add(1)
	p.wakeSleepers()
}
