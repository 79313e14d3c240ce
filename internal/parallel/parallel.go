// Package parallel runs loops over a fixed set of worker goroutines, so hot paths (one
// matmul per layer per token) neither spawn goroutines nor allocate.
package parallel

import (
	"runtime"
	"sync"
)

// Pool runs For loops on n workers (the calling goroutine is one of them).
type Pool struct {
	n    int
	work chan task
	wg   sync.WaitGroup
}

type task struct {
	fn     func(lo, hi int)
	lo, hi int
}

// New starts a pool of n workers; n <= 0 means runtime.NumCPU().
func New(n int) *Pool {
	if n <= 0 {
		n = runtime.NumCPU()
	}
	p := &Pool{n: n, work: make(chan task, n)}
	for i := 1; i < n; i++ {
		go func() {
			for t := range p.work {
				t.fn(t.lo, t.hi)
				p.wg.Done()
			}
		}()
	}
	return p
}

// Threads is the number of workers.
func (p *Pool) Threads() int { return p.n }

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
	step := (n + parts - 1) / parts
	p.wg.Add(parts - 1)
	for i := 1; i < parts; i++ {
		lo, hi := i*step, min((i+1)*step, n)
		if lo >= hi {
			p.wg.Done()
			continue
		}
		p.work <- task{fn, lo, hi}
	}
	fn(0, min(step, n))
	p.wg.Wait()
}

// Close stops the workers.
func (p *Pool) Close() { close(p.work) }
