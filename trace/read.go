package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Trace is a trace held in memory, token-major within each layer.
type Trace struct {
	Header
	Requests []Request
	Chunks   []Chunk
	Tokens   int // tokens of all chunks
	// Per layer, per token (in trace order): TopN candidate ids and logits (sorted by
	// logit descending, ties by id), and the K chosen experts in rank order.
	Cand   [][]uint16  // [layer][token·TopN + j]
	Logit  [][]float32 // [layer][token·TopN + j]
	Chosen [][]uint16  // [layer][token·K + j]

	probCache
}

// Request is one request (turn).
type Request struct {
	PromptTokens int // 0: not known
	FirstChunk   int
}

// Chunk is one forward pass.
type Chunk struct {
	Kind    int // Prompt or Decode
	Pos     int // position of its first token in the session
	Start   int // index of its first token in the trace
	Tokens  int
	Request int
}

// Open reads and validates a trace file.
func Open(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	t, err := Read(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Read reads a trace of size bytes from r. It checks the header, walks every record checking
// each size against what is left of the file, and only then allocates the arrays (bounded by
// the file's size); then it reads the entries, checking every id and the order of every
// token's logits. Malformed input gives an error, never a panic or an unbounded allocation.
func Read(r io.ReaderAt, size int64) (*Trace, error) {
	if size < 0 {
		return nil, errors.New("trace: negative size")
	}
	h, off, err := decodeHeader(r, size)
	if err != nil {
		return nil, err
	}
	t := &Trace{Header: *h}
	entry := h.entryBytes()
	perToken := entry * int64(h.NLayer)

	// Pass 1: the records' structure.
	type span struct{ off, tokens int64 }
	var spans []span
	var nTok int64
	le := binary.LittleEndian
	var small [25]byte
	readAt := func(b []byte, at int64, what string) error {
		if at+int64(len(b)) > size {
			return fmt.Errorf("trace: %s at offset %d runs past the end of the %d-byte file: %w", what, at, size, io.ErrUnexpectedEOF)
		}
		if _, err := r.ReadAt(b, at); err != nil {
			return fmt.Errorf("trace: reading %s at offset %d: %w", what, at, err)
		}
		return nil
	}
	ended := false
	for off < size {
		if err := readAt(small[:1], off, "a record tag"); err != nil {
			return nil, err
		}
		switch small[0] {
		case tagRequest:
			if err := readAt(small[:5], off, "a request record"); err != nil {
				return nil, err
			}
			pt := le.Uint32(small[1:])
			if pt > 1<<31-1 {
				return nil, fmt.Errorf("trace: request of %d prompt tokens", pt)
			}
			t.Requests = append(t.Requests, Request{PromptTokens: int(pt), FirstChunk: len(t.Chunks)})
			if int64(len(t.Requests)) > size {
				return nil, errors.New("trace: more requests than bytes")
			}
			off += 5
		case tagChunk:
			if err := readAt(small[:10], off, "a chunk header"); err != nil {
				return nil, err
			}
			if len(t.Requests) == 0 {
				return nil, fmt.Errorf("trace: chunk at offset %d before any request", off)
			}
			kind, pos, T := int(small[1]), int64(le.Uint32(small[2:])), int64(le.Uint32(small[6:]))
			if kind != Prompt && kind != Decode {
				return nil, fmt.Errorf("trace: chunk at offset %d has unknown kind %d", off, kind)
			}
			if T == 0 {
				return nil, fmt.Errorf("trace: empty chunk at offset %d", off)
			}
			if T > (size-off-10)/perToken {
				return nil, fmt.Errorf("trace: chunk at offset %d of %d tokens needs %d bytes; %d are left: %w",
					off, T, T*perToken, size-off-10, io.ErrUnexpectedEOF)
			}
			if pos+T > 1<<31 {
				return nil, fmt.Errorf("trace: chunk at offset %d ends at position %d", off, pos+T)
			}
			t.Chunks = append(t.Chunks, Chunk{Kind: kind, Pos: int(pos), Start: int(nTok), Tokens: int(T), Request: len(t.Requests) - 1})
			spans = append(spans, span{off + 10, T})
			nTok += T
			off += 10 + T*perToken
		case tagEnd:
			if err := readAt(small[:25], off, "the end record"); err != nil {
				return nil, err
			}
			tok, ch, req := le.Uint64(small[1:]), le.Uint64(small[9:]), le.Uint64(small[17:])
			if tok != uint64(nTok) || ch != uint64(len(t.Chunks)) || req != uint64(len(t.Requests)) {
				return nil, fmt.Errorf("trace: the end record counts %d tokens, %d chunks, %d requests; the file holds %d, %d, %d",
					tok, ch, req, nTok, len(t.Chunks), len(t.Requests))
			}
			off += 25
			if off != size {
				return nil, fmt.Errorf("trace: %d bytes after the end record", size-off)
			}
			ended = true
		default:
			return nil, fmt.Errorf("trace: unknown record tag %#x at offset %d", small[0], off)
		}
	}
	if !ended {
		return nil, fmt.Errorf("trace: no end record (the recording was cut short): %w", io.ErrUnexpectedEOF)
	}

	// Pass 2: the entries. nTok·perToken ≤ size, so these are bounded by the file.
	t.Tokens = int(nTok)
	L, N, K := h.NLayer, h.TopN, h.K
	t.Cand, t.Logit, t.Chosen = make([][]uint16, L), make([][]float32, L), make([][]uint16, L)
	for l := 0; l < L; l++ {
		t.Cand[l] = make([]uint16, t.Tokens*N)
		t.Logit[l] = make([]float32, t.Tokens*N)
		t.Chosen[l] = make([]uint16, t.Tokens*K)
	}
	idw := h.idWidth()
	buf := make([]byte, entry)
	seen := make([]uint32, h.NExpert)
	var stamp uint32
	id := func(b []byte, i int) int {
		if idw == 1 {
			return int(b[i])
		}
		return int(le.Uint16(b[2*i:]))
	}
	for ci, sp := range spans {
		br := bufio.NewReaderSize(io.NewSectionReader(r, sp.off, sp.tokens*perToken), 1<<20)
		c := t.Chunks[ci]
		for l := 0; l < L; l++ {
			for j := 0; j < c.Tokens; j++ {
				if _, err := io.ReadFull(br, buf); err != nil {
					return nil, fmt.Errorf("trace: chunk %d: %w", ci, err)
				}
				tok := c.Start + j
				cand, logit, chosen := t.Cand[l][tok*N:(tok+1)*N], t.Logit[l][tok*N:(tok+1)*N], t.Chosen[l][tok*K:(tok+1)*K]
				stamp++
				for i := 0; i < N; i++ {
					e := id(buf, i)
					if e >= h.NExpert {
						return nil, fmt.Errorf("trace: chunk %d layer %d token %d: candidate expert %d of %d", ci, l, j, e, h.NExpert)
					}
					if seen[e] == stamp {
						return nil, fmt.Errorf("trace: chunk %d layer %d token %d: candidate expert %d listed twice", ci, l, j, e)
					}
					seen[e] = stamp
					cand[i] = uint16(e)
				}
				lb := buf[N*idw:]
				for i := 0; i < N; i++ {
					z := math.Float32frombits(le.Uint32(lb[4*i:]))
					if math.IsNaN(float64(z)) || math.IsInf(float64(z), 0) {
						return nil, fmt.Errorf("trace: chunk %d layer %d token %d: logit %v", ci, l, j, z)
					}
					if i > 0 && (z > logit[i-1] || (z == logit[i-1] && cand[i] < cand[i-1])) {
						return nil, fmt.Errorf("trace: chunk %d layer %d token %d: candidates not sorted by logit (ties by id)", ci, l, j)
					}
					logit[i] = z
				}
				kb := buf[N*(idw+4):]
				stamp++
				for i := 0; i < K; i++ {
					e := id(kb, i)
					if e >= h.NExpert {
						return nil, fmt.Errorf("trace: chunk %d layer %d token %d: chosen expert %d of %d", ci, l, j, e, h.NExpert)
					}
					if seen[e] == stamp {
						return nil, fmt.Errorf("trace: chunk %d layer %d token %d: expert %d chosen twice", ci, l, j, e)
					}
					seen[e] = stamp
					chosen[i] = uint16(e)
				}
			}
		}
	}
	return t, nil
}

// Encode writes t in the trace format (the recorder's output for the same routing).
func (t *Trace) Encode(w io.Writer) error {
	if err := t.Header.validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(t.Header.encode())
	le := binary.LittleEndian
	idw := t.idWidth()
	N, K := t.TopN, t.K
	putID := func(b []byte, v uint16) []byte {
		if idw == 1 {
			return append(b, byte(v))
		}
		return le.AppendUint16(b, v)
	}
	var b []byte
	req := -1
	for _, c := range t.Chunks {
		for req < c.Request {
			req++
			b = append(b[:0], tagRequest)
			b = le.AppendUint32(b, uint32(t.Requests[req].PromptTokens))
			bw.Write(b)
		}
		b = append(b[:0], tagChunk, byte(c.Kind))
		b = le.AppendUint32(b, uint32(c.Pos))
		b = le.AppendUint32(b, uint32(c.Tokens))
		bw.Write(b)
		for l := 0; l < t.NLayer; l++ {
			for tok := c.Start; tok < c.Start+c.Tokens; tok++ {
				b = b[:0]
				for _, v := range t.Cand[l][tok*N : (tok+1)*N] {
					b = putID(b, v)
				}
				for _, z := range t.Logit[l][tok*N : (tok+1)*N] {
					b = le.AppendUint32(b, math.Float32bits(z))
				}
				for _, v := range t.Chosen[l][tok*K : (tok+1)*K] {
					b = putID(b, v)
				}
				bw.Write(b)
			}
		}
	}
	for req < len(t.Requests)-1 {
		req++
		b = append(b[:0], tagRequest)
		b = le.AppendUint32(b, uint32(t.Requests[req].PromptTokens))
		bw.Write(b)
	}
	b = append(b[:0], tagEnd)
	b = le.AppendUint64(b, uint64(t.Tokens))
	b = le.AppendUint64(b, uint64(len(t.Chunks)))
	b = le.AppendUint64(b, uint64(len(t.Requests)))
	bw.Write(b)
	return bw.Flush()
}
