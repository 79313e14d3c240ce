package quant

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// simdLevels returns the SIMD levels this CPU can run, lowest first (excluding none).
func simdLevels() []int {
	var ls []int
	for l := simdAVX2; l <= simdMaxLevel; l++ {
		ls = append(ls, l)
	}
	return ls
}

var simdLevelNames = map[int]string{simdNone: "none", simdAVX2: "AVX2", simdAVX512: "AVX512"}

// simdHalfFields lists, per weight or activation type, the byte offsets inside a block of
// its fp16 scale fields, which random test blocks overwrite with finite values.
var simdHalfFields = map[Type][]int{
	Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2}, Q8_0: {0}, Q8_1: {0, 2},
	Q2_K: {80, 82}, Q3_K: {108}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {208},
	IQ4_NL: {0}, IQ4_XS: {0}, Q2_0: {0},
}

// simdHalf returns a random finite fp16 scale, sometimes extreme (±65504, tiny, zero).
func simdHalf(r *rand.Rand) uint16 {
	switch r.IntN(16) {
	case 0:
		return 0x7bff // 65504
	case 1:
		return 0xfbff // -65504
	case 2:
		return 0x0001 // smallest subnormal
	case 3:
		return 0
	}
	return FP32ToFP16(float32(r.NormFloat64() * 0.05))
}

// simdRandomFloats returns n normal floats with a few large outliers.
func simdRandomFloats(r *rand.Rand, n int, outliers bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if outliers && r.IntN(64) == 0 {
			x[i] *= 1000
		}
	}
	return x
}

// simdRawBlocks returns nb random blocks of type t: random bytes (every int8/nibble value,
// -128 included) with finite scale fields.
func simdRawBlocks(r *rand.Rand, t Type, nb int) []byte {
	bs := t.TypeSize()
	b := make([]byte, nb*bs)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for k := 0; k < nb; k++ {
		blk := b[k*bs : (k+1)*bs]
		for _, off := range simdHalfFields[t] {
			binary.LittleEndian.PutUint16(blk[off:], simdHalf(r))
		}
		if t == MXFP4 { // E8M0 scale 2^(e-128): the denormal ones (0, 1) up to 2^22, no overflow
			blk[0] = byte(r.IntN(151))
		}
		if t == Q8_1 { // keep s = d*sum(qs) finite
			binary.LittleEndian.PutUint16(blk, FP32ToFP16(float32(r.NormFloat64()*0.05)))
		}
		// Activations never hold -128: QuantizeActivations' range is ±127.
		qs := map[Type][2]int{Q8_0: {2, 34}, Q8_1: {4, 36}, Q8_K: {4, 260}}[t]
		if t == Q8_K {
			binary.LittleEndian.PutUint32(blk, math.Float32bits(float32(r.NormFloat64()*0.01)))
		}
		for i := qs[0]; i < qs[1]; i++ {
			if blk[i] == 0x80 {
				blk[i] = 0x81
			}
		}
		if t == Q8_1 { // s = d*sum(qs), as QuantizeActivations writes it
			var sum int
			for _, q := range blk[4:36] {
				sum += int(int8(q))
			}
			binary.LittleEndian.PutUint16(blk[2:], FP32ToFP16(FP16ToFP32(binary.LittleEndian.Uint16(blk))*float32(sum)))
		}
		if t == Q8_K { // bsums are sums of 16 quants, as QuantizeActivations writes them
			for j := 0; j < 16; j++ {
				var s int16
				for _, q := range blk[4+16*j : 4+16*(j+1)] {
					s += int16(int8(q))
				}
				binary.LittleEndian.PutUint16(blk[260+2*j:], uint16(s))
			}
		}
	}
	return b
}

// simdActValues decodes an activation row into floats for the error bound.
func simdActValues(t Type, a []byte, n int) []float64 {
	v := make([]float64, n)
	switch t {
	case F32:
		for i := range v {
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:])))
		}
	case F16:
		for i := range v {
			v[i] = float64(FP16ToFP32(binary.LittleEndian.Uint16(a[2*i:])))
		}
	case BF16:
		for i := range v {
			v[i] = float64(BF16ToFP32(binary.LittleEndian.Uint16(a[2*i:])))
		}
	case Q8_0, Q8_1:
		bs, off := 34, 2
		if t == Q8_1 {
			bs, off = 36, 4
		}
		for i := range v {
			blk := a[i/32*bs:]
			v[i] = float64(FP16ToFP32(binary.LittleEndian.Uint16(blk))) * float64(int8(blk[off+i%32]))
		}
	case Q8_K:
		for i := range v {
			blk := a[i/256*292:]
			d := math.Float32frombits(binary.LittleEndian.Uint32(blk))
			v[i] = float64(d) * float64(int8(blk[4+i%256]))
		}
	}
	return v
}

// simdMinField is the byte offset in a block of the fp16 min/offset field of the types whose
// weight is d*scale*q - dmin*m (or d*q + m).
var simdMinField = map[Type]int{Q4_1: 2, Q5_1: 2, Q2_K: 82, Q4_K: 2, Q5_K: 2}

// simdOffsetQuants is the byte range in a block of the quants of the types whose kernels take
// the constant offset of q through the activation block sums.
var simdOffsetQuants = map[Type][2]int{Q6_K: {0, 192}}

// simdBound is 1e-5·Σ|terms| (+ a tiny absolute term), the tolerance of a bounded kernel. The
// terms are w_i·a_i; for types with a min, w_i = x+y is counted as |x|+|y| ≤ |x+y|+|x-y|,
// with x-y dequantized from a copy whose min field is negated, so that cancellation between
// the scale and the min parts cannot shrink the bound below the kernels' rounding.
func simdBound(t Type, w, a []byte, n int) float64 {
	av := simdActValues(VecDotType(t), a, n)
	var s float64
	add := func(w []byte) {
		wf := make([]float32, n)
		if err := DequantizeRow(t, w, wf); err != nil {
			s = math.Inf(1)
			return
		}
		for i := range wf {
			s += math.Abs(float64(wf[i]) * av[i])
		}
	}
	add(w)
	if qs, ok := simdOffsetQuants[t]; ok {
		// The kernel subtracts the offset (e.g. Q6_K's 32*d*sc) through bsums, as llama.cpp's
		// AVX2 code does, so its lanes also hold the offset terms: count |offset·a| too, from a
		// copy whose quants are zeroed (w_i = -offset).
		w2 := append([]byte(nil), w...)
		for b := 0; b < len(w2); b += t.TypeSize() {
			clear(w2[b+qs[0] : b+qs[1]])
		}
		add(w2)
	}
	if off, ok := simdMinField[t]; ok {
		w2 := append([]byte(nil), w...)
		for b := 0; b < len(w2); b += t.TypeSize() {
			w2[b+off+1] ^= 0x80
		}
		add(w2)
	}
	return 1e-5*s + 1e-30
}

// simdLengths is the row lengths tested for type t: one block, odd block counts, a model row.
func simdLengths(t Type) []int {
	bs := t.BlockSize()
	if bs == 1 {
		return []int{1, 7, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 4096, 4096 + 13}
	}
	var ns []int
	for _, nb := range []int{1, 2, 3, 5, 7, 8, 9, 16, 17} {
		ns = append(ns, nb*bs)
	}
	return append(ns, 4096/bs*bs)
}

func TestSIMDDot(t *testing.T) {
	if simdMaxLevel == simdNone {
		t.Skip("no SIMD level on this CPU")
	}
	defer setSIMDLevel(simdMaxLevel)
	for _, level := range simdLevels() {
		setSIMDLevel(level)
		for typ, kern := range dotKernels {
			t.Run(simdLevelNames[level]+"/"+typ.String(), func(t *testing.T) {
				if f := formats[typ]; f == nil || f.dot == nil {
					t.Skip("no reference dot product yet")
				}
				simdCheckKernel(t, typ, kern)
			})
		}
	}
}

func simdCheckKernel(t *testing.T, typ Type, kern func(w, a []byte, n int) float32) {
	r := rand.New(rand.NewPCG(uint64(typ), 42))
	vt := VecDotType(typ)
	for _, n := range simdLengths(typ) {
		for trial := 0; trial < 24; trial++ {
			nb := n / typ.BlockSize()
			var w, a []byte
			// Weights: quantized floats, or raw random blocks (every bit pattern).
			if trial%2 == 0 || typ.BlockSize() == 1 {
				w = make([]byte, nb*typ.TypeSize())
				x := simdRandomFloats(r, n, trial%4 == 2)
				if trial%6 == 4 { // sparse: mostly zero weights, where lanes must cancel exactly
					for i := range x {
						if r.IntN(8) != 0 {
							x[i] = 0
						}
					}
				}
				if err := QuantizeRow(typ, x, w); err != nil {
					t.Fatal(err)
				}
			} else {
				w = simdRawBlocks(r, typ, nb)
			}
			// Activations: quantized floats, or raw blocks for the quantized activation types.
			if trial%3 != 2 || vt.BlockSize() == 1 {
				a = make([]byte, ActivationBytes(typ, n))
				if err := QuantizeActivations(typ, simdRandomFloats(r, n, trial%3 == 1), a); err != nil {
					t.Fatal(err)
				}
			} else {
				a = simdRawBlocks(r, vt, n/vt.BlockSize())
			}
			ref := DotRef(typ, w, a, n)
			got := kern(w, a, n)
			if again := kern(w, a, n); math.Float32bits(again) != math.Float32bits(got) {
				t.Fatalf("n=%d trial %d: not deterministic: %g then %g", n, trial, got, again)
			}
			bound := simdBound(typ, w, a, n)
			if got == ref || got != got && ref != ref {
				continue // both ±Inf or NaN (e.g. an fp16 Q8_1 s that overflowed)
			}
			if diff := math.Abs(float64(got) - float64(ref)); !(diff <= bound) {
				t.Fatalf("n=%d trial %d: fast %g, ref %g, |diff| %g > bound %g", n, trial, got, ref, diff, bound)
			}
		}
	}
}

// TestSIMDDispatch checks that Dot uses the kernels (same bits as calling them directly).
func TestSIMDDispatch(t *testing.T) {
	for typ, kern := range dotKernels {
		if f := formats[typ]; f == nil || f.dot == nil {
			continue
		}
		n := 4096 / typ.BlockSize() * typ.BlockSize()
		r := rand.New(rand.NewPCG(7, uint64(typ)))
		w := make([]byte, n/typ.BlockSize()*typ.TypeSize())
		a := make([]byte, ActivationBytes(typ, n))
		if err := QuantizeRow(typ, simdRandomFloats(r, n, false), w); err != nil {
			t.Fatal(err)
		}
		if err := QuantizeActivations(typ, simdRandomFloats(r, n, false), a); err != nil {
			t.Fatal(err)
		}
		if got, want := Dot(typ, w, a, n), kern(w, a, n); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("%s: Dot %g, kernel %g", typ, got, want)
		}
	}
}

// TestSIMDDotRows checks DotRows against Dot, bit for bit, for 1..9 rows at every level.
func TestSIMDDotRows(t *testing.T) {
	defer setSIMDLevel(simdMaxLevel)
	for _, level := range append([]int{simdNone}, simdLevels()...) {
		setSIMDLevel(level)
		for _, typ := range []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, Q8_0, F16} {
			r := rand.New(rand.NewPCG(3, uint64(typ)))
			for _, n := range simdLengths(typ) {
				w := make([]byte, n/typ.BlockSize()*typ.TypeSize())
				if err := QuantizeRow(typ, simdRandomFloats(r, n, true), w); err != nil {
					t.Fatal(err)
				}
				ab := ActivationBytes(typ, n)
				for rows := 1; rows <= 9; rows++ {
					if rows%2 == 0 && typ.BlockSize() > 1 {
						w = simdRawBlocks(r, typ, n/typ.BlockSize()) // every bit pattern
					}
					a := make([]byte, rows*ab)
					for i := 0; i < rows; i++ {
						if err := QuantizeActivations(typ, simdRandomFloats(r, n, i%2 == 1), a[i*ab:(i+1)*ab]); err != nil {
							t.Fatal(err)
						}
					}
					out := make([]float32, rows)
					DotRows(typ, w, a, n, out)
					for i := range out {
						if want := Dot(typ, w, a[i*ab:(i+1)*ab], n); math.Float32bits(out[i]) != math.Float32bits(want) {
							t.Fatalf("%s %s n=%d rows=%d: row %d: DotRows %g, Dot %g", simdLevelNames[level], typ, n, rows, i, out[i], want)
						}
					}
				}
			}
		}
	}
}

// TestSIMDMatVec checks MatVec against Dot row by row, bit for bit, and its NaN on bad input.
func TestSIMDMatVec(t *testing.T) {
	for _, typ := range []Type{Q4_K, Q8_0, F32, Q6_K} {
		r := rand.New(rand.NewPCG(11, uint64(typ)))
		n := 512
		rb := n / typ.BlockSize() * typ.TypeSize()
		rows := 7
		w := make([]byte, rows*rb)
		for i := 0; i < rows; i++ {
			if err := QuantizeRow(typ, simdRandomFloats(r, n, true), w[i*rb:(i+1)*rb]); err != nil {
				t.Fatal(err)
			}
		}
		a := make([]byte, ActivationBytes(typ, n))
		if err := QuantizeActivations(typ, simdRandomFloats(r, n, false), a); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, rows)
		MatVec(typ, w, a, n, out)
		for i := range out {
			if want := Dot(typ, w[i*rb:(i+1)*rb], a, n); math.Float32bits(out[i]) != math.Float32bits(want) {
				t.Fatalf("%s row %d: MatVec %g, Dot %g", typ, i, out[i], want)
			}
		}
		MatVec(typ, w[:len(w)-1], a, n, out)
		if out[0] == out[0] {
			t.Fatalf("%s: MatVec accepted a short matrix", typ)
		}
	}
}

// TestSIMDLlamaF32 checks that the AVX-512 F32 kernels are bit-identical to llama.cpp's
// order as llamaorder.go writes it (dotF32Vec, dotF32Gemm).
func TestSIMDLlamaF32(t *testing.T) {
	defer setSIMDLevel(simdMaxLevel)
	if setSIMDLevel(simdAVX512) != simdAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(21, 21))
	for _, n := range []int{1, 15, 16, 17, 63, 64, 65, 100, 128, 1000, 2048, 4096 + 16, 4096 + 13} {
		for trial := 0; trial < 8; trial++ {
			w := make([]byte, 4*n)
			a := make([]byte, 4*n)
			for i, v := range simdRandomFloats(r, n, trial%2 == 1) {
				binary.LittleEndian.PutUint32(w[4*i:], math.Float32bits(v))
			}
			for i, v := range simdRandomFloats(r, n, false) {
				binary.LittleEndian.PutUint32(a[4*i:], math.Float32bits(v))
			}
			if got, want := dotKernels[F32](w, a, n), LlamaKernel(F32, false)(w, a, n); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("vec n=%d: %g, dotF32Vec %g", n, got, want)
			}
			if got, want := simdLlamaF32(false)(w, a, n), LlamaKernel(F32, false)(w, a, n); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("vec n=%d: %g, dotF32Vec %g", n, got, want)
			}
			if got, want := simdLlamaF32(true)(w, a, n), LlamaKernel(F32, true)(w, a, n); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("gemm n=%d: %g, dotF32Gemm %g", n, got, want)
			}
		}
	}
}

// TestSIMDLlamaOrder checks every quantized kernel, at every level, bit for bit against
// llama.cpp's x86 vec_dot kernels on the vectors in testdata/simd_llama_dots.json, and the
// Q8_0 and Q6_K kernels against LlamaKernel's. The JSON is llama.cpp's output: its
// ggml_vec_dot_* functions (commit 0a50d9909, GCC 12 -march=native on Zen 4) called on
// pseudo-random blocks by a throwaway program kept outside this repository; each entry holds
// the type, length, weight and activation bytes (hex) and the float32 bits llama.cpp returned.
func TestSIMDLlamaOrder(t *testing.T) {
	raw, err := os.ReadFile("testdata/simd_llama_dots.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Type string
		N    int
		W, A string
		Bits uint32
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	defer setSIMDLevel(simdMaxLevel)
	for _, level := range simdLevels() {
		setSIMDLevel(level)
		for _, c := range cases {
			typ, err := ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			w, _ := hex.DecodeString(c.W)
			a, _ := hex.DecodeString(c.A)
			kern := dotKernels[typ]
			if kern == nil {
				t.Fatalf("%s: no %s kernel", simdLevelNames[level], typ)
			}
			if got := kern(w, a, c.N); math.Float32bits(got) != c.Bits {
				t.Errorf("%s %s n=%d: %g, llama.cpp %g", simdLevelNames[level], typ, c.N, got, math.Float32frombits(c.Bits))
			}
			if simdLlamaVecDot(typ) == nil {
				t.Errorf("%s: simdLlamaVecDot(%s) is nil", simdLevelNames[level], typ)
			}
			// Where llamaorder.go has a vec_dot-order kernel of its own, it must agree too.
			if typ == Q8_0 || typ == Q6_K {
				if got, want := kern(w, a, c.N), LlamaKernel(typ, false)(w, a, c.N); math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("%s %s n=%d: %g, LlamaKernel %g", simdLevelNames[level], typ, c.N, got, want)
				}
			}
		}
	}
}

// TestSIMDLlamaQ4_K checks simdLlamaQ4_K bit for bit against llamaorder_k.go's references of
// llama.cpp's repacked Q4_K kernels (dotQ4_KGemvRef, dotQ4_KGemmRef).
func TestSIMDLlamaQ4_K(t *testing.T) {
	if simdLlamaQ4_K(false) == nil {
		t.Skip("no AVX2")
	}
	gemv, gemm := dotQ4_KGemvRef, dotQ4_KGemmRef
	r := rand.New(rand.NewPCG(31, 31))
	for _, nb := range []int{1, 2, 3, 8, 9, 16} {
		n := nb * QK_K
		for trial := 0; trial < 16; trial++ {
			var w []byte
			if trial%2 == 0 {
				w = make([]byte, nb*144)
				if err := QuantizeRow(Q4_K, simdRandomFloats(r, n, trial%4 == 2), w); err != nil {
					t.Fatal(err)
				}
			} else {
				w = simdRawBlocks(r, Q4_K, nb)
			}
			a := make([]byte, ActivationBytes(Q4_K, n))
			if err := QuantizeActivations(Q4_K, simdRandomFloats(r, n, trial%3 == 1), a); err != nil {
				t.Fatal(err)
			}
			if got, want := simdLlamaQ4_K(false)(w, a, n), gemv(w, a, n); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("GEMV n=%d trial %d: %g, reference %g", n, trial, got, want)
			}
			if got, want := simdLlamaQ4_K(true)(w, a, n), gemm(w, a, n); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("GEMM n=%d trial %d: %g, reference %g", n, trial, got, want)
			}
			a4 := make([]byte, 4*len(a))
			for i := 0; i < 4; i++ {
				if err := QuantizeActivations(Q4_K, simdRandomFloats(r, n, i%2 == 0), a4[i*len(a):(i+1)*len(a)]); err != nil {
					t.Fatal(err)
				}
			}
			out := make([]float32, 4)
			for _, g := range []struct {
				gemm bool
				ref  func(w, a []byte, n int) float32
			}{{true, gemm}, {false, gemv}} {
				if !simdLlamaQ4_KRows4(g.gemm, w, a4, n, out) {
					t.Fatal("simdLlamaQ4_KRows4 refused")
				}
				for i := range out {
					if want := g.ref(w, a4[i*len(a):(i+1)*len(a)], n); math.Float32bits(out[i]) != math.Float32bits(want) {
						t.Fatalf("rows4 (gemm %v) n=%d trial %d row %d: %g, reference %g", g.gemm, n, trial, i, out[i], want)
					}
				}
			}
		}
	}
}

// simdF16LlamaOrder is ggml_vec_dot_f16's AVX-512 order written out in Go (see dotF16AVX512Go).
func simdF16LlamaOrder(w, a []byte, n int) float32 {
	var sum [4][16]float32
	np := n &^ 63
	h := func(b []byte, i int) float32 { return FP16ToFP32(binary.LittleEndian.Uint16(b[2*i:])) }
	for i := 0; i < np; i += 64 {
		for j := 0; j < 4; j++ {
			for l := 0; l < 16; l++ {
				k := i + 16*j + l
				sum[j][l] = float32(math.FMA(float64(h(w, k)), float64(h(a, k)), float64(sum[j][l])))
			}
		}
	}
	for l := 0; l < 16; l++ {
		sum[0][l] += sum[2][l]
		sum[1][l] += sum[3][l]
	}
	for l := 0; l < 16; l++ {
		sum[0][l] += sum[1][l]
	}
	t := sum[0]
	for wd := 8; wd >= 1; wd /= 2 {
		for l := 0; l < wd; l++ {
			t[l] += t[l+wd]
		}
	}
	s := float64(t[0])
	for i := np; i < n; i++ {
		s += float64(h(w, i) * h(a, i))
	}
	return float32(s)
}

// TestSIMDLlamaF16 checks the AVX-512 F16 kernel bit for bit against simdF16LlamaOrder.
func TestSIMDLlamaF16(t *testing.T) {
	defer setSIMDLevel(simdMaxLevel)
	if setSIMDLevel(simdAVX512) != simdAVX512 {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(41, 41))
	for _, n := range []int{1, 63, 64, 65, 128, 200, 1024, 4096 + 7} {
		for trial := 0; trial < 8; trial++ {
			w := make([]byte, 2*n)
			a := make([]byte, 2*n)
			if QuantizeRow(F16, simdRandomFloats(r, n, trial%2 == 1), w) != nil || QuantizeRow(F16, simdRandomFloats(r, n, false), a) != nil {
				t.Fatal("F16")
			}
			if got, want := dotKernels[F16](w, a, n), simdF16LlamaOrder(w, a, n); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d: %g, llama order %g", n, got, want)
			}
		}
	}
}
