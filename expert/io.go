package expert

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// request is one positional read: dst from absolute offset off. At least need bytes must
// arrive; the rest of dst may lie past the end of the file (the aligned tail of a direct
// read).
type request struct {
	dst  []byte
	off  int64
	need int
	// what the bytes are, for errors
	layer  int
	expert int32
	tensor string
	b      *batch
}

func (q *request) what() string {
	return fmt.Sprintf("layer %d expert %d of %s", q.layer, q.expert, q.tensor)
}

// batch is the reads of one Acquire, or of one expert prefetched onto the shelf.
type batch struct {
	r    *readers
	wg   sync.WaitGroup
	left atomic.Int32 // reads not done
	mu   sync.Mutex
	err  error
	fail bool // stop issuing this batch's remaining reads after an error
	spec bool // a prefetch: low priority, submitted without blocking
}

func (b *batch) submit(q request) {
	q.b = b
	b.wg.Add(1)
	b.left.Add(1)
	if !b.spec {
		b.r.queue <- q
		return
	}
	select {
	case b.r.spec <- q:
	default: // the prefetch queue is full: this expert is not prefetched
		b.done(errSpecFull)
	}
}

// finished reports whether every read submitted so far is done (without blocking).
func (b *batch) finished() bool { return b.left.Load() == 0 }

// errSpecFull fails a prefetch that found its queue full.
var errSpecFull = errors.New("expert: the prefetch queue is full")

func (b *batch) wait() error {
	b.wg.Wait()
	return b.err
}

func (b *batch) done(err error) {
	if err != nil {
		b.mu.Lock()
		if b.err == nil {
			b.err = err
		}
		b.fail = true
		b.mu.Unlock()
	}
	b.left.Add(-1)
	b.wg.Done()
}

func (b *batch) failed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fail
}

// readers is the pool of goroutines issuing positional reads. Demand reads (queue) go
// before prefetch reads (spec): a reader takes a prefetch read only when no demand read
// waits.
type readers struct {
	src      io.ReaderAt
	closeSrc func() error
	fd       uintptr
	dontNeed bool // advise the kernel to drop the pages read
	direct   bool
	queue    chan request
	spec     chan request
	wg       sync.WaitGroup
}

// startReaders starts n readers; depth is the demand queue's capacity, specDepth the
// prefetch queue's (its submissions never block: sized for every read the shelf can have
// in flight).
func startReaders(src io.ReaderAt, closeSrc func() error, fd uintptr, dontNeed, direct bool, n, depth, specDepth int) *readers {
	r := &readers{src: src, closeSrc: closeSrc, fd: fd, dontNeed: dontNeed, direct: direct,
		queue: make(chan request, depth), spec: make(chan request, max(1, specDepth))}
	for i := 0; i < n; i++ {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for {
				var q request
				var ok bool
				select {
				case q, ok = <-r.queue:
				default:
					select {
					case q, ok = <-r.queue:
					case q, ok = <-r.spec:
					}
				}
				if !ok {
					return // closed: prefetches still queued are abandoned (nobody waits on them)
				}
				if q.b.failed() {
					q.b.done(nil)
					continue
				}
				err := r.readFull(q)
				if err == nil && r.dontNeed {
					fadviseDontNeed(r.fd, q.off, int64(q.need))
				}
				q.b.done(err)
			}
		}()
	}
	return r
}

func (r *readers) newBatch() *batch { return &batch{r: r} }

// newSpecBatch is a batch of prefetch reads.
func (r *readers) newSpecBatch() *batch { return &batch{r: r, spec: true} }

func (r *readers) close() error {
	close(r.queue)
	close(r.spec)
	r.wg.Wait()
	return r.closeSrc()
}

// errTruncated marks a read that ended before the expert's bytes did.
var errTruncated = errors.New("the file ends before the expert's bytes do (truncated file?)")

// readFull reads q.dst, accepting a short read only past q.need bytes at the end of the
// file. A short read is continued (a direct read from the last whole block it got); a read
// that makes no progress three times in a row is an error, as is any error from the file.
func (r *readers) readFull(q request) error {
	done, stuck := 0, 0
	for done < len(q.dst) {
		n, err := r.src.ReadAt(q.dst[done:], q.off+int64(done))
		if n < 0 || n > len(q.dst)-done {
			return fmt.Errorf("expert: reading %s at offset %d: the reader returned %d bytes for a %d-byte buffer", q.what(), q.off+int64(done), n, len(q.dst)-done)
		}
		prev := done
		done += n
		if done >= q.need && (err != nil || done < len(q.dst)) && (err == nil || errors.Is(err, io.EOF)) {
			return nil // all the matrix's bytes are in; the rest was alignment past the end of the file
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if done >= q.need {
					return nil
				}
				return fmt.Errorf("expert: reading %s: %d of %d bytes at offset %d: %w", q.what(), done, q.need, q.off, errTruncated)
			}
			return fmt.Errorf("expert: reading %s (%d bytes at offset %d): %w", q.what(), len(q.dst), q.off, err)
		}
		if r.direct && done < len(q.dst) && done%Align != 0 {
			done = done / Align * Align // O_DIRECT continues at an aligned offset
		}
		if done <= prev {
			if stuck++; stuck >= 3 {
				return fmt.Errorf("expert: reading %s at offset %d: %w", q.what(), q.off+int64(done), io.ErrNoProgress)
			}
		} else {
			stuck = 0
		}
	}
	return nil
}
