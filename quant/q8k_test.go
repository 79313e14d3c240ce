package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// q8kQuantizers pairs each registered Q8_K quantizer (SIMD where the CPU has it) with its
// Go reference.
func q8kQuantizers() []struct {
	name      string
	fast, ref func(x []float32, dst []byte)
} {
	return []struct {
		name      string
		fast, ref func(x []float32, dst []byte)
	}{
		{"quantize_row_q8_K", formats[Q8_K].act, quantRefQ8_K},
		{"quantize_mat_q8_K_4x8", quantQ8K4x8, quantQ8K4x8Ref},
	}
}

// q8kBlock fills one 256-float block with a pattern chosen by kind.
func q8kBlock(r *rand.Rand, kind int, xb []float32) string {
	normal := func(s float64) {
		for j := range xb {
			xb[j] = float32(r.NormFloat64() * s)
		}
	}
	switch kind {
	case 0:
		normal(1)
		return "normal"
	case 1: // outliers
		normal(0.05)
		for k := 0; k < 1+r.IntN(4); k++ {
			xb[r.IntN(QK_K)] = float32(r.NormFloat64() * 40)
		}
		return "outliers"
	case 2:
		clear(xb)
		return "zero"
	case 3: // ±0 only
		for j := range xb {
			xb[j] = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
		}
		return "signed zeros"
	case 4: // ±max ties, in either order, possibly repeated
		normal(1)
		m := float32(3 + r.Float64())
		for k := 0; k < 1+r.IntN(3); k++ {
			xb[r.IntN(QK_K)] = m
			xb[r.IntN(QK_K)] = -m
		}
		return "±max ties"
	case 5: // -max only, repeated
		normal(1)
		for k := 0; k < 1+r.IntN(3); k++ {
			xb[r.IntN(QK_K)] = -5
		}
		return "-max repeated"
	case 6: // amax 127 (iscale ±1) or 254 (±1/2): many products exactly k+0.5
		m := []float32{127, 254}[r.IntN(2)]
		for j := range xb {
			xb[j] = float32(r.IntN(254)-127) + 0.5
			if m == 254 {
				xb[j] = float32(2*(r.IntN(254)-127) + 1)
			}
		}
		xb[r.IntN(QK_K)] = m * float32(r.IntN(2)*2-1)
		return "exact halves"
	case 7: // huge
		normal(1e37)
		xb[r.IntN(QK_K)] = math.MaxFloat32 * float32(r.IntN(2)*2-1)
		return "huge"
	case 8: // tiny: subnormal or near the overflow of 127/amax
		s := []float64{1e-45, 1e-40, 1e-38, 3.7e-37, 3.8e-37, 1e-36}[r.IntN(6)]
		normal(s)
		return fmt.Sprintf("tiny %g", s)
	case 9: // Inf
		normal(1)
		xb[r.IntN(QK_K)] = float32(math.Inf(r.IntN(2)*2 - 1))
		if r.IntN(2) == 0 {
			xb[r.IntN(QK_K)] = float32(math.Inf(r.IntN(2)*2 - 1))
		}
		return "Inf"
	case 10: // NaN with a random payload (quiet or signalling), possibly with Inf
		normal(1)
		for k := 0; k < 1+r.IntN(2); k++ {
			xb[r.IntN(QK_K)] = math.Float32frombits(0x7f800000 | uint32(r.IntN(2))<<31 | (1 + r.Uint32()%0x7fffff))
		}
		if r.IntN(3) == 0 {
			xb[r.IntN(QK_K)] = float32(math.Inf(1))
		}
		return "NaN"
	case 11: // all NaN
		for j := range xb {
			xb[j] = float32(math.NaN())
		}
		return "all NaN"
	default: // mixed scales
		normal(math.Pow(2, float64(r.IntN(40)-20)))
		return "scaled"
	}
}

const q8kKinds = 13

// TestQ8KQuantizers checks the registered quantizers byte for byte against the references.
func TestQ8KQuantizers(t *testing.T) {
	if !q8kSIMD {
		t.Log("no SIMD Q8_K quantizer on this CPU: the references are registered")
	}
	r := rand.New(rand.NewPCG(8, 256))
	for _, q := range q8kQuantizers() {
		for _, nb := range []int{1, 2, 3, 8, 16} {
			n := nb * QK_K
			x := make([]float32, n)
			got, want := make([]byte, nb*q8kSize), make([]byte, nb*q8kSize)
			for trial := 0; trial < 200; trial++ {
				kinds := make([]string, nb)
				for b := 0; b < nb; b++ {
					k := r.IntN(q8kKinds)
					if trial < q8kKinds {
						k = (trial + b) % q8kKinds
					}
					kinds[b] = q8kBlock(r, k, x[b*QK_K:(b+1)*QK_K])
				}
				for i := range got {
					got[i], want[i] = 0xa5, 0x5a // every byte must be written
				}
				q.fast(x, got)
				q.ref(x, want)
				for b := 0; b < nb; b++ {
					g, w := got[b*q8kSize:(b+1)*q8kSize], want[b*q8kSize:(b+1)*q8kSize]
					if string(g) != string(w) {
						i := 0
						for g[i] == w[i] {
							i++
						}
						t.Fatalf("%s n=%d block %d (%s): byte %d is %#x, reference %#x (d %v vs %v)",
							q.name, n, b, kinds[b], i, g[i], w[i], f32At(g, 0), f32At(w, 0))
					}
				}
			}
		}
	}
}

// TestQ8KQuantizersRounding checks every product that is exactly k+0.5 in a block and its
// neighbours one ulp away (the rounding rule, not just the scale, must match).
func TestQ8KQuantizersRounding(t *testing.T) {
	x := make([]float32, QK_K)
	for _, q := range q8kQuantizers() {
		for _, m := range []float32{127, -127, 254, -254} {
			for base := -128; base < 128; base += QK_K / 3 {
				for j := range x {
					v := float32(base+j/3) + 0.5
					if j%3 == 1 {
						v = math.Nextafter32(v, float32(math.Inf(1)))
					} else if j%3 == 2 {
						v = math.Nextafter32(v, float32(math.Inf(-1)))
					}
					x[j] = min(max(v*abs32(m)/127, -abs32(m)), abs32(m))
				}
				x[17] = m
				got, want := make([]byte, q8kSize), make([]byte, q8kSize)
				q.fast(x, got)
				q.ref(x, want)
				if string(got) != string(want) {
					t.Fatalf("%s max %v base %d: bytes differ", q.name, m, base)
				}
			}
		}
	}
}

// BenchmarkQ8KQuantizers reports GB/s of float input (16 blocks: a 4096-wide row).
func BenchmarkQ8KQuantizers(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 16 * QK_K
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]byte, n/QK_K*q8kSize)
	for _, q := range q8kQuantizers() {
		for _, v := range []struct {
			name string
			f    func(x []float32, dst []byte)
		}{{"ref", q.ref}, {"fast", q.fast}} {
			b.Run(q.name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(4 * n)
				for b.Loop() {
					v.f(x, dst)
				}
			})
		}
	}
}
