package expert

import (
	"errors"
	"fmt"
	"io"
	"sync"
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

// batch is the reads of one Acquire.
type batch struct {
	r    *readers
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
	fail bool // stop issuing this batch's remaining reads after an error
}

func (b *batch) submit(q request) {
	q.b = b
	b.wg.Add(1)
	b.r.queue <- q
}

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
	b.wg.Done()
}

func (b *batch) failed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fail
}

// readers is the pool of goroutines issuing positional reads.
type readers struct {
	src      io.ReaderAt
	closeSrc func() error
	fd       uintptr
	dontNeed bool // advise the kernel to drop the pages read
	direct   bool
	queue    chan request
	wg       sync.WaitGroup
}

func startReaders(src io.ReaderAt, closeSrc func() error, fd uintptr, dontNeed, direct bool, n, depth int) *readers {
	r := &readers{src: src, closeSrc: closeSrc, fd: fd, dontNeed: dontNeed, direct: direct, queue: make(chan request, depth)}
	for i := 0; i < n; i++ {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for q := range r.queue {
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

func (r *readers) close() error {
	close(r.queue)
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
