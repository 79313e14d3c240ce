package trace

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/regolith/regolith/model"
)

// Recorder writes a trace of a session's routing. It is a model.RouteObserver (pass it as
// model.Options.Observer) and a model.ChunkSizer; it only reads what the model shows it, so
// recording changes nothing about the output. Wrap the session's expert source with Wrap
// so that the recorder hears of every chunk; without it, chunks are found from the order of
// the routing calls (layer 0 of a chunk routes all its tokens before layer 1), which needs
// a model of two layers or more.
//
// Call BeginRequest before each request (turn) to mark its prompt length; without it a
// request starts wherever the session's position does not continue the last chunk, and
// chunks of more than one token count as prompt. Close finishes the trace. Errors (calls out
// of order, a write that failed) are kept and returned by Close; the recorder ignores
// further calls after one.
type Recorder struct {
	w   *bufio.Writer
	h   Header
	idw int
	err error

	// The chunk being recorded.
	inChunk  bool
	layer    int // layer of the last entry
	pos0     int // position of the chunk's first token
	tokens   int // T, known once layer 0 is done (0 before)
	count    int // entries of the current layer so far
	newChunk bool
	layer0   []byte // layer 0's entries, written once T is known

	// The request.
	reqPending bool
	reqPrompt  int // prompt tokens of the current request (0: unknown)
	reqPos     int // position of the request's first token (-1: not yet seen)
	nextPos    int // position after the last chunk
	nTok, nCh  uint64
	nReq       uint64
	order      []int
	entry      []byte
}

// NewRecorder writes the header to w and returns a recorder for h's model.
func NewRecorder(w io.Writer, h Header) (*Recorder, error) {
	if err := h.validate(); err != nil {
		return nil, err
	}
	r := &Recorder{w: bufio.NewWriterSize(w, 1<<20), h: h, idw: h.idWidth(), reqPos: -1, nextPos: -1}
	r.h.ExpertBytes = append([]int64(nil), h.ExpertBytes...)
	if _, err := r.w.Write(h.encode()); err != nil {
		return nil, err
	}
	r.order = make([]int, h.NExpert)
	r.entry = make([]byte, h.entryBytes())
	return r, nil
}

// Header is the header the recorder writes.
func (r *Recorder) Header() Header { return r.h }

// BeginRequest marks the start of a request (a turn) whose prompt has the given number of
// tokens; its first promptTokens positions are prompt, later chunks decode steps.
func (r *Recorder) BeginRequest(promptTokens int) {
	if r.err != nil {
		return
	}
	r.finishChunk()
	r.reqPending, r.reqPrompt, r.reqPos = true, max(0, promptTokens), -1
}

// BeginChunk tells the recorder that the next routing calls belong to a new chunk of n tokens
// (model.Session calls it on its expert source; see Wrap).
func (r *Recorder) BeginChunk(n int) {
	if r.err != nil {
		return
	}
	r.finishChunk()
	r.newChunk = true
}

func (r *Recorder) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("trace: "+format, a...)
	}
}

// Routed records one token's routing at one layer.
func (r *Recorder) Routed(layer, pos int, logits []float32, chosen []int32, _ []float32) {
	if r.err != nil {
		return
	}
	h := &r.h
	if layer < 0 || layer >= h.NLayer || len(logits) != h.NExpert || len(chosen) != h.K || pos < 0 {
		r.fail("routing call for layer %d with %d logits and %d chosen does not fit the model (%d layers, %d experts, k %d)",
			layer, len(logits), len(chosen), h.NLayer, h.NExpert, h.K)
		return
	}
	if layer == 0 && (!r.inChunk || r.newChunk || r.layer != 0 || pos != r.pos0+r.count) {
		r.finishChunk()
		if r.err != nil {
			return
		}
		r.inChunk, r.newChunk, r.layer, r.pos0, r.tokens, r.count = true, false, 0, pos, 0, 0
		r.layer0 = r.layer0[:0]
	}
	if !r.inChunk {
		r.fail("layer %d routed before layer 0 of a chunk", layer)
		return
	}
	switch {
	case layer == r.layer:
		if r.tokens > 0 && r.count >= r.tokens {
			r.fail("layer %d routed %d tokens in a chunk of %d", layer, r.count+1, r.tokens)
			return
		}
	case layer == r.layer+1:
		if r.layer == 0 {
			r.tokens = r.count
			r.writeChunkHead()
		}
		if r.count != r.tokens {
			r.fail("layer %d routed %d of the chunk's %d tokens", r.layer, r.count, r.tokens)
			return
		}
		r.layer, r.count = layer, 0
	default:
		r.fail("layer %d routed after layer %d (layers must come in order)", layer, r.layer)
		return
	}
	if pos != r.pos0+r.count {
		r.fail("layer %d: token at position %d, expected %d", layer, pos, r.pos0+r.count)
		return
	}
	e := r.encodeEntry(logits, chosen)
	if r.err != nil {
		return
	}
	if layer == 0 {
		r.layer0 = append(r.layer0, e...)
	} else if _, err := r.w.Write(e); err != nil {
		r.err = err
		return
	}
	r.count++
}

func (r *Recorder) encodeEntry(logits []float32, chosen []int32) []byte {
	h := &r.h
	o := r.order[:h.NExpert]
	for i := range o {
		o[i] = i
	}
	sort.Slice(o, func(a, b int) bool { return lessCand(logits[o[a]], logits[o[b]], o[a], o[b]) })
	b := r.entry[:0]
	putID := func(id int) {
		if r.idw == 1 {
			b = append(b, byte(id))
		} else {
			b = binary.LittleEndian.AppendUint16(b, uint16(id))
		}
	}
	for _, id := range o[:h.TopN] {
		putID(id)
	}
	for _, id := range o[:h.TopN] {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(logits[id]))
	}
	for _, id := range chosen {
		if id < 0 || int(id) >= h.NExpert {
			r.fail("chosen expert %d of %d", id, h.NExpert)
			return nil
		}
		putID(int(id))
	}
	r.entry = b
	return b
}

// writeChunkHead writes the request marker (when one is due) and the chunk's header and
// layer 0, once the chunk's size is known.
func (r *Recorder) writeChunkHead() {
	T := r.tokens
	if T == 0 {
		r.fail("empty chunk")
		return
	}
	if !r.reqPending && r.nextPos >= 0 && r.pos0 != r.nextPos {
		// The session was truncated or replaced: a new request.
		r.reqPending, r.reqPrompt, r.reqPos = true, 0, -1
	}
	if r.nReq == 0 {
		r.reqPending = true
	}
	if r.reqPending {
		var b [5]byte
		b[0] = tagRequest
		binary.LittleEndian.PutUint32(b[1:], uint32(r.reqPrompt))
		r.w.Write(b[:])
		r.reqPending, r.reqPos = false, r.pos0
		r.nReq++
	}
	kind := byte(Prompt)
	if r.reqPrompt > 0 {
		if r.pos0+T > r.reqPos+r.reqPrompt {
			kind = Decode
		}
	} else if T == 1 {
		kind = Decode
	}
	var b [10]byte
	b[0] = tagChunk
	b[1] = kind
	binary.LittleEndian.PutUint32(b[2:], uint32(r.pos0))
	binary.LittleEndian.PutUint32(b[6:], uint32(T))
	r.w.Write(b[:])
	if _, err := r.w.Write(r.layer0); err != nil {
		r.err = err
	}
	r.nTok += uint64(T)
	r.nCh++
	r.nextPos = r.pos0 + T
}

// finishChunk completes the chunk in progress, if any.
func (r *Recorder) finishChunk() {
	if !r.inChunk || r.err != nil {
		return
	}
	if r.layer == 0 {
		r.tokens = r.count
		r.writeChunkHead()
	}
	if r.layer != r.h.NLayer-1 || r.count != r.tokens {
		r.fail("a chunk stopped at layer %d after %d of its %d tokens (did a forward pass fail?)", r.layer, r.count, r.tokens)
	}
	r.inChunk = false
}

// Close finishes the trace (the end record) and flushes it; it does not close the writer
// it was made with. It returns the first error the recorder met.
func (r *Recorder) Close() error {
	if r.err == nil {
		r.finishChunk()
	}
	if r.err == nil {
		var b [25]byte
		b[0] = tagEnd
		binary.LittleEndian.PutUint64(b[1:], r.nTok)
		binary.LittleEndian.PutUint64(b[9:], r.nCh)
		binary.LittleEndian.PutUint64(b[17:], r.nReq)
		r.w.Write(b[:])
		r.err = r.w.Flush()
		if r.err == nil {
			r.err = errClosed
		}
	}
	if r.err == errClosed {
		return nil
	}
	return r.err
}

var errClosed = fmt.Errorf("trace: the recorder is closed")

// Err is the first error the recorder met (nil while all is well; nil after a clean Close).
func (r *Recorder) Err() error {
	if r.err == errClosed {
		return nil
	}
	return r.err
}

// Wrap returns src (not nil: model.NewResident for the memory map) as an expert source that
// also tells the recorder where every chunk starts.
func (r *Recorder) Wrap(src model.ExpertSource) model.ExpertSource {
	return &wrapped{src, r}
}

type wrapped struct {
	model.ExpertSource
	r *Recorder
}

func (w *wrapped) BeginChunk(n int) {
	w.r.BeginChunk(n)
	if cs, ok := w.ExpertSource.(model.ChunkSizer); ok {
		cs.BeginChunk(n)
	}
}
