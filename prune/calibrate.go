package prune

import (
	"fmt"
	"math/rand/v2"

	"github.com/regolith/regolith/eval"
	"github.com/regolith/regolith/model"
)

// Source is one calibration source's documents.
type Source struct {
	Name string
	Docs []eval.Document
}

// ShuffleSeed orders each source's documents (a fixed permutation, so the same corpus and
// budget give the same calibration set) before the budget cuts them.
const ShuffleSeed = 1

// BalancedWindows takes the same number of tokens from every source (balanced by tokens, not
// characters): tokens/len(sources) each, or as many as the smallest source holds if that is
// fewer. Each source's documents are shuffled with ShuffleSeed, tokenized (no special-token
// parsing), cut to their first maxDocTokens (0: whole) and into windows of ctx tokens. It
// returns the windows per source and the tokens each contributes.
func BalancedWindows(enc eval.Encoder, sources []Source, tokens, ctx, maxDocTokens int) ([][]eval.Window, int, error) {
	if len(sources) == 0 || tokens <= 0 {
		return nil, 0, fmt.Errorf("prune: no sources or no token budget")
	}
	share := tokens / len(sources)
	ws := make([][]eval.Window, len(sources))
	per := share
	for i, s := range sources {
		docs := append([]eval.Document(nil), s.Docs...)
		r := rand.New(rand.NewPCG(ShuffleSeed, uint64(i)))
		r.Shuffle(len(docs), func(a, b int) { docs[a], docs[b] = docs[b], docs[a] })
		ws[i] = eval.Windows(enc, docs, ctx, maxDocTokens, share)
		n := count(ws[i])
		if n < per {
			per = n
		}
	}
	if per < 2 {
		return nil, 0, fmt.Errorf("prune: a source has no tokens")
	}
	for i := range ws {
		ws[i] = trim(ws[i], per)
	}
	return ws, per, nil
}

func count(ws []eval.Window) int {
	n := 0
	for _, w := range ws {
		n += len(w.Tokens)
	}
	return n
}

func trim(ws []eval.Window, n int) []eval.Window {
	var out []eval.Window
	for _, w := range ws {
		if n < 2 {
			break
		}
		if len(w.Tokens) > n {
			w.Tokens = w.Tokens[:n]
		}
		n -= len(w.Tokens)
		out = append(out, w)
	}
	return out
}

// Calibrate runs every window through the model (each from an empty context, in chunks of
// chunk tokens) and accumulates the saliency of every expert.
func Calibrate(m *model.Model, sources []Source, windows [][]eval.Window, chunk, threads int, progress func(done, total int)) (*Saliency, error) {
	c := m.Cfg
	sal := NewSaliency(c.NLayer, c.NExpert, c.NExpertUsed)
	maxW := 2
	total := 0
	for _, ws := range windows {
		for _, w := range ws {
			maxW = max(maxW, len(w.Tokens))
			total += len(w.Tokens)
		}
	}
	s, err := model.NewSession(m, model.Options{Ctx: maxW, Threads: threads, Observer: sal})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if chunk <= 0 {
		chunk = 512
	}
	done := 0
	for i, ws := range windows {
		n := 0
		for _, w := range ws {
			s.Truncate(0)
			for j := 0; j < len(w.Tokens); j += chunk {
				if _, err := s.Forward(w.Tokens[j:min(j+chunk, len(w.Tokens))], false); err != nil {
					return nil, err
				}
			}
			n += len(w.Tokens)
			done += len(w.Tokens)
			if progress != nil {
				progress(done, total)
			}
		}
		sal.Sources = append(sal.Sources, SourceCount{Name: sources[i].Name, Tokens: int64(n)})
		sal.Tokens += int64(n)
	}
	return sal, nil
}
