package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/regolith/regolith/defaultmodel"
	"github.com/regolith/regolith/engine"
	"github.com/regolith/regolith/internal/units"
)

// diskFlags are bench --disk: the read bandwidth the expert store would see, measured on a
// fresh file (bytes no cache has seen) with direct I/O, in the store's pattern.
type diskFlags struct {
	on      *bool
	dir     *string
	size    *string
	threads *int
}

func addDiskFlags(fs interface {
	String(string, string, string) *string
	Int(string, int, string) *int
	Bool(string, bool, string) *bool
}) diskFlags {
	return diskFlags{
		on:      fs.Bool("disk", false, "measure disk read bandwidth instead: write a fresh file, then read it with O_DIRECT in the\nexpert store's pattern (the model's expert matrices, n_expert_used experts per batch, --disk-threads\nreads in flight) and check every byte"),
		dir:     fs.String("disk-dir", "", "with --disk: directory for the test file (default: the model's directory)"),
		size:    fs.String("disk-size", "256MiB", "with --disk: test file size"),
		threads: fs.Int("disk-threads", 4, "with --disk: reads in flight (the store's --io-threads); measured at 1 reader, then at this many"),
	}
}

type diskResult struct {
	Dir         string  `json:"dir"`
	Direct      bool    `json:"direct_io"`
	FileBytes   int64   `json:"file_bytes"`
	ReadBytes   int64   `json:"read_bytes"` // device bytes (aligned reads)
	Payload     int64   `json:"payload_bytes"`
	Reads       int64   `json:"reads"`
	Batches     int64   `json:"batches"`
	Seconds     float64 `json:"seconds"`
	MBps        float64 `json:"payload_mb_per_s"` // expert bytes per second (1e6)
	DeviceMBps  float64 `json:"device_mb_per_s"`
	ExpertMs    float64 `json:"ms_per_expert"` // one expert's three reads, amortized over a batch
	BatchP50Ms  float64 `json:"batch_p50_ms"`
	ExpertBytes int64   `json:"expert_bytes"`
	Threads     int     `json:"threads"`
	BatchOf     int     `json:"experts_per_batch"`
	// DeviceRead is the growth of the process's read_bytes (/proc/self/io) over the reads:
	// bytes that came from the device, not the page cache (-1: not available here).
	DeviceRead int64   `json:"proc_read_bytes"`
	FromDevice float64 `json:"from_device"` // DeviceRead / ReadBytes
}

func (d diskFlags) run(g genFlags, asJSON bool) error {
	if *g.model == "" {
		p, err := defaultmodel.Path()
		if err != nil {
			return err
		}
		*g.model = p
	}
	e, err := engine.Open(*g.model)
	if err != nil {
		return err
	}
	L := &e.Model.Layers[0]
	parts := []int64{int64(L.Gate.ExpertBytes), int64(L.Up.ExpertBytes), int64(L.Down.ExpertBytes)}
	k := e.Model.Cfg.NExpertUsed
	e.Close()
	size, err := units.ParseBytes(*d.size)
	if err != nil {
		return fmt.Errorf("--disk-size: %w", err)
	}
	if *d.threads < 1 {
		return fmt.Errorf("--disk-threads must be at least 1")
	}
	dir := *d.dir
	if dir == "" {
		dir = filepath.Dir(*g.model)
	}
	counts := []int{1}
	if *d.threads > 1 {
		counts = append(counts, *d.threads)
	}
	for _, th := range counts {
		// A new file for every pass: its bytes are fresh even where O_DIRECT is refused.
		r, err := diskBench(dir, size, parts, k, th)
		if err != nil {
			return err
		}
		if asJSON {
			if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
				return err
			}
			continue
		}
		mode := "O_DIRECT"
		if !r.Direct {
			mode = "buffered (O_DIRECT unavailable; pages dropped with FADV_DONTNEED)"
		}
		fmt.Printf("disk: %s, fresh %s file, %s reads; %d experts of %s per batch (3 reads each), %d in flight\n",
			r.Dir, units.FormatBytes(r.FileBytes), mode, r.BatchOf, units.FormatBytes(r.ExpertBytes), r.Threads)
		fmt.Printf("read %s in %d reads (%d batches) in %.2f s: %.1f MB/s of expert bytes (%.1f MB/s device), %.3f ms per expert, batch p50 %.3f ms; every byte checked\n",
			units.FormatBytes(r.ReadBytes), r.Reads, r.Batches, r.Seconds, r.MBps, r.DeviceMBps, r.ExpertMs, r.BatchP50Ms)
		if r.DeviceRead >= 0 {
			fmt.Printf("/proc/self/io read_bytes grew by %s: %.1f%% of the bytes read came from the device\n",
				units.FormatBytes(r.DeviceRead), 100*r.FromDevice)
		} else {
			fmt.Printf("/proc/self/io is not available: cannot check that the bytes came from the device\n")
		}
	}
	return nil
}

// diskBench writes a file of pseudo-random blocks (each 4 KiB block starts with its index
// and a per-run tag), syncs it, and reads it back once, in batches of k experts (three
// aligned reads each, of the matrices' sizes), threads reads in flight, each range read once.
func diskBench(dir string, size int64, parts []int64, k, threads int) (*diskResult, error) {
	const blk = 4096
	f, err := os.CreateTemp(dir, "regolith-disk-*.bin")
	if err != nil {
		return nil, err
	}
	name := f.Name()
	defer os.Remove(name)
	tag := uint64(time.Now().UnixNano())
	size = size / blk * blk
	buf := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(tag, 7))
	for off := int64(0); off < size; off += int64(len(buf)) {
		n := min(int64(len(buf)), size-off)
		for i := int64(0); i < n; i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], rng.Uint64())
		}
		for b := int64(0); b < n; b += blk {
			binary.LittleEndian.PutUint64(buf[b:], uint64((off+b)/blk))
			binary.LittleEndian.PutUint64(buf[b+8:], tag)
		}
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	rd, direct, err := openForBench(name)
	if err != nil {
		return nil, err
	}
	defer rd.Close()

	// Ranges: each matrix read as its covering aligned range, laid out without overlap.
	var sizes []int64
	var expert int64
	for _, p := range parts {
		sizes = append(sizes, (p+blk-1)/blk*blk+blk) // a matrix may straddle one more block
		expert += p
	}
	per := sizes[0] + sizes[1] + sizes[2]
	nExp := size / per
	if nExp < int64(k) {
		return nil, fmt.Errorf("--disk-size %s holds fewer than %d experts of %s", units.FormatBytes(size), k, units.FormatBytes(per))
	}
	order := rand.New(rand.NewPCG(tag, 9)).Perm(int(nExp))
	type req struct{ off, n int64 }
	reqs := make(chan req)
	var wg sync.WaitGroup
	var batch sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := alignedBuf(int(sizes[0] + sizes[1] + sizes[2]))
			for q := range reqs {
				p := b[:q.n]
				n, err := rd.ReadAt(p, q.off)
				if err == nil && int64(n) != q.n {
					err = fmt.Errorf("short read: %d of %d bytes at %d", n, q.n, q.off)
				}
				for o := int64(0); err == nil && o < q.n; o += blk {
					if binary.LittleEndian.Uint64(p[o:]) != uint64((q.off+o)/blk) || binary.LittleEndian.Uint64(p[o+8:]) != tag {
						err = fmt.Errorf("block at %d does not hold the bytes written", q.off+o)
					}
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
				batch.Done()
			}
		}()
	}
	res := &diskResult{Dir: dir, Direct: direct, FileBytes: size, ExpertBytes: expert, Threads: threads, BatchOf: k}
	var lat []float64
	io0, ioOK := procReadBytes()
	t0 := time.Now()
	for i := 0; i+k <= len(order); i += k {
		tb := time.Now()
		for _, x := range order[i : i+k] {
			off := int64(x) * per
			for _, s := range sizes {
				batch.Add(1)
				reqs <- req{off, s}
				off += s
				res.Reads++
				res.ReadBytes += s
			}
			res.Payload += expert
		}
		batch.Wait()
		lat = append(lat, time.Since(tb).Seconds())
		res.Batches++
	}
	res.Seconds = time.Since(t0).Seconds()
	res.DeviceRead = -1
	if io1, ok := procReadBytes(); ok && ioOK {
		res.DeviceRead = io1 - io0
		res.FromDevice = float64(res.DeviceRead) / float64(res.ReadBytes)
	}
	close(reqs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	sort.Float64s(lat)
	res.BatchP50Ms = 1e3 * lat[len(lat)/2]
	res.MBps = float64(res.Payload) / res.Seconds / 1e6
	res.DeviceMBps = float64(res.ReadBytes) / res.Seconds / 1e6
	res.ExpertMs = 1e3 * res.Seconds / float64(res.Batches*int64(k))
	return res, nil
}

func alignedBuf(n int) []byte {
	b := make([]byte, n+4096)
	off := 0
	if r := int(uintptrOfSlice(b) % 4096); r != 0 {
		off = 4096 - r
	}
	return b[off : off+n]
}
