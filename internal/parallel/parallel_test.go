package parallel

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestForCoversEveryIndexOnce(t *testing.T) {
	p := New(3)
	defer p.Close()
	for _, n := range []int{0, 1, 2, 3, 7, 100, 1001} {
		for _, grain := range []int{1, 4, 1000} {
			hits := make([]int32, n)
			p.For(n, grain, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&hits[i], 1)
				}
			})
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("n=%d grain=%d: index %d visited %d times", n, grain, i, h)
				}
			}
		}
	}
}

// Loops issued after the workers parked, and from several goroutines, still cover every
// index once.
func TestForAfterParkingAndConcurrentCallers(t *testing.T) {
	p := New(3)
	defer p.Close()
	for round := 0; round < 3; round++ {
		time.Sleep(2 * spinFor) // let the workers park
		done := make(chan bool)
		for g := 0; g < 4; g++ {
			go func() {
				hits := make([]int32, 257)
				for k := 0; k < 50; k++ {
					for i := range hits {
						hits[i] = 0
					}
					p.For(len(hits), 8, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							atomic.AddInt32(&hits[i], 1)
						}
					})
					for i, h := range hits {
						if h != 1 {
							t.Errorf("index %d visited %d times", i, h)
							done <- false
							return
						}
					}
				}
				done <- true
			}()
		}
		for g := 0; g < 4; g++ {
			<-done
		}
	}
}

func BenchmarkForOverhead(b *testing.B) {
	p := New(2)
	defer p.Close()
	var sink atomic.Int64
	for i := 0; i < b.N; i++ {
		p.For(2, 1, func(lo, hi int) { sink.Add(int64(hi - lo)) })
	}
}

// For returns only after every part of its loop ran, also when a worker is descheduled
// between finishing one loop and checking whether to wake the caller (which, for the next
// loop, may by then be parked): that late check must not wake the next loop's caller.
func TestForWaitsAfterALateWorker(t *testing.T) {
	p := New(2)
	defer p.Close()
	testAfterDecrement = func() { time.Sleep(200 * time.Microsecond) }
	defer func() { testAfterDecrement = nil }()
	for i := 0; i < 300; i++ {
		// Even loops: the worker's part is quick, the caller returns while spinning and
		// the worker lingers after its decrement. Odd loops: the worker's part is slow,
		// the caller parks.
		var ran atomic.Int32
		p.For(2, 1, func(lo, hi int) {
			if lo == 1 && i%2 == 1 {
				time.Sleep(100 * time.Microsecond)
			}
			ran.Add(int32(hi - lo))
		})
		if n := ran.Load(); n != 2 {
			t.Fatalf("loop %d: For returned after %d of 2 parts", i, n)
		}
	}
}
