package model

import (
	"math"
	"testing"
)

// glibc 2.36's cosf/sinf (x86-64, FMA) on angles where they are not the correctly rounded
// result, from both range reductions. The port was also checked against glibc on 2.1
// million angles: every RoPE angle of 8,192 positions × 16 frequencies and random floats.
func TestSinfCosfGlibc(t *testing.T) {
	for _, c := range [][3]uint32{
		{0x3f321979, 0x3f4481ba, 0x3f241396}, // position 22, frequency 4: a RoPE angle
		{0x408e432a, 0xbe86eebc, 0xbf76f333},
		{0x3feff757, 0xbe993b68, 0x3f744427},
		{0x409f5577, 0x3e86fbd2, 0xbf76f169},
		{0x41512956, 0x3f5fe4ac, 0x3ef841a4},
		{0x3e328278, 0x3f7c1eb7, 0x3e319b5d},
		{0x43030000, 0x3f158eb5, 0xbf4fc53d},
		{0x43410000, 0xbe536859, 0xbf7a7c21},
		{0x43430000, 0x3f79c269, 0x3e60b8ba},
		{0x43870000, 0x3f7c0075, 0xbe344564},
		{0x4300321c, 0xbf51e501, 0x3f128fc0},
		{0x43ab8000, 0xbf5805c1, 0xbf095e82},
	} {
		for _, sign := range []float32{1, -1} {
			x := sign * math.Float32frombits(c[0])
			wantC, wantS := math.Float32frombits(c[1]), sign*math.Float32frombits(c[2])
			if got := cosf(x); got != wantC {
				t.Errorf("cosf(%v) = %v, glibc %v", x, got, wantC)
			}
			if got := sinf(x); got != wantS {
				t.Errorf("sinf(%v) = %v, glibc %v", x, got, wantS)
			}
		}
	}
	if sinf(0) != 0 || cosf(0) != 1 || sinf(1e-5) != 1e-5 {
		t.Error("tiny angles")
	}
}
