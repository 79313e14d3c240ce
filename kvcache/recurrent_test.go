package kvcache

import "testing"

func TestRecurrentCheckpointPolicy(t *testing.T) {
	c, err := New(1, 64, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.AttachRecurrent(2, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	r.Every, r.MaxCheckpoints = 4, 3
	step := func(pos, tokens int) {
		r.N = -1
		for l := range r.Conv {
			r.Conv[l][0] = float32(pos)
			r.SSM[l][3] = float32(-pos)
		}
		c.N = pos
		r.Advanced(pos, tokens)
	}
	step(5, 5) // prompt chunk: checkpoint
	for p := 6; p <= 14; p++ {
		step(p, 1) // decode: checkpoints at 9 and 13
	}
	if got := r.Checkpoints(); len(got) != 3 || got[0] != 5 || got[1] != 9 || got[2] != 13 {
		t.Fatalf("checkpoints %v", got)
	}
	step(20, 6) // full: the oldest but the first (9) goes
	if got := r.Checkpoints(); len(got) != 3 || got[0] != 5 || got[1] != 13 || got[2] != 20 {
		t.Fatalf("checkpoints %v", got)
	}
	c.Truncate(16)
	if c.N != 13 || r.N != 13 || r.Conv[1][0] != 13 || r.SSM[0][3] != -13 {
		t.Fatalf("after Truncate(16): N %d, state %v %v", c.N, r.Conv[1][0], r.SSM[0][3])
	}
	if got := r.Checkpoints(); len(got) != 2 {
		t.Fatalf("checkpoints after rollback %v", got)
	}
	c.Truncate(13) // at a checkpoint: nothing to do
	if c.N != 13 {
		t.Fatal(c.N)
	}
	c.Truncate(4)
	if c.N != 0 || r.N != 0 || r.Conv[0][0] != 0 || len(r.Checkpoints()) != 0 {
		t.Fatalf("below the first checkpoint: N %d", c.N)
	}
}
