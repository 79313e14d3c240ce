package eval

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Document is one text of a corpus.
type Document struct {
	Name string
	Text string
}

// ReadCorpus reads documents from files and directories. A directory contributes every
// regular file under it (recursively, in sorted path order; names starting with "." are
// skipped). A file ending in .gz is gunzipped. A file holding NUL bytes is a stream of
// documents separated by NUL (as tools/corpus writes its shards): each non-empty part is a
// document named FILE#i. Empty documents are skipped.
func ReadCorpus(paths ...string) ([]Document, error) {
	var docs []Document
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		var files []string
		if fi.IsDir() {
			err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if path != p && strings.HasPrefix(d.Name(), ".") {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if d.Type().IsRegular() {
					files = append(files, path)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			sort.Strings(files)
		} else {
			files = []string{p}
		}
		for _, f := range files {
			b, err := readFile(f)
			if err != nil {
				return nil, err
			}
			if bytes.IndexByte(b, 0) < 0 {
				if len(b) > 0 {
					docs = append(docs, Document{Name: f, Text: string(b)})
				}
				continue
			}
			for i, part := range bytes.Split(b, []byte{0}) {
				if len(part) > 0 {
					docs = append(docs, Document{Name: f + "#" + strconv.Itoa(i), Text: string(part)})
				}
			}
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("eval: no documents in %s", strings.Join(paths, ", "))
	}
	return docs, nil
}

func readFile(path string) ([]byte, error) {
	if !strings.HasSuffix(path, ".gz") {
		return os.ReadFile(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Window is a run of one document's tokens evaluated from an empty context.
type Window struct {
	Doc    string
	Start  int // index of Tokens[0] in the document's tokens
	Tokens []int32
}

// Encoder turns text into token ids (no special tokens parsed; BOS only where the
// tokenizer adds one).
type Encoder interface {
	Encode(text string, addSpecial, parseSpecial bool) []int32
}

// Windows tokenizes the documents (special-token text is not parsed; addSpecial as the
// model's tokenizer says, which adds BOS only if the model adds one) and cuts each into
// windows of at most ctx tokens, each evaluated from an empty context. maxDocTokens > 0
// keeps only a document's first maxDocTokens tokens; maxTokens > 0 stops once the windows
// hold that many tokens. Windows shorter than 2 tokens (nothing to predict) are dropped.
func Windows(enc Encoder, docs []Document, ctx, maxDocTokens, maxTokens int) []Window {
	var ws []Window
	total := 0
	for _, d := range docs {
		ids := enc.Encode(d.Text, true, false)
		if maxDocTokens > 0 && len(ids) > maxDocTokens {
			ids = ids[:maxDocTokens]
		}
		for s := 0; s < len(ids); s += ctx {
			w := ids[s:min(s+ctx, len(ids))]
			if maxTokens > 0 && total+len(w) > maxTokens {
				w = w[:maxTokens-total]
			}
			if len(w) < 2 {
				break
			}
			ws = append(ws, Window{Doc: d.Name, Start: s, Tokens: w})
			total += len(w)
		}
		if maxTokens > 0 && total >= maxTokens {
			break
		}
	}
	return ws
}
