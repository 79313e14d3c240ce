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
