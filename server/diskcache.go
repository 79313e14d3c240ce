package server

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/regolith/regolith/kvcache"
)

// fileExt names the disk tier's session files.
const fileExt = ".rgkv"

// diskCache is the disk tier of the prompt cache: one session file per saved state, indexed
// in memory by its tokens (headers only), evicted least-recently-used beyond a byte cap.
type diskCache struct {
	dir   string
	limit int64
	fp    kvcache.Fingerprint
	log   io.Writer

	mu      sync.Mutex
	entries map[string]*diskEntry // by file name
	bytes   int64
	clock   int64
}

type diskEntry struct {
	name   string
	tokens []int32
	states []int // positions with a saved recurrent state (qwen3next), or nil
	size   int64
	used   int64 // LRU clock
}

// usable is how many of the first m tokens restoring e keeps: m, or for a file with
// recurrent state the latest saved state at or before m (the state is valid only at its
// own position, see kvcache.Cache.Resumable).
func (e *diskEntry) usable(m int) int {
	if e.states == nil {
		return m
	}
	u := 0
	for _, p := range e.states {
		if p <= m {
			u = p
		}
	}
	return u
}

// openDiskCache indexes dir: it reads every session file's header (not its payload), drops
// files of other models from the index (leaving them on disk), and removes corrupt or
// partial files and leftover temporary files, saying so.
func openDiskCache(dir string, limit int64, fp kvcache.Fingerprint, log io.Writer) (*diskCache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("server: cache directory: %w", err)
	}
	d := &diskCache{dir: dir, limit: limit, fp: fp, log: log, entries: map[string]*diskEntry{}}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("server: cache directory: %w", err)
	}
	type found struct {
		e     *diskEntry
		mtime time.Time
	}
	var all []found
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, name)
		if strings.HasPrefix(name, ".") && strings.Contains(name, fileExt+".tmp") {
			fmt.Fprintf(log, "server: prompt cache: removing %s (an interrupted write)\n", name)
			os.Remove(path)
			continue
		}
		if !strings.HasSuffix(name, fileExt) {
			continue
		}
		h, err := kvcache.ReadHeader(path)
		if err != nil {
			if kvcache.IsCorrupt(err) {
				fmt.Fprintf(log, "server: prompt cache: %v; removed\n", err)
				os.Remove(path)
			} else {
				fmt.Fprintf(log, "server: prompt cache: %v; skipped\n", err)
			}
			continue
		}
		if h.Fingerprint != fp {
			continue // another model's state
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		all = append(all, found{&diskEntry{name: name, tokens: h.Tokens, states: h.States, size: info.Size()}, info.ModTime()})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mtime.Before(all[j].mtime) })
	for _, f := range all {
		d.clock++
		f.e.used = d.clock
		d.entries[f.e.name] = f.e
		d.bytes += f.e.size
	}
	d.mu.Lock()
	d.evict()
	d.mu.Unlock()
	return d, nil
}

func (d *diskCache) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.entries)
}

func (d *diskCache) total() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bytes
}

// best is the file that lets a restore keep the longest prefix of prompt, at most limit
// tokens, and that length (for a file with recurrent state, its latest saved state inside
// the shared prefix).
func (d *diskCache) best(prompt []int32, limit int) (string, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var best *diskEntry
	n, bestL := 0, 0
	for _, e := range d.entries {
		// Ties go to the longer shared prefix (the file most like the prompt), then to the
		// most recently used.
		l := lcp(e.tokens, prompt)
		m := e.usable(min(l, limit))
		if m > n || (m == n && best != nil && m > 0 && (l > bestL || l == bestL && e.used > best.used)) {
			best, n, bestL = e, m, l
		}
	}
	if best == nil {
		return "", 0
	}
	return filepath.Join(d.dir, best.name), n
}

// touch marks a file used (in memory, and its mtime for the next start).
func (d *diskCache) touch(path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e := d.entries[filepath.Base(path)]; e != nil {
		d.clock++
		e.used = d.clock
		now := time.Now()
		os.Chtimes(path, now, now)
	}
}

// failed handles a file that could not be loaded: a corrupt one is reported and removed.
func (d *diskCache) failed(path string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.log, "server: prompt cache: %v; removed\n", err)
	if e := d.entries[filepath.Base(path)]; e != nil {
		d.bytes -= e.size
		delete(d.entries, e.name)
	}
	if kvcache.IsCorrupt(err) {
		os.Remove(path)
	}
}

func tokensName(tokens []int32) string {
	h := sha256.New()
	b := make([]byte, 4*len(tokens))
	for i, t := range tokens {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(t))
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)[:16]) + fileExt
}

// save writes the cache's state for tokens (which must end where the cache has a state, see
// kvcache.Cache.Resumable). A file with the same tokens is only touched; files whose tokens
// are a prefix of these are superseded (any prompt they match, the new one matches at
// least as far) and removed, a file with recurrent state only when the new file holds a
// state at its end.
func (d *diskCache) save(c *kvcache.Cache, tokens []int32) error {
	name := tokensName(tokens)
	path := filepath.Join(d.dir, name)
	d.mu.Lock()
	if e := d.entries[name]; e != nil && lcp(e.tokens, tokens) == len(tokens) && len(e.tokens) == len(tokens) {
		d.mu.Unlock()
		d.touch(path)
		return nil
	}
	d.mu.Unlock()
	if err := c.Save(path, d.fp, tokens); err != nil {
		return err
	}
	h, err := kvcache.ReadHeader(path)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.entries {
		if len(e.tokens) < len(tokens) && lcp(e.tokens, tokens) == len(e.tokens) &&
			(e.states == nil || slices.Contains(h.States, len(e.tokens))) {
			d.bytes -= e.size
			delete(d.entries, e.name)
			os.Remove(filepath.Join(d.dir, e.name))
		}
	}
	if old := d.entries[name]; old != nil {
		d.bytes -= old.size
	}
	d.clock++
	d.entries[name] = &diskEntry{name: name, tokens: h.Tokens, states: h.States, size: h.FileBytes(), used: d.clock}
	d.bytes += h.FileBytes()
	d.evict()
	return nil
}

// evict removes least-recently-used files until the tier fits its cap. d.mu is held.
func (d *diskCache) evict() {
	for d.bytes > d.limit && len(d.entries) > 0 {
		var lru *diskEntry
		for _, e := range d.entries {
			if lru == nil || e.used < lru.used {
				lru = e
			}
		}
		os.Remove(filepath.Join(d.dir, lru.name))
		d.bytes -= lru.size
		delete(d.entries, lru.name)
	}
}

// Slots: llama.cpp's /slots/{id}?action=save|restore and /slots/save, /slots/restore, with
// {"filename": "..."} naming a file in the cache directory's slots/ folder.

var slotName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (s *Server) slotPath(name string) (string, error) {
	if s.cfg.CacheDir == "" {
		return "", bad("filename", "slot files need the server to run with --cache-dir")
	}
	if !slotName.MatchString(name) || strings.Contains(name, "..") || !filepath.IsLocal(name) {
		return "", bad("filename", "filename must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit, without '..'")
	}
	dir := filepath.Join(s.cfg.CacheDir, "slots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

func (s *Server) handleSlot(w http.ResponseWriter, r *http.Request, action string) {
	var req struct {
		Filename string `json:"filename"`
	}
	if action != "save" && action != "restore" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "action", "action must be save or restore")
		return
	}
	if err := decodeBody(r, &req); err != nil {
		s.requestError(w, err)
		return
	}
	path, err := s.slotPath(req.Filename)
	if err != nil {
		s.requestError(w, err)
		return
	}
	release, err := s.acquire(r.Context())
	if err != nil {
		s.requestError(w, err)
		return
	}
	defer release()
	t0 := time.Now()
	switch action {
	case "save":
		// Session files hold prompt positions only (see flashRows), and end where a
		// recurrent state is (qwen3next).
		toks := s.cached[:s.sess.Cache().Resumable(s.canonical())]
		if err := s.sess.Cache().Save(path, s.fp, toks); err != nil {
			s.requestError(w, err)
			return
		}
		fi, _ := os.Stat(path)
		writeJSON(w, http.StatusOK, map[string]any{"id_slot": 0, "filename": req.Filename, "n_saved": len(toks),
			"n_written": fi.Size(), "timings": map[string]float64{"save_ms": ms(time.Since(t0))}})
	case "restore":
		if _, err := os.Stat(path); err != nil {
			writeError(w, http.StatusNotFound, "invalid_request_error", "filename", fmt.Sprintf("no slot file %q", req.Filename))
			return
		}
		toks, err := s.sess.Cache().Load(path, s.fp)
		if err != nil {
			s.setCached(nil, false)
			s.sess.Truncate(0)
			if kvcache.IsCorrupt(err) {
				fmt.Fprintf(s.log, "server: %v; removed\n", err)
				os.Remove(path)
			}
			writeError(w, http.StatusBadRequest, "invalid_request_error", "filename", err.Error())
			return
		}
		s.promptLen = len(toks)
		s.setCached(toks, true)
		fi, _ := os.Stat(path)
		writeJSON(w, http.StatusOK, map[string]any{"id_slot": 0, "filename": req.Filename, "n_restored": len(toks),
			"n_read": fi.Size(), "timings": map[string]float64{"restore_ms": ms(time.Since(t0))}})
	}
}
