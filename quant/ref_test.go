package quant_test

// The reference data in testdata/ is llama.cpp's own output, produced outside this repository
// by a throwaway C program linked against the CPU build of llama.cpp at commit
// 0a50d9909a3478e82679f505bf8595d1eee4b0a8 (the commit that produced the fixtures):
//
//   - dequant_ref.json: for every tensor of every fixture model, gguf_init_from_file loads it
//     and ggml_get_type_traits(type)->to_float dequantizes it; recorded are the SHA-256 of the
//     float32 little-endian output and six sample values (as float32 bits).
//   - quant_ref.json: for each type, rows of 4096 values from the generator genRow (seeds
//     1000..1003), quantized with the type's quantize_row_*_ref (SHA-256 of the bytes) and
//     dequantized again (SHA-256 of the floats); activation rows (seeds 2000..2003) converted by
//     ggml-cpu's from_float (SHA-256); and ggml-cpu's vec_dot of the two, both the dispatched
//     (AVX-512/AVX2) kernel and ggml_vec_dot_*_generic (float32 bits).

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/internal/fixtures"
	"github.com/regolith/regolith/quant"
)

// genRow mirrors the C generator: splitmix64, 32-value blocks with a power-of-two scale
// 2^-8..2^4 and a kind (shifted positive, all negative, constant, or centred), plus 1/64
// outliers ×8. Every operation is exact or a single float32 rounding, so C and Go agree.
func genRow(seed uint64, n int) []float32 {
	st := seed
	next := func() uint64 {
		st += 0x9E3779B97F4A7C15
		z := st
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		return z ^ (z >> 31)
	}
	x := make([]float32, n)
	for b := 0; b < n/32; b++ {
		r := next()
		scale := float32(math.Ldexp(1, int(r%13)-8))
		kind := (r >> 8) % 16
		for j := 0; j < 32; j++ {
			u := float32(next()>>40) * (1.0 / 16777216.0)
			v := float32((u - 0.5) * scale)
			switch kind {
			case 0:
				v = v + float32(0.25*scale)
			case 1:
				v = -float32(math.Abs(float64(v)))
			case 2:
				v = 0.375 * scale
			}
			if next()&63 == 0 {
				v = v * 8
			}
			x[b*32+j] = v
		}
	}
	return x
}

func shaBytes(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func shaFloats(f []float32) string {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return shaBytes(b)
}

func loadJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestDequantizeFixtureModels dequantizes every tensor of every fixture model and compares the
// result bit for bit (SHA-256 and samples) with llama.cpp's to_float.
func TestDequantizeFixtureModels(t *testing.T) {
	var ref struct {
		Models map[string]map[string]struct {
			Type    string
			N       int
			SHA256  string
			Samples [][2]uint64
		}
	}
	loadJSON(t, "dequant_ref.json", &ref)
	paths := fixtures.Glob(t, "models/*.gguf")
	for _, p := range paths {
		want, ok := ref.Models[filepath.Base(p)]
		if !ok {
			t.Errorf("%s: no reference data", p)
			continue
		}
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Tensors) != len(want) {
			t.Errorf("%s: %d tensors, reference has %d", p, len(f.Tensors), len(want))
		}
		for i := range f.Tensors {
			ti := &f.Tensors[i]
			w, ok := want[ti.Name]
			if !ok {
				t.Errorf("%s: tensor %s missing from reference", p, ti.Name)
				continue
			}
			if wt, _ := quant.ParseType(w.Type); wt != ti.Type {
				t.Errorf("%s %s: type %s, reference %s", p, ti.Name, ti.Type, w.Type)
			}
			out := make([]float32, ti.Elements())
			if err := quant.DequantizeRow(ti.Type, f.Data(ti), out); err != nil {
				t.Errorf("%s %s: %v", p, ti.Name, err)
				continue
			}
			for _, s := range w.Samples {
				if got := math.Float32bits(out[s[0]]); uint64(got) != s[1] {
					t.Errorf("%s %s[%d] = %g, llama.cpp %g", p, ti.Name, s[0], out[s[0]], math.Float32frombits(uint32(s[1])))
				}
			}
			if got := shaFloats(out); got != w.SHA256 {
				t.Errorf("%s %s (%s): dequantized SHA-256 differs from llama.cpp's", p, ti.Name, ti.Type)
			}
		}
		f.Close()
	}
}

type quantRef struct {
	N     int
	Seeds []uint64
	Types map[string]struct {
		QuantSHA256        []string `json:"quant_sha256"`
		DequantSHA256      []string `json:"dequant_sha256"`
		CPUFromFloatSHA256 []string `json:"cpu_from_float_sha256"`
		VecDotType         string   `json:"vec_dot_type"`
		DotSIMDBits        []uint32 `json:"dot_simd_bits"`
		DotGenericBits     []uint32 `json:"dot_generic_bits"`
	}
}

// TestQuantizeRowRef: QuantizeRow is bit-identical to llama.cpp's quantize_row_*_ref, and
// DequantizeRow of its output to llama.cpp's dequantize_row_* — for every type of the list.
func TestQuantizeRowRef(t *testing.T) {
	var ref quantRef
	loadJSON(t, "quant_ref.json", &ref)
	for name, r := range ref.Types {
		typ, err := quant.ParseType(name)
		if err != nil {
			t.Fatal(err)
		}
		for si, seed := range ref.Seeds {
			x := genRow(seed, ref.N)
			rb, _ := typ.RowBytes(int64(ref.N))
			q := make([]byte, rb)
			if err := quant.QuantizeRow(typ, x, q); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if got := shaBytes(q); got != r.QuantSHA256[si] {
				t.Errorf("%s seed %d: quantized bytes differ from quantize_row_%s_ref", name, seed, name)
			}
			if r.DequantSHA256[si] == "" {
				continue
			}
			out := make([]float32, ref.N)
			if err := quant.DequantizeRow(typ, q, out); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if got := shaFloats(out); got != r.DequantSHA256[si] {
				t.Errorf("%s seed %d: dequantized floats differ from dequantize_row_%s", name, seed, name)
			}
		}
	}
}

// actWeightType maps an activation type to a weight type whose VecDotType it is.
var actWeightType = map[quant.Type]quant.Type{
	quant.F32: quant.F32, quant.F16: quant.F16, quant.BF16: quant.BF16,
	quant.Q8_0: quant.Q8_0, quant.Q8_1: quant.Q4_1, quant.Q8_K: quant.Q4_K,
}

// TestQuantizeActivations: the activation rows match ggml-cpu's from_float (the x86 SIMD
// quantize_row_q8_0/q8_1, quantize_row_q8_K, fp16/bf16 conversion) bit for bit.
func TestQuantizeActivations(t *testing.T) {
	var ref quantRef
	loadJSON(t, "quant_ref.json", &ref)
	for at, wt := range actWeightType {
		if quant.VecDotType(wt) != at {
			t.Fatalf("VecDotType(%s) = %s, want %s", wt, quant.VecDotType(wt), at)
		}
		r, ok := ref.Types[map[quant.Type]string{quant.F32: "f32", quant.F16: "f16", quant.BF16: "bf16",
			quant.Q8_0: "q8_0", quant.Q8_1: "q8_1", quant.Q8_K: "q8_K"}[at]]
		if !ok || len(r.CPUFromFloatSHA256) == 0 {
			t.Fatalf("%s: no reference", at)
		}
		for si := range ref.Seeds {
			y := genRow(2000+uint64(si), ref.N)
			a := make([]byte, quant.ActivationBytes(wt, ref.N))
			if err := quant.QuantizeActivations(wt, y, a); err != nil {
				t.Fatal(err)
			}
			if got := shaBytes(a); got != r.CPUFromFloatSHA256[si] {
				t.Errorf("%s seed %d: activation bytes differ from ggml-cpu's from_float", at, 2000+si)
			}
		}
	}
}

// TestDotRef: DotRef of a reference-quantized weight row with QuantizeActivations' row agrees
// with llama.cpp's ggml_vec_dot_*_generic (same integer sums and float order; ggml-cpu is built
// with -march=native, so the compiler may fuse a multiply-add: allow a few ulps of the terms'
// magnitude) and with its SIMD kernel (different summation order), and lies within the
// activation-quantization error bound of the float dot product of the dequantized row.
func TestDotRef(t *testing.T) {
	var ref quantRef
	loadJSON(t, "quant_ref.json", &ref)
	exact, total := 0, 0
	for name, r := range ref.Types {
		if r.VecDotType == "" {
			continue
		}
		typ, _ := quant.ParseType(name)
		vt, _ := quant.ParseType(r.VecDotType)
		if got := quant.VecDotType(typ); got != vt {
			t.Errorf("VecDotType(%s) = %s, llama.cpp %s", typ, got, vt)
		}
		n := ref.N
		for si, seed := range ref.Seeds {
			rb, _ := typ.RowBytes(int64(n))
			w := make([]byte, rb)
			if err := quant.QuantizeRow(typ, genRow(seed, n), w); err != nil {
				t.Fatal(err)
			}
			y := genRow(2000+uint64(si), n)
			a := make([]byte, quant.ActivationBytes(typ, n))
			if err := quant.QuantizeActivations(typ, y, a); err != nil {
				t.Fatal(err)
			}
			got := quant.DotRef(typ, w, a, n)
			if d := quant.Dot(typ, w, a, n); math.Abs(float64(d-got)) > 1e-5*math.Abs(float64(got))+1e-6 {
				t.Errorf("%s: Dot %g, DotRef %g", typ, d, got)
			}
			wf := make([]float32, n)
			quant.DequantizeRow(typ, w, wf)
			var exactDot, mag, bound float64
			for b := 0; b < n; b += 32 {
				var amax float64
				for _, v := range y[b : b+32] {
					amax = math.Max(amax, math.Abs(float64(v)))
				}
				for i := b; i < b+32; i++ {
					p := float64(wf[i]) * float64(y[i])
					exactDot += p
					mag += math.Abs(p)
					switch vt {
					case quant.Q8_0, quant.Q8_1, quant.Q8_K:
						// rounding to the grid (amax/254), plus the fp16 scale (2^-11 relative)
						bound += math.Abs(float64(wf[i])) * amax * (0.5/127 + 1.0/1024)
					case quant.F16:
						bound += math.Abs(p) * 0x1p-11
					case quant.BF16:
						bound += math.Abs(p) * 0x1p-8
					}
				}
			}
			bound += 1e-5 * mag
			if diff := math.Abs(float64(got) - exactDot); diff > bound {
				t.Errorf("%s seed %d: DotRef %g, float dot %g: |diff| %g > bound %g", typ, seed, got, exactDot, diff, bound)
			}
			simd := math.Float32frombits(r.DotSIMDBits[si])
			if diff := math.Abs(float64(got - simd)); diff > 1e-5*mag {
				t.Errorf("%s seed %d: DotRef %g, llama.cpp vec_dot %g (diff %g, tolerance %g)", typ, seed, got, simd, diff, 1e-5*mag)
			}
			// In this llama.cpp build ggml_vec_dot_q5_0_q8_0_generic disagrees by orders of
			// magnitude with both its own AVX kernel and the dequantized float dot product (which
			// DotRef matches), so its recorded value is not used as a reference.
			if len(r.DotGenericBits) > 0 && typ != quant.Q5_0 {
				gen := math.Float32frombits(r.DotGenericBits[si])
				total++
				if gen == got {
					exact++
				} else if diff := math.Abs(float64(got - gen)); diff > 1e-6*mag {
					t.Errorf("%s seed %d: DotRef %g, llama.cpp generic %g (diff %g, tolerance %g)", typ, seed, got, gen, diff, 1e-6*mag)
				}
			}
		}
	}
	t.Logf("DotRef bit-identical to ggml_vec_dot_*_generic in %d of %d cases", exact, total)
}
