package quant_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/regolith/regolith/quant"
)

// weightTypes are the weight formats regolith implements.
var weightTypes = []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0, quant.Q4_1,
	quant.Q5_0, quant.Q5_1, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
	quant.IQ4_NL, quant.IQ4_XS, quant.MXFP4, quant.Q2_0}

// q2_0Block builds a Q2_0 block from an fp16 scale and 16 code bytes.
func q2_0Block(d uint16, qs [16]byte) []byte {
	b := make([]byte, 18)
	binary.LittleEndian.PutUint16(b, d)
	copy(b[2:], qs[:])
	return b
}

// TestQ2_0Hand checks Q2_0 against blocks worked out by hand, including a negative scale.
func TestQ2_0Hand(t *testing.T) {
	var qs1, qs2 [16]byte
	qs1[0], qs1[1] = 0xE4, 0x1B // codes 0,1,2,3 then 3,2,1,0; the other bytes 0 (code 0 = −d)
	for i := range qs2 {
		qs2[i] = 0x55 // code 1 = 0
	}
	qs2[0] = 0xE4
	w := append(q2_0Block(0x3800, qs1), q2_0Block(0xB400, qs2)...) // d = 0.5, d = −0.25

	want := make([]float32, 128)
	copy(want, []float32{-0.5, 0, 0.5, 1, 1, 0.5, 0, -0.5})
	for i := 8; i < 64; i++ {
		want[i] = -0.5
	}
	// d = −0.25: codes 0..3 give 0.25, −0, −0.25, −0.5; code 1 everywhere else gives −0.
	negZero := float32(math.Copysign(0, -1))
	copy(want[64:], []float32{0.25, negZero, -0.25, -0.5})
	for i := 68; i < 128; i++ {
		want[i] = negZero
	}
	got := make([]float32, 128)
	if err := quant.DequantizeRow(quant.Q2_0, w, got); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Errorf("element %d = %g, want %g", i, got[i], want[i])
		}
	}

	// Activations: four Q8_0 blocks with d = 2 (0x4000) and every quant 1, so the dot product is
	// 2·Σw = 2·(1 + 1 − 28 − 0.5) = −53.
	a := make([]byte, 4*34)
	for k := 0; k < 4; k++ {
		binary.LittleEndian.PutUint16(a[34*k:], 0x4000)
		for j := 0; j < 32; j++ {
			a[34*k+2+j] = 1
		}
	}
	if got := quant.DotRef(quant.Q2_0, w, a, 128); got != -53 {
		t.Errorf("DotRef = %g, want -53", got)
	}
	if got := quant.Dot(quant.Q2_0, w, a, 128); got != -53 {
		t.Errorf("Dot = %g, want -53", got)
	}

	// Reference quantizer: amax = 2 gives d = 2 (0x4000) and q = round(x/2) + 1, halves away
	// from zero: 2→2, −2→0, 1→2, −1→0, then 0.5, −0.5, 0.9, −0.9 and zeros → 1.
	x := make([]float32, 64)
	copy(x, []float32{2, -2, 1, -1, 0.5, -0.5, 0.9, -0.9})
	q := make([]byte, 18)
	if err := quant.QuantizeRow(quant.Q2_0, x, q); err != nil {
		t.Fatal(err)
	}
	wantQ := []byte{0x00, 0x40, 0x22, 0x55}
	for i := 4; i < 18; i++ {
		wantQ = append(wantQ, 0x55)
	}
	for i := range wantQ {
		if q[i] != wantQ[i] {
			t.Fatalf("QuantizeRow(Q2_0) = % x, want % x", q, wantQ)
		}
	}
}

// TestFP16 checks the conversions against an independent decoding and IEEE rounding rules.
func TestFP16(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		e, m := (h>>10)&31, h&1023
		if e == 31 && m != 0 {
			if f := quant.FP16ToFP32(uint16(h)); f == f {
				t.Fatalf("FP16ToFP32(%#x) = %g, want NaN", h, f)
			}
			continue
		}
		var want float64
		switch e {
		case 0:
			want = math.Ldexp(float64(m), -24)
		case 31:
			want = math.Inf(1)
		default:
			want = math.Ldexp(float64(1024+m), e-25)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		got := quant.FP16ToFP32(uint16(h))
		if float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
			t.Fatalf("FP16ToFP32(%#x) = %g, want %g", h, got, want)
		}
		if back := quant.FP32ToFP16(got); back != uint16(h) {
			t.Fatalf("FP32ToFP16(%g) = %#x, want %#x", got, back, h)
		}
		// The midpoint to the next half rounds to the even one; just above it rounds up.
		if h < 0x7BFF {
			lo, hi := float64(got), float64(quant.FP16ToFP32(uint16(h+1)))
			even := uint16(h)
			if h&1 == 1 {
				even = uint16(h + 1)
			}
			mid := float32((lo + hi) / 2)
			if got := quant.FP32ToFP16(mid); got != even {
				t.Fatalf("FP32ToFP16(%g) = %#x, want %#x (tie to even)", mid, got, even)
			}
			above := math.Nextafter32(mid, float32(math.Inf(1)))
			if got := quant.FP32ToFP16(above); got != uint16(h+1) {
				t.Fatalf("FP32ToFP16(%g) = %#x, want %#x", above, got, h+1)
			}
		}
	}
	for _, c := range []struct {
		f    float32
		want uint16
	}{{65519, 0x7BFF}, {65520, 0x7C00}, {1e10, 0x7C00}, {-1e10, 0xFC00}, {float32(math.NaN()), 0x7E00}, {1e-9, 0}} {
		if got := quant.FP32ToFP16(c.f); got != c.want {
			t.Errorf("FP32ToFP16(%g) = %#x, want %#x", c.f, got, c.want)
		}
	}
}

func TestBF16(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1, 0x3F80}, {1 + 1.0/256, 0x3F80}, {1 + 3.0/256, 0x3F82}, {1 + 1.0/256 + 1.0/65536, 0x3F81},
		{-2, 0xC000}, {float32(math.Inf(1)), 0x7F80},
	} {
		if got := quant.FP32ToBF16(c.f); got != c.want {
			t.Errorf("FP32ToBF16(%g) = %#x, want %#x", c.f, got, c.want)
		}
	}
	if got := quant.FP32ToBF16(math.Float32frombits(0x7F800001)); got != 0x7FC0 {
		t.Errorf("signalling NaN → %#x, want quiet 0x7fc0", got)
	}
	if got := quant.BF16ToFP32(0xC040); got != -3 {
		t.Errorf("BF16ToFP32(0xc040) = %g, want -3", got)
	}
}

// TestBadInput: wrong lengths and unsupported types give errors (or NaN from the dot
// products), never a panic.
func TestBadInput(t *testing.T) {
	f256 := make([]float32, 256)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"short src", quant.DequantizeRow(quant.Q4_K, make([]byte, 143), f256)},
		{"long src", quant.DequantizeRow(quant.Q4_K, make([]byte, 145), f256)},
		{"partial block", quant.DequantizeRow(quant.Q4_K, make([]byte, 144), make([]float32, 255))},
		{"unknown type", quant.DequantizeRow(quant.Type(99), nil, nil)},
		{"unsupported type", quant.DequantizeRow(quant.IQ2_XXS, make([]byte, 66), f256)},
		{"quantize short dst", quant.QuantizeRow(quant.Q8_0, f256, make([]byte, 271))},
		{"quantize partial block", quant.QuantizeRow(quant.Q2_0, make([]float32, 32), make([]byte, 18))},
		{"quantize unsupported", quant.QuantizeRow(quant.IQ2_XXS, f256, make([]byte, 66))},
		{"activations short", quant.QuantizeActivations(quant.Q4_K, f256, make([]byte, 291))},
		{"activations partial", quant.QuantizeActivations(quant.Q8_0, make([]float32, 31), make([]byte, 34))},
		{"activations no dot", quant.QuantizeActivations(quant.Q8_K, f256, make([]byte, 292))},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	w, a := make([]byte, 144), make([]byte, 292)
	for _, c := range []struct {
		name string
		t    quant.Type
		w, a []byte
		n    int
	}{
		{"short weights", quant.Q4_K, w[:143], a, 256},
		{"short activations", quant.Q4_K, w, a[:291], 256},
		{"wrong n", quant.Q4_K, w, a, 512},
		{"negative n", quant.Q4_K, w, a, -256},
		{"partial Q2_0 block", quant.Q2_0, make([]byte, 18), make([]byte, 34), 32},
		{"no dot product", quant.IQ2_XXS, make([]byte, 66), a, 256},
		{"unknown type", quant.Type(1000), w, a, 256},
	} {
		if got := quant.DotRef(c.t, c.w, c.a, c.n); !math.IsNaN(float64(got)) {
			t.Errorf("DotRef %s = %g, want NaN", c.name, got)
		}
		if got := quant.Dot(c.t, c.w, c.a, c.n); !math.IsNaN(float64(got)) {
			t.Errorf("Dot %s = %g, want NaN", c.name, got)
		}
	}
	if got := quant.Dot(quant.Q4_K, nil, nil, 0); got != 0 {
		t.Errorf("empty Dot = %g", got)
	}
	for _, c := range []struct {
		t       quant.Type
		n, want int
	}{{quant.Q4_K, 256, 292}, {quant.Q4_K, 100, -1}, {quant.Q2_0, 64, 68}, {quant.Q4_1, 32, 36},
		{quant.F16, 3, 6}, {quant.MXFP4, 64, 68}, {quant.IQ4_XS, 512, 584}} {
		if got := quant.ActivationBytes(c.t, c.n); got != c.want {
			t.Errorf("ActivationBytes(%s, %d) = %d, want %d", c.t, c.n, got, c.want)
		}
	}
}

const benchN = 4096

func benchRows(b *testing.B, t quant.Type) (w, a []byte) {
	rb, _ := t.RowBytes(benchN)
	w = make([]byte, rb)
	if err := quant.QuantizeRow(t, genRow(1, benchN), w); err != nil {
		b.Fatal(err)
	}
	a = make([]byte, quant.ActivationBytes(t, benchN))
	if err := quant.QuantizeActivations(t, genRow(2, benchN), a); err != nil {
		b.Fatal(err)
	}
	return w, a
}

// BenchmarkDot reports weight bytes per second of Dot (the dispatched kernel) on a 4096-row.
func BenchmarkDot(b *testing.B) {
	for _, t := range weightTypes {
		b.Run(t.String(), func(b *testing.B) {
			w, a := benchRows(b, t)
			b.SetBytes(int64(len(w)))
			var s float32
			for b.Loop() {
				s += quant.Dot(t, w, a, benchN)
			}
			_ = s
		})
	}
}

// BenchmarkDequantize reports weight bytes per second of DequantizeRow on a 4096-row.
func BenchmarkDequantize(b *testing.B) {
	for _, t := range weightTypes {
		b.Run(t.String(), func(b *testing.B) {
			w, _ := benchRows(b, t)
			out := make([]float32, benchN)
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				quant.DequantizeRow(t, w, out)
			}
		})
	}
}
