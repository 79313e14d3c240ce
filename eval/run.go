package eval

import (
	"fmt"

	"github.com/regolith/regolith/model"
)

// Logits runs a window through a session from an empty context, teacher-forced in chunks of
// at most chunk tokens, and returns the logits of every position but the last
// ([len(tokens)−1 rows × vocab]) in buf, grown as needed.
func Logits(s *model.Session, tokens []int32, chunk int, vocab int, buf []float32) ([]float32, error) {
	if chunk <= 0 {
		chunk = 512
	}
	rows := len(tokens) - 1
	if rows < 1 {
		return buf[:0], fmt.Errorf("eval: a window needs at least 2 tokens")
	}
	if cap(buf) < rows*vocab {
		buf = make([]float32, rows*vocab)
	}
	buf = buf[:rows*vocab]
	s.Truncate(0)
	// The last token's logits predict nothing: it is not run.
	for i := 0; i < rows; i += chunk {
		j := min(i+chunk, rows)
		out, err := s.Forward(tokens[i:j], true)
		if err != nil {
			return buf, err
		}
		if len(out) != (j-i)*vocab {
			return buf, fmt.Errorf("eval: %d logits for %d tokens of a %d-token vocabulary", len(out), j-i, vocab)
		}
		copy(buf[i*vocab:], out)
	}
	return buf, nil
}

// CompareWindow compares a window's reference and test logits (rows predicting tokens
// 1…n−1) and adds each position to acc.
func CompareWindow(acc *Accumulator, c *Comparer, w Window, ref, test []float32, vocab int) {
	for i := 0; i+1 < len(w.Tokens); i++ {
		p := c.Compare(ref[i*vocab:(i+1)*vocab], test[i*vocab:(i+1)*vocab], w.Tokens[i+1])
		acc.Add(w.Doc, w.Start+i, p)
	}
}
