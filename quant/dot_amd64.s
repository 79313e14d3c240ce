// Hand-written AVX2 / AVX-512 dot-product kernels for package quant.
// Register layout and algorithms are regolith's own; block layouts follow ggml-common.h.
// Every kernel here is "bounded": integer sub-sums are exact and the float accumulation
// is deterministic but in a different order from DotRef, so results agree with the
// reference within float rounding (see simd_test.go for the tolerance). The quantized
// kernels registered in dotKernels sum in the order of llama.cpp's x86 ggml_vec_dot_* (bit
// for bit, TestSIMDLlamaOrder); Q8_0, IQ4_NL and MXFP4 use VPSIGNB like llama.cpp, so like it
// they assume activations in [-127, 127], which QuantizeActivations guarantees (IQ4_XS too).

#include "textflag.h"

// REDUCE8 sums the 8 float32 lanes of Y0 into the low lane of X0 (clobbers X1).
#define REDUCE8 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VPERMILPS    $0x4E, X0, X1 \
	VADDPS       X1, X0, X0 \
	VPERMILPS    $0xB1, X0, X1 \
	VADDPS       X1, X0, X0

// REDUCE16 sums the 16 float32 lanes of Z0 into the low lane of X0 (clobbers Z1).
#define REDUCE16 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS        Y1, Y0, Y0 \
	REDUCE8

// SCALE2 loads the fp16 scales at (w) and (a), multiplies them in float32 and
// broadcasts the product into dst (ymm or zmm). Clobbers AX, DX, X14, X15.
#define SCALE2(w, a, dst) \
	MOVWLZX      w, AX \
	MOVWLZX      a, DX \
	SHLL         $16, DX \
	ORL          DX, AX \
	VMOVD        AX, X15 \
	VCVTPH2PS    X15, X15 \
	VMOVSHDUP    X15, X14 \
	VMULSS       X14, X15, X15 \
	VBROADCASTSS X15, dst

// ---------------------------------------------------------------------------
// ---------------------------------------------------------------------------
// Float kernels. n is a multiple of 32 (AVX2) or 64 (AVX-512); the Go wrapper adds
// the tail.

// func dotF32AVX2(x, y *float32, n int) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ   $5, CX
	JZ     f32a2done

f32a2loop:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         f32a2loop

f32a2done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	REDUCE8
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func dotF32AVX512(x, y *float32, n int) float32
TEXT ·dotF32AVX512(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	SHRQ   $6, CX
	JZ     f32z2done

f32z2loop:
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS (DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	DECQ        CX
	JNZ         f32z2loop

f32z2done:
	// ggml's GGML_F32_VEC_REDUCE order: 0+2, 1+3, then 0+1, then _mm512_reduce_add_ps.
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
	REDUCE16
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func dotF32GemmAVX512(x, y *float32, n int) float32
// One 16-lane accumulator over n (a multiple of 16), then _mm512_reduce_add_ps: the order of
// llama.cpp's tinyBLAS F32 kernel (dotF32Gemm).
TEXT ·dotF32GemmAVX512(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Z0, Z0, Z0
	SHRQ   $4, CX
	JZ     f32gz2done

f32gz2loop:
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNZ         f32gz2loop

f32gz2done:
	REDUCE16
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotF16AVX2(x, y *uint16, n int) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ   $5, CX
	JZ     f16a2done

f16a2loop:
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   32(SI), Y6
	VCVTPH2PS   48(SI), Y7
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   32(DI), Y10
	VCVTPH2PS   48(DI), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNZ         f16a2loop

f16a2done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	REDUCE8
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func dotF16AVX512(x, y *uint16, n int) float32
TEXT ·dotF16AVX512(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	SHRQ   $6, CX
	JZ     f16z2done

f16z2loop:
	VCVTPH2PS   (SI), Z4
	VCVTPH2PS   32(SI), Z5
	VCVTPH2PS   64(SI), Z6
	VCVTPH2PS   96(SI), Z7
	VCVTPH2PS   (DI), Z8
	VCVTPH2PS   32(DI), Z9
	VCVTPH2PS   64(DI), Z10
	VCVTPH2PS   96(DI), Z11
	VFMADD231PS Z8, Z4, Z0
	VFMADD231PS Z9, Z5, Z1
	VFMADD231PS Z10, Z6, Z2
	VFMADD231PS Z11, Z7, Z3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         f16z2loop

f16z2done:
	// GGML_F32Cx16_REDUCE order: 0+2, 1+3, then 0+1, then _mm512_reduce_add_ps.
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
	REDUCE16
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// BF16 -> F32 is a 16-bit left shift of the zero-extended word (exact, no DAZ).

// func dotBF16AVX2(x, y *uint16, n int) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ   $5, CX
	JZ     bf16a2done

bf16a2loop:
	VPMOVZXWD   (SI), Y4
	VPMOVZXWD   16(SI), Y5
	VPMOVZXWD   32(SI), Y6
	VPMOVZXWD   48(SI), Y7
	VPMOVZXWD   (DI), Y8
	VPMOVZXWD   16(DI), Y9
	VPMOVZXWD   32(DI), Y10
	VPMOVZXWD   48(DI), Y11
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y5, Y5
	VPSLLD      $16, Y6, Y6
	VPSLLD      $16, Y7, Y7
	VPSLLD      $16, Y8, Y8
	VPSLLD      $16, Y9, Y9
	VPSLLD      $16, Y10, Y10
	VPSLLD      $16, Y11, Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNZ         bf16a2loop

bf16a2done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	REDUCE8
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func dotBF16AVX512(x, y *uint16, n int) float32
TEXT ·dotBF16AVX512(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	SHRQ   $6, CX
	JZ     bf16z2done

bf16z2loop:
	VPMOVZXWD   (SI), Z4
	VPMOVZXWD   32(SI), Z5
	VPMOVZXWD   64(SI), Z6
	VPMOVZXWD   96(SI), Z7
	VPMOVZXWD   (DI), Z8
	VPMOVZXWD   32(DI), Z9
	VPMOVZXWD   64(DI), Z10
	VPMOVZXWD   96(DI), Z11
	VPSLLD      $16, Z4, Z4
	VPSLLD      $16, Z5, Z5
	VPSLLD      $16, Z6, Z6
	VPSLLD      $16, Z7, Z7
	VPSLLD      $16, Z8, Z8
	VPSLLD      $16, Z9, Z9
	VPSLLD      $16, Z10, Z10
	VPSLLD      $16, Z11, Z11
	VFMADD231PS Z8, Z4, Z0
	VFMADD231PS Z9, Z5, Z1
	VFMADD231PS Z10, Z6, Z2
	VFMADD231PS Z11, Z7, Z3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         bf16z2loop

bf16z2done:
	// GGML_F32Cx16_REDUCE order: 0+2, 1+3, then 0+1, then _mm512_reduce_add_ps.
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
	REDUCE16
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// ---------------------------------------------------------------------------
// K-quants x Q8_K. Q8_K block: f32 d @0, int8 qs[256] @4, int16 bsums[16] @260 (292 bytes).
// Weights are unsigned (Q4_K nibbles, Q6_K 6-bit values), so VPMADDUBSW (unsigned x signed,
// at most 63*128*2 per int16 pair) never saturates: exact for every int8 activation.

// q4kShuf<>+32*s broadcasts 16-bit word s of each 128-bit lane.
DATA q4kShuf<>+0(SB)/8, $0x0100010001000100
DATA q4kShuf<>+8(SB)/8, $0x0100010001000100
DATA q4kShuf<>+16(SB)/8, $0x0100010001000100
DATA q4kShuf<>+24(SB)/8, $0x0100010001000100
DATA q4kShuf<>+32(SB)/8, $0x0302030203020302
DATA q4kShuf<>+40(SB)/8, $0x0302030203020302
DATA q4kShuf<>+48(SB)/8, $0x0302030203020302
DATA q4kShuf<>+56(SB)/8, $0x0302030203020302
DATA q4kShuf<>+64(SB)/8, $0x0504050405040504
DATA q4kShuf<>+72(SB)/8, $0x0504050405040504
DATA q4kShuf<>+80(SB)/8, $0x0504050405040504
DATA q4kShuf<>+88(SB)/8, $0x0504050405040504
DATA q4kShuf<>+96(SB)/8, $0x0706070607060706
DATA q4kShuf<>+104(SB)/8, $0x0706070607060706
DATA q4kShuf<>+112(SB)/8, $0x0706070607060706
DATA q4kShuf<>+120(SB)/8, $0x0706070607060706
DATA q4kShuf<>+128(SB)/8, $0x0908090809080908
DATA q4kShuf<>+136(SB)/8, $0x0908090809080908
DATA q4kShuf<>+144(SB)/8, $0x0908090809080908
DATA q4kShuf<>+152(SB)/8, $0x0908090809080908
DATA q4kShuf<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kShuf<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kShuf<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kShuf<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kShuf<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kShuf<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kShuf<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kShuf<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kShuf<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kShuf<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kShuf<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kShuf<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q4kShuf<>(SB), RODATA|NOPTR, $256

// q6kShuf<>+32*k broadcasts word 2k into the low lane and word 2k+1 into the high lane.
DATA q6kShuf<>+0(SB)/8, $0x0100010001000100
DATA q6kShuf<>+8(SB)/8, $0x0100010001000100
DATA q6kShuf<>+16(SB)/8, $0x0302030203020302
DATA q6kShuf<>+24(SB)/8, $0x0302030203020302
DATA q6kShuf<>+32(SB)/8, $0x0504050405040504
DATA q6kShuf<>+40(SB)/8, $0x0504050405040504
DATA q6kShuf<>+48(SB)/8, $0x0706070607060706
DATA q6kShuf<>+56(SB)/8, $0x0706070607060706
DATA q6kShuf<>+64(SB)/8, $0x0908090809080908
DATA q6kShuf<>+72(SB)/8, $0x0908090809080908
DATA q6kShuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6kShuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6kShuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6kShuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6kShuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q6kShuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q6kShuf<>(SB), RODATA|NOPTR, $128

// Q4_K block: fp16 d @0, fp16 dmin @2, 6-bit scales/mins packed in 12 bytes @4, 4-bit qs[128] @16
// (144 bytes). Result: sum over blocks of da*(d*sum_s sc_s*dot_s - dmin*sum_s m_s*bsum_s).

// func dotQ4_KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ4_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       Y0, Y0, Y0
	VXORPS       X12, X12, X12
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ        CX, CX
	JZ           q4ka2done

q4ka2loop:
	// Unpack the 8 scales into AX and the 8 mins into R10 (one byte each).
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  BX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	ANDL  $0x3f3f3f3f, R10
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, DX
	ANDL  $0x3f3f3f3f, AX
	SHLQ  $32, DX
	ORQ   DX, AX
	SHLQ  $32, R8
	ORQ   R8, R10

	// Y1: the 8 scales as words, in both lanes. Y3: sum_s m_s*bsum pairs as 8 floats.
	VMOVQ       AX, X1
	VPMOVZXBW   X1, X1
	VINSERTI128 $1, X1, Y1, Y1
	VMOVQ       R10, X2
	VPMOVZXBW   X2, X2
	VMOVDQU     260(DI), X3
	VPHADDW     276(DI), X3, X3
	VPMADDWD    X3, X2, X3
	VCVTDQ2PS   X3, X3

	VPXOR Y2, Y2, Y2

	VMOVDQU    16(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 4(DI), Y4, Y4
	VPMADDUBSW 36(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+0(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+32(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y4, Y2, Y2
	VPADDD     Y5, Y2, Y2

	VMOVDQU    48(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 68(DI), Y4, Y4
	VPMADDUBSW 100(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+64(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+96(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y4, Y2, Y2
	VPADDD     Y5, Y2, Y2

	VMOVDQU    80(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 132(DI), Y4, Y4
	VPMADDUBSW 164(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+128(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+160(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y4, Y2, Y2
	VPADDD     Y5, Y2, Y2

	VMOVDQU    112(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 196(DI), Y4, Y4
	VPMADDUBSW 228(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+192(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+224(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y4, Y2, Y2
	VPADDD     Y5, Y2, Y2

	VCVTDQ2PS Y2, Y2

	// X8 = [d*da, dmin*da]
	MOVL         (SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VBROADCASTSS (DI), X9
	VMULPS       X9, X8, X8
	VBROADCASTSS X8, Y9
	VMOVSHDUP    X8, X10
	VBROADCASTSS X10, Y10
	VFMADD231PS  Y9, Y2, Y0
	VFNMADD231PS X10, X3, X12

	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4ka2loop

q4ka2done:
	REDUCE8
	VPERMILPS $0x4E, X12, X1
	VADDPS    X1, X12, X12
	VPERMILPS $0xB1, X12, X1
	VADDPS    X1, X12, X12
	VADDSS    X12, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q6_K block: ql[128] @0, qh[64] @128, int8 scales[16] @192, fp16 d @208 (210 bytes).
// q = ql nibble | 2 qh bits << 4, in 0..63; the -32 is subtracted at the end as
// 32*sum_j sc_j*bsum_j (VPMADDWD of bsums and scales): llama.cpp's AVX2 order, bit for bit.

// func dotQ6_KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ6_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       Y0, Y0, Y0
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $0x30303030, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	TESTQ        CX, CX
	JZ           q6ka2done

q6ka2loop:
	VPXOR Y2, Y2, Y2

	VMOVDQU     0(SI), Y3
	VMOVDQU     32(SI), Y4
	VMOVDQU     128(SI), Y5
	VPSRLW      $4, Y3, Y6
	VPSRLW      $4, Y4, Y7
	VPAND       Y11, Y3, Y3
	VPAND       Y11, Y4, Y4
	VPAND       Y11, Y6, Y6
	VPAND       Y11, Y7, Y7
	VPSLLW      $4, Y5, Y8
	VPAND       Y12, Y8, Y8
	VPOR        Y8, Y3, Y3
	VPSLLW      $2, Y5, Y8
	VPAND       Y12, Y8, Y8
	VPOR        Y8, Y4, Y4
	VPAND       Y12, Y5, Y8
	VPOR        Y8, Y6, Y6
	VPSRLW      $2, Y5, Y8
	VPAND       Y12, Y8, Y8
	VPOR        Y8, Y7, Y7
	VPMADDUBSW  4(DI), Y3, Y3
	VPMADDUBSW  36(DI), Y4, Y4
	VPMADDUBSW  68(DI), Y6, Y6
	VPMADDUBSW  100(DI), Y7, Y7
	VPMOVSXBW   192(SI), X9
	VINSERTI128 $1, X9, Y9, Y9
	VPSHUFB     q6kShuf<>+0(SB), Y9, Y10
	VPMADDWD    Y10, Y3, Y3
	VPSHUFB     q6kShuf<>+32(SB), Y9, Y10
	VPMADDWD    Y10, Y4, Y4
	VPSHUFB     q6kShuf<>+64(SB), Y9, Y10
	VPMADDWD    Y10, Y6, Y6
	VPSHUFB     q6kShuf<>+96(SB), Y9, Y10
	VPMADDWD    Y10, Y7, Y7
	VPADDD      Y3, Y2, Y2
	VPADDD      Y4, Y2, Y2
	VPADDD      Y6, Y2, Y2
	VPADDD      Y7, Y2, Y2

	VMOVDQU     64(SI), Y3
	VMOVDQU     96(SI), Y4
	VMOVDQU     160(SI), Y5
	VPSRLW      $4, Y3, Y6
	VPSRLW      $4, Y4, Y7
	VPAND       Y11, Y3, Y3
	VPAND       Y11, Y4, Y4
	VPAND       Y11, Y6, Y6
	VPAND       Y11, Y7, Y7
	VPSLLW      $4, Y5, Y8
	VPAND       Y12, Y8, Y8
	VPOR        Y8, Y3, Y3
	VPSLLW      $2, Y5, Y8
	VPAND       Y12, Y8, Y8
	VPOR        Y8, Y4, Y4
	VPAND       Y12, Y5, Y8
	VPOR        Y8, Y6, Y6
	VPSRLW      $2, Y5, Y8
	VPAND       Y12, Y8, Y8
	VPOR        Y8, Y7, Y7
	VPMADDUBSW  132(DI), Y3, Y3
	VPMADDUBSW  164(DI), Y4, Y4
	VPMADDUBSW  196(DI), Y6, Y6
	VPMADDUBSW  228(DI), Y7, Y7
	VPMOVSXBW   200(SI), X9
	VINSERTI128 $1, X9, Y9, Y9
	VPSHUFB     q6kShuf<>+0(SB), Y9, Y10
	VPMADDWD    Y10, Y3, Y3
	VPSHUFB     q6kShuf<>+32(SB), Y9, Y10
	VPMADDWD    Y10, Y4, Y4
	VPSHUFB     q6kShuf<>+64(SB), Y9, Y10
	VPMADDWD    Y10, Y6, Y6
	VPSHUFB     q6kShuf<>+96(SB), Y9, Y10
	VPMADDWD    Y10, Y7, Y7
	VPADDD      Y3, Y2, Y2
	VPADDD      Y4, Y2, Y2
	VPADDD      Y6, Y2, Y2
	VPADDD      Y7, Y2, Y2

	VPMOVSXBW 192(SI), Y9
	VPMADDWD  260(DI), Y9, Y9
	VPSLLD    $5, Y9, Y9
	VPSUBD    Y9, Y2, Y2
	VCVTDQ2PS Y2, Y2

	MOVWLZX      208(SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VMULSS       (DI), X8, X8
	VBROADCASTSS X8, Y8
	VFMADD231PS  Y8, Y2, Y0

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6ka2loop

q6ka2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---------------------------------------------------------------------------
// Legacy 32-element blocks x Q8_0 / Q8_1. The nibbles (plus the fifth bit for Q5) are kept
// unsigned; the -8/-16 offset is subtracted as VPMADDUBSW(offset, a) in int16 (no
// saturation: |15*128*2| + |8*128*2| and |31*128*2| + |16*128*2| < 32768): exact for every
// int8 activation.

// bits5Shuf<> sends byte e/8 of a broadcast dword to byte e; bits5Mask<> has bit e%8 clear.
DATA bits5Shuf<>+0(SB)/8, $0x0000000000000000
DATA bits5Shuf<>+8(SB)/8, $0x0101010101010101
DATA bits5Shuf<>+16(SB)/8, $0x0202020202020202
DATA bits5Shuf<>+24(SB)/8, $0x0303030303030303
GLOBL bits5Shuf<>(SB), RODATA|NOPTR, $32
DATA bits5Mask<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bits5Mask<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bits5Mask<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bits5Mask<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bits5Mask<>(SB), RODATA|NOPTR, $32

// LOADQ4 leaves in Y1 the 32 nibbles of 16 bytes at off(SI): low nibbles (elements 0..15)
// in the low lane, high nibbles (16..31) in the high lane. Needs Y11 = 0x0f bytes.
#define LOADQ4(off) \
	VMOVDQU     off(SI), X1 \
	VPSRLW      $4, X1, X2 \
	VINSERTI128 $1, X2, Y1, Y1 \
	VPAND       Y11, Y1, Y1

// BITS5 ORs 0x10 into byte e of Y1 where bit e of the dword at off(SI) is set.
// Needs Y8 = bits5Shuf, Y7 = bits5Mask, Y6 = all ones, Y5 = 0x10 bytes. Clobbers AX, Y12.
#define BITS5(off) \
	MOVL         off(SI), AX \
	VMOVD        AX, X12 \
	VPBROADCASTD X12, Y12 \
	VPSHUFB      Y8, Y12, Y12 \
	VPOR         Y7, Y12, Y12 \
	VPCMPEQB     Y6, Y12, Y12 \
	VPAND        Y5, Y12, Y12 \
	VPOR         Y12, Y1, Y1

// DOTOFF leaves in Y2 the 8 int32 partial sums of (Y1 - Y9) . a[aoff], Y9 the offset bytes.
// Needs Y10 = int16 ones. Clobbers Y3.
#define DOTOFF(aoff) \
	VPMADDUBSW aoff(DI), Y1, Y2 \
	VPMADDUBSW aoff(DI), Y9, Y3 \
	VPSUBW     Y3, Y2, Y2 \
	VPMADDWD   Y10, Y2, Y2

#define BYTECONST(v, x, y) \
	MOVL         v, AX \
	VMOVD        AX, x \
	VPBROADCASTD x, y

#define LEGACYCONSTS \
	BYTECONST($0x0f0f0f0f, X11, Y11) \
	BYTECONST($0x00010001, X10, Y10) \
	BYTECONST($0x10101010, X5, Y5) \
	VMOVDQU  bits5Shuf<>(SB), Y8 \
	VMOVDQU  bits5Mask<>(SB), Y7 \
	VPCMPEQB Y6, Y6, Y6

// Q5_K block: fp16 d @0, fp16 dmin @2, scales[12] @4 (as Q4_K), qh[32] @16, qs[128] @48
// (176 bytes). Element 64j+l has fifth bit 2j of qh[l], element 64j+32+l bit 2j+1.

// func dotQ5_KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ5_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       Y0, Y0, Y0
	VXORPS       X14, X14, X14
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $0x10101010, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	TESTQ        CX, CX
	JZ           q5ka2done

q5ka2loop:
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  BX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	ANDL  $0x3f3f3f3f, R10
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, DX
	ANDL  $0x3f3f3f3f, AX
	SHLQ  $32, DX
	ORQ   DX, AX
	SHLQ  $32, R8
	ORQ   R8, R10

	VMOVQ       AX, X1
	VPMOVZXBW   X1, X1
	VINSERTI128 $1, X1, Y1, Y1
	VMOVQ       R10, X2
	VPMOVZXBW   X2, X2
	VMOVDQU     260(DI), X3
	VPHADDW     276(DI), X3, X3
	VPMADDWD    X3, X2, X3
	VPHADDD     X3, X3, X3
	VPHADDD     X3, X3, X3
	VCVTDQ2PS   X3, X3

	VMOVDQU 16(SI), Y13
	VPXOR   Y2, Y2, Y2

	VMOVDQU    48(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPSLLW     $4, Y13, Y8
	VPAND      Y12, Y8, Y8
	VPOR       Y8, Y4, Y4
	VPSLLW     $3, Y13, Y8
	VPAND      Y12, Y8, Y8
	VPOR       Y8, Y5, Y5
	VPMADDUBSW 4(DI), Y4, Y4
	VPMADDUBSW 36(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+0(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+32(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y4, Y2, Y2
	VPADDD     Y5, Y2, Y2

	VMOVDQU    80(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPSLLW     $2, Y13, Y8
	VPAND      Y12, Y8, Y8
	VPOR       Y8, Y4, Y4
	VPSLLW     $1, Y13, Y8
	VPAND      Y12, Y8, Y8
	VPOR       Y8, Y5, Y5
	VPMADDUBSW 68(DI), Y4, Y4
	VPMADDUBSW 100(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+64(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+96(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y4, Y2, Y2
	VPADDD     Y5, Y2, Y2

	VMOVDQU    112(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPAND      Y12, Y13, Y8
	VPOR       Y8, Y4, Y4
	VPSRLW     $1, Y13, Y8
	VPAND      Y12, Y8, Y8
	VPOR       Y8, Y5, Y5
	VPMADDUBSW 132(DI), Y4, Y4
	VPMADDUBSW 164(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+128(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+160(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y4, Y2, Y2
	VPADDD     Y5, Y2, Y2

	VMOVDQU    144(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPSRLW     $2, Y13, Y8
	VPAND      Y12, Y8, Y8
	VPOR       Y8, Y4, Y4
	VPSRLW     $3, Y13, Y8
	VPAND      Y12, Y8, Y8
	VPOR       Y8, Y5, Y5
	VPMADDUBSW 196(DI), Y4, Y4
	VPMADDUBSW 228(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+192(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+224(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y4, Y2, Y2
	VPADDD     Y5, Y2, Y2

	VCVTDQ2PS Y2, Y2

	MOVL         (SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VBROADCASTSS (DI), X9
	VMULPS       X9, X8, X8
	VBROADCASTSS X8, Y9
	VMOVSHDUP    X8, X10
	VBROADCASTSS X10, Y10
	VFMADD231PS  Y9, Y2, Y0
	VFNMADD231SS X10, X3, X14

	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q5ka2loop

q5ka2done:
	REDUCE8
	VADDSS X14, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q3_K block: hmask[32] @0, qs[64] @32, 6-bit scales (bias 32) packed in 12 bytes @96,
// fp16 d @108 (110 bytes). Element 128n+32j+l: 2 bits at shift 2j of qs[32n+l], high bit
// 4n+j of hmask[l], scale 8n+2j+(l>=16). q = bits - 4*(1-high): VPMADDUBSW(bits, a) minus
// VPMADDUBSW(4 where the high bit is clear, a), per int16 pair.

// func dotQ3_KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ3_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       Y0, Y0, Y0
	MOVL         $0x03030303, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $0x04040404, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	MOVL         $0x00200020, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	TESTQ        CX, CX
	JZ           q3ka2done

q3ka2loop:
	// Unpack the 16 scales (unbiased later) into AX (0..7) and BX (8..15).
	MOVL  96(SI), AX
	MOVL  100(SI), BX
	MOVL  104(SI), DX
	MOVL  AX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  DX, R9
	SHRL  $4, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	SHRL  $4, R10
	ANDL  $0x0f0f0f0f, R10
	MOVL  DX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R10
	ANDL  $0x0f0f0f0f, AX
	MOVL  DX, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, AX
	ANDL  $0x0f0f0f0f, BX
	MOVL  DX, R9
	SHRL  $2, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, BX
	SHLQ  $32, BX
	ORQ   BX, AX
	SHLQ  $32, R10
	ORQ   R10, R8

	// Y9: the 16 scales as signed words.
	VMOVQ     AX, X9
	VPINSRQ   $1, R8, X9, X9
	VPMOVZXBW X9, Y9
	VPSUBW    Y13, Y9, Y9

	VMOVDQU (SI), Y10
	VPXOR   Y2, Y2, Y2

	VMOVDQU 32(SI), Y4
	VPERMQ  $0x44, Y9, Y1
	VPAND      Y11, Y4, Y5
	VPSLLW     $2, Y10, Y6
	VPANDN     Y12, Y6, Y6
	VPMADDUBSW 4(DI), Y5, Y5
	VPMADDUBSW 4(DI), Y6, Y6
	VPSUBW     Y6, Y5, Y5
	VPSHUFB    q6kShuf<>+0(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $2, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPSLLW     $1, Y10, Y6
	VPANDN     Y12, Y6, Y6
	VPMADDUBSW 36(DI), Y5, Y5
	VPMADDUBSW 36(DI), Y6, Y6
	VPSUBW     Y6, Y5, Y5
	VPSHUFB    q6kShuf<>+32(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPANDN     Y12, Y10, Y6
	VPMADDUBSW 68(DI), Y5, Y5
	VPMADDUBSW 68(DI), Y6, Y6
	VPSUBW     Y6, Y5, Y5
	VPSHUFB    q6kShuf<>+64(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $6, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPSRLW     $1, Y10, Y6
	VPANDN     Y12, Y6, Y6
	VPMADDUBSW 100(DI), Y5, Y5
	VPMADDUBSW 100(DI), Y6, Y6
	VPSUBW     Y6, Y5, Y5
	VPSHUFB    q6kShuf<>+96(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2

	VMOVDQU 64(SI), Y4
	VPERMQ  $0xEE, Y9, Y1
	VPAND      Y11, Y4, Y5
	VPSRLW     $2, Y10, Y6
	VPANDN     Y12, Y6, Y6
	VPMADDUBSW 132(DI), Y5, Y5
	VPMADDUBSW 132(DI), Y6, Y6
	VPSUBW     Y6, Y5, Y5
	VPSHUFB    q6kShuf<>+0(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $2, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPSRLW     $3, Y10, Y6
	VPANDN     Y12, Y6, Y6
	VPMADDUBSW 164(DI), Y5, Y5
	VPMADDUBSW 164(DI), Y6, Y6
	VPSUBW     Y6, Y5, Y5
	VPSHUFB    q6kShuf<>+32(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPSRLW     $4, Y10, Y6
	VPANDN     Y12, Y6, Y6
	VPMADDUBSW 196(DI), Y5, Y5
	VPMADDUBSW 196(DI), Y6, Y6
	VPSUBW     Y6, Y5, Y5
	VPSHUFB    q6kShuf<>+64(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $6, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPSRLW     $5, Y10, Y6
	VPANDN     Y12, Y6, Y6
	VPMADDUBSW 228(DI), Y5, Y5
	VPMADDUBSW 228(DI), Y6, Y6
	VPSUBW     Y6, Y5, Y5
	VPSHUFB    q6kShuf<>+96(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2

	VCVTDQ2PS Y2, Y2

	MOVWLZX      108(SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VMULSS       (DI), X8, X8
	VBROADCASTSS X8, Y8
	VFMADD231PS  Y8, Y2, Y0

	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q3ka2loop

q3ka2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q2_K block: scales[16] @0 (low nibble scale, high nibble min), qs[64] @16, fp16 d @80,
// fp16 dmin @82 (84 bytes). Element layout as Q3_K's low bits.

// func dotQ2_KAVX2(w, a *byte, nb int) float32
TEXT ·dotQ2_KAVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       Y0, Y0, Y0
	MOVL         $0x03030303, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	TESTQ        CX, CX
	JZ           q2ka2done

q2ka2loop:
	VMOVDQU   (SI), X9
	VPSRLW    $4, X9, X3
	VPAND     X12, X9, X9
	VPAND     X12, X3, X3
	VPMOVZXBW X9, Y9
	VPMOVZXBW X3, Y3
	VPMADDWD  260(DI), Y3, Y3
	VCVTDQ2PS Y3, Y3
	VPXOR     Y2, Y2, Y2

	VMOVDQU 16(SI), Y4
	VPERMQ  $0x44, Y9, Y1
	VPAND      Y11, Y4, Y5
	VPMADDUBSW 4(DI), Y5, Y5
	VPSHUFB    q6kShuf<>+0(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $2, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 36(DI), Y5, Y5
	VPSHUFB    q6kShuf<>+32(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 68(DI), Y5, Y5
	VPSHUFB    q6kShuf<>+64(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $6, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 100(DI), Y5, Y5
	VPSHUFB    q6kShuf<>+96(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2

	VMOVDQU 48(SI), Y4
	VPERMQ  $0xEE, Y9, Y1
	VPAND      Y11, Y4, Y5
	VPMADDUBSW 132(DI), Y5, Y5
	VPSHUFB    q6kShuf<>+0(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $2, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 164(DI), Y5, Y5
	VPSHUFB    q6kShuf<>+32(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 196(DI), Y5, Y5
	VPSHUFB    q6kShuf<>+64(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2
	VPSRLW     $6, Y4, Y5
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 228(DI), Y5, Y5
	VPSHUFB    q6kShuf<>+96(SB), Y1, Y7
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y2, Y2

	VCVTDQ2PS Y2, Y2

	MOVL         80(SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VBROADCASTSS (DI), X9
	VMULPS       X9, X8, X8
	VBROADCASTSS X8, Y9
	VMOVSHDUP    X8, X10
	VBROADCASTSS X10, Y10
	VFNMADD231PS Y10, Y3, Y0
	VFMADD231PS  Y9, Y2, Y0

	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q2ka2loop

q2ka2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---------------------------------------------------------------------------
// Table (non-linear) 4-bit types: the nibble is looked up with VPSHUFB into signed int8 values
// v, and sum v*a uses VPMADDUBSW(|v|, sign(a, v)). |v| <= 127 and |a| <= 127 (activations
// from QuantizeActivations never hold -128), so no int16 pair saturates: exact on that domain.

DATA iq4nlTab<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4nlTab<>+8(SB)/8, $0x7159453526190d01
DATA iq4nlTab<>+16(SB)/8, $0xf6eaddcfbfad9881
DATA iq4nlTab<>+24(SB)/8, $0x7159453526190d01
GLOBL iq4nlTab<>(SB), RODATA|NOPTR, $32
DATA mxfp4Tab<>+0(SB)/8, $0x0c08060403020100
DATA mxfp4Tab<>+8(SB)/8, $0xf4f8fafcfdfeff00
DATA mxfp4Tab<>+16(SB)/8, $0x0c08060403020100
DATA mxfp4Tab<>+24(SB)/8, $0xf4f8fafcfdfeff00
GLOBL mxfp4Tab<>(SB), RODATA|NOPTR, $32

// e8m0Half<>[e] is float32 2^(e-128) (ggml's E8M0_TO_FP32_HALF), as bits.
DATA e8m0Half<>+0(SB)/8, $0x0040000000200000
DATA e8m0Half<>+8(SB)/8, $0x0100000000800000
DATA e8m0Half<>+16(SB)/8, $0x0200000001800000
DATA e8m0Half<>+24(SB)/8, $0x0300000002800000
DATA e8m0Half<>+32(SB)/8, $0x0400000003800000
DATA e8m0Half<>+40(SB)/8, $0x0500000004800000
DATA e8m0Half<>+48(SB)/8, $0x0600000005800000
DATA e8m0Half<>+56(SB)/8, $0x0700000006800000
DATA e8m0Half<>+64(SB)/8, $0x0800000007800000
DATA e8m0Half<>+72(SB)/8, $0x0900000008800000
DATA e8m0Half<>+80(SB)/8, $0x0a00000009800000
DATA e8m0Half<>+88(SB)/8, $0x0b0000000a800000
DATA e8m0Half<>+96(SB)/8, $0x0c0000000b800000
DATA e8m0Half<>+104(SB)/8, $0x0d0000000c800000
DATA e8m0Half<>+112(SB)/8, $0x0e0000000d800000
DATA e8m0Half<>+120(SB)/8, $0x0f0000000e800000
DATA e8m0Half<>+128(SB)/8, $0x100000000f800000
DATA e8m0Half<>+136(SB)/8, $0x1100000010800000
DATA e8m0Half<>+144(SB)/8, $0x1200000011800000
DATA e8m0Half<>+152(SB)/8, $0x1300000012800000
DATA e8m0Half<>+160(SB)/8, $0x1400000013800000
DATA e8m0Half<>+168(SB)/8, $0x1500000014800000
DATA e8m0Half<>+176(SB)/8, $0x1600000015800000
DATA e8m0Half<>+184(SB)/8, $0x1700000016800000
DATA e8m0Half<>+192(SB)/8, $0x1800000017800000
DATA e8m0Half<>+200(SB)/8, $0x1900000018800000
DATA e8m0Half<>+208(SB)/8, $0x1a00000019800000
DATA e8m0Half<>+216(SB)/8, $0x1b0000001a800000
DATA e8m0Half<>+224(SB)/8, $0x1c0000001b800000
DATA e8m0Half<>+232(SB)/8, $0x1d0000001c800000
DATA e8m0Half<>+240(SB)/8, $0x1e0000001d800000
DATA e8m0Half<>+248(SB)/8, $0x1f0000001e800000
DATA e8m0Half<>+256(SB)/8, $0x200000001f800000
DATA e8m0Half<>+264(SB)/8, $0x2100000020800000
DATA e8m0Half<>+272(SB)/8, $0x2200000021800000
DATA e8m0Half<>+280(SB)/8, $0x2300000022800000
DATA e8m0Half<>+288(SB)/8, $0x2400000023800000
DATA e8m0Half<>+296(SB)/8, $0x2500000024800000
DATA e8m0Half<>+304(SB)/8, $0x2600000025800000
DATA e8m0Half<>+312(SB)/8, $0x2700000026800000
DATA e8m0Half<>+320(SB)/8, $0x2800000027800000
DATA e8m0Half<>+328(SB)/8, $0x2900000028800000
DATA e8m0Half<>+336(SB)/8, $0x2a00000029800000
DATA e8m0Half<>+344(SB)/8, $0x2b0000002a800000
DATA e8m0Half<>+352(SB)/8, $0x2c0000002b800000
DATA e8m0Half<>+360(SB)/8, $0x2d0000002c800000
DATA e8m0Half<>+368(SB)/8, $0x2e0000002d800000
DATA e8m0Half<>+376(SB)/8, $0x2f0000002e800000
DATA e8m0Half<>+384(SB)/8, $0x300000002f800000
DATA e8m0Half<>+392(SB)/8, $0x3100000030800000
DATA e8m0Half<>+400(SB)/8, $0x3200000031800000
DATA e8m0Half<>+408(SB)/8, $0x3300000032800000
DATA e8m0Half<>+416(SB)/8, $0x3400000033800000
DATA e8m0Half<>+424(SB)/8, $0x3500000034800000
DATA e8m0Half<>+432(SB)/8, $0x3600000035800000
DATA e8m0Half<>+440(SB)/8, $0x3700000036800000
DATA e8m0Half<>+448(SB)/8, $0x3800000037800000
DATA e8m0Half<>+456(SB)/8, $0x3900000038800000
DATA e8m0Half<>+464(SB)/8, $0x3a00000039800000
DATA e8m0Half<>+472(SB)/8, $0x3b0000003a800000
DATA e8m0Half<>+480(SB)/8, $0x3c0000003b800000
DATA e8m0Half<>+488(SB)/8, $0x3d0000003c800000
DATA e8m0Half<>+496(SB)/8, $0x3e0000003d800000
DATA e8m0Half<>+504(SB)/8, $0x3f0000003e800000
DATA e8m0Half<>+512(SB)/8, $0x400000003f800000
DATA e8m0Half<>+520(SB)/8, $0x4100000040800000
DATA e8m0Half<>+528(SB)/8, $0x4200000041800000
DATA e8m0Half<>+536(SB)/8, $0x4300000042800000
DATA e8m0Half<>+544(SB)/8, $0x4400000043800000
DATA e8m0Half<>+552(SB)/8, $0x4500000044800000
DATA e8m0Half<>+560(SB)/8, $0x4600000045800000
DATA e8m0Half<>+568(SB)/8, $0x4700000046800000
DATA e8m0Half<>+576(SB)/8, $0x4800000047800000
DATA e8m0Half<>+584(SB)/8, $0x4900000048800000
DATA e8m0Half<>+592(SB)/8, $0x4a00000049800000
DATA e8m0Half<>+600(SB)/8, $0x4b0000004a800000
DATA e8m0Half<>+608(SB)/8, $0x4c0000004b800000
DATA e8m0Half<>+616(SB)/8, $0x4d0000004c800000
DATA e8m0Half<>+624(SB)/8, $0x4e0000004d800000
DATA e8m0Half<>+632(SB)/8, $0x4f0000004e800000
DATA e8m0Half<>+640(SB)/8, $0x500000004f800000
DATA e8m0Half<>+648(SB)/8, $0x5100000050800000
DATA e8m0Half<>+656(SB)/8, $0x5200000051800000
DATA e8m0Half<>+664(SB)/8, $0x5300000052800000
DATA e8m0Half<>+672(SB)/8, $0x5400000053800000
DATA e8m0Half<>+680(SB)/8, $0x5500000054800000
DATA e8m0Half<>+688(SB)/8, $0x5600000055800000
DATA e8m0Half<>+696(SB)/8, $0x5700000056800000
DATA e8m0Half<>+704(SB)/8, $0x5800000057800000
DATA e8m0Half<>+712(SB)/8, $0x5900000058800000
DATA e8m0Half<>+720(SB)/8, $0x5a00000059800000
DATA e8m0Half<>+728(SB)/8, $0x5b0000005a800000
DATA e8m0Half<>+736(SB)/8, $0x5c0000005b800000
DATA e8m0Half<>+744(SB)/8, $0x5d0000005c800000
DATA e8m0Half<>+752(SB)/8, $0x5e0000005d800000
DATA e8m0Half<>+760(SB)/8, $0x5f0000005e800000
DATA e8m0Half<>+768(SB)/8, $0x600000005f800000
DATA e8m0Half<>+776(SB)/8, $0x6100000060800000
DATA e8m0Half<>+784(SB)/8, $0x6200000061800000
DATA e8m0Half<>+792(SB)/8, $0x6300000062800000
DATA e8m0Half<>+800(SB)/8, $0x6400000063800000
DATA e8m0Half<>+808(SB)/8, $0x6500000064800000
DATA e8m0Half<>+816(SB)/8, $0x6600000065800000
DATA e8m0Half<>+824(SB)/8, $0x6700000066800000
DATA e8m0Half<>+832(SB)/8, $0x6800000067800000
DATA e8m0Half<>+840(SB)/8, $0x6900000068800000
DATA e8m0Half<>+848(SB)/8, $0x6a00000069800000
DATA e8m0Half<>+856(SB)/8, $0x6b0000006a800000
DATA e8m0Half<>+864(SB)/8, $0x6c0000006b800000
DATA e8m0Half<>+872(SB)/8, $0x6d0000006c800000
DATA e8m0Half<>+880(SB)/8, $0x6e0000006d800000
DATA e8m0Half<>+888(SB)/8, $0x6f0000006e800000
DATA e8m0Half<>+896(SB)/8, $0x700000006f800000
DATA e8m0Half<>+904(SB)/8, $0x7100000070800000
DATA e8m0Half<>+912(SB)/8, $0x7200000071800000
DATA e8m0Half<>+920(SB)/8, $0x7300000072800000
DATA e8m0Half<>+928(SB)/8, $0x7400000073800000
DATA e8m0Half<>+936(SB)/8, $0x7500000074800000
DATA e8m0Half<>+944(SB)/8, $0x7600000075800000
DATA e8m0Half<>+952(SB)/8, $0x7700000076800000
DATA e8m0Half<>+960(SB)/8, $0x7800000077800000
DATA e8m0Half<>+968(SB)/8, $0x7900000078800000
DATA e8m0Half<>+976(SB)/8, $0x7a00000079800000
DATA e8m0Half<>+984(SB)/8, $0x7b0000007a800000
DATA e8m0Half<>+992(SB)/8, $0x7c0000007b800000
DATA e8m0Half<>+1000(SB)/8, $0x7d0000007c800000
DATA e8m0Half<>+1008(SB)/8, $0x7e0000007d800000
DATA e8m0Half<>+1016(SB)/8, $0x7f0000007e800000
GLOBL e8m0Half<>(SB), RODATA|NOPTR, $1024

// iq4xsShift<> holds the dword shifts 0, 2, ..., 14 of the 2-bit high scale parts.
DATA iq4xsShift<>+0(SB)/8, $0x0000000200000000
DATA iq4xsShift<>+8(SB)/8, $0x0000000600000004
DATA iq4xsShift<>+16(SB)/8, $0x0000000a00000008
DATA iq4xsShift<>+24(SB)/8, $0x0000000e0000000c
GLOBL iq4xsShift<>(SB), RODATA|NOPTR, $32

// TABDOT leaves in Y2 the 8 int32 partial sums of tab[Y1] . a[aoff] (Y13 = table in both
// lanes, Y10 = int16 ones or scales). Clobbers Y3, Y12.
#define TABDOT(aoff, mul) \
	VPSHUFB    Y1, Y13, Y3 \
	VMOVDQU    aoff(DI), Y12 \
	VPSIGNB    Y3, Y12, Y12 \
	VPSIGNB    Y3, Y3, Y3 \
	VPMADDUBSW Y12, Y3, Y2 \
	VPMADDWD   mul, Y2, Y2

// MXFP4 block: uint8 e (E8M0) @0, qs[16] @1 (17 bytes).

// IQ4_XS block: fp16 d @0, uint16 scales_h @2, scales_l[4] @4, qs[128] @8 (136 bytes).
// Sub-block ib (32 elements, nibbles as IQ4_NL) has scale
// (nibble ib of scales_l | 2 bits 2ib of scales_h << 4) - 32.

// func dotIQ4_XSAVX2(w, a *byte, nb int) float32
TEXT ·dotIQ4_XSAVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	BYTECONST($0x0f0f0f0f, X11, Y11)
	BYTECONST($0x00000003, X9, Y9)
	BYTECONST($0x00000020, X8, Y8)
	VMOVDQU iq4nlTab<>(SB), Y13
	VMOVDQU iq4xsShift<>(SB), Y7
	TESTQ  CX, CX
	JZ     iq4xsa2done

iq4xsa2loop:
	// Y15: the 8 scales as words, in both lanes.
	VMOVD        4(SI), X5
	VPSRLW       $4, X5, X6
	VPAND        X11, X5, X5
	VPAND        X11, X6, X6
	VPUNPCKLBW   X6, X5, X5
	VPMOVZXBD    X5, Y5
	MOVWLZX      2(SI), AX
	VMOVD        AX, X6
	VPBROADCASTD X6, Y6
	VPSRLVD      Y7, Y6, Y6
	VPAND        Y9, Y6, Y6
	VPSLLD       $4, Y6, Y6
	VPOR         Y6, Y5, Y5
	VPSUBD       Y8, Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPACKSSDW    X6, X5, X5
	VINSERTI128  $1, X5, Y5, Y15
	VPXOR        Y14, Y14, Y14

	LOADQ4(8)
	VPSHUFB q4kShuf<>+0(SB), Y15, Y10
	TABDOT(4, Y10)
	VPADDD  Y2, Y14, Y14

	LOADQ4(24)
	VPSHUFB q4kShuf<>+32(SB), Y15, Y10
	TABDOT(36, Y10)
	VPADDD  Y2, Y14, Y14

	LOADQ4(40)
	VPSHUFB q4kShuf<>+64(SB), Y15, Y10
	TABDOT(68, Y10)
	VPADDD  Y2, Y14, Y14

	LOADQ4(56)
	VPSHUFB q4kShuf<>+96(SB), Y15, Y10
	TABDOT(100, Y10)
	VPADDD  Y2, Y14, Y14

	LOADQ4(72)
	VPSHUFB q4kShuf<>+128(SB), Y15, Y10
	TABDOT(132, Y10)
	VPADDD  Y2, Y14, Y14

	LOADQ4(88)
	VPSHUFB q4kShuf<>+160(SB), Y15, Y10
	TABDOT(164, Y10)
	VPADDD  Y2, Y14, Y14

	LOADQ4(104)
	VPSHUFB q4kShuf<>+192(SB), Y15, Y10
	TABDOT(196, Y10)
	VPADDD  Y2, Y14, Y14

	LOADQ4(120)
	VPSHUFB q4kShuf<>+224(SB), Y15, Y10
	TABDOT(228, Y10)
	VPADDD  Y2, Y14, Y14

	VCVTDQ2PS    Y14, Y14
	MOVWLZX      (SI), AX
	VMOVD        AX, X4
	VCVTPH2PS    X4, X4
	VMULSS       (DI), X4, X4
	VBROADCASTSS X4, Y4
	VFMADD231PS  Y4, Y14, Y0
	ADDQ         $136, SI
	ADDQ         $292, DI
	DECQ         CX
	JNZ          iq4xsa2loop

iq4xsa2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---------------------------------------------------------------------------
// Four-row variants for DotRows: one weight row against 4 activation rows at a (row r at
// a + r*stride), unpacking each weight block once. Per row they perform exactly the
// operations of the one-row kernel in the same order, so out[r] is bit-identical to it.

// func dotQ4_KRows4AVX2(w, a *byte, stride, nb int, out *float32)
TEXT ·dotQ4_KRows4AVX2(SB), NOSPLIT, $64-40
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   stride+16(FP), R12
	MOVQ   nb+24(FP), CX
	LEAQ   (R12)(R12*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS X15, X15, X15
	VMOVUPS X15, 0(SP)
	VMOVUPS X15, 16(SP)
	VMOVUPS X15, 32(SP)
	VMOVUPS X15, 48(SP)
	TESTQ  CX, CX
	JZ     dotQ4_KRows4AVX2done

dotQ4_KRows4AVX2loop:
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  BX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	ANDL  $0x3f3f3f3f, R10
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, DX
	ANDL  $0x3f3f3f3f, AX
	SHLQ  $32, DX
	ORQ   DX, AX
	SHLQ  $32, R8
	ORQ   R8, R10
	VMOVQ       AX, X13
	VPMOVZXBW   X13, X13
	VINSERTI128 $1, X13, Y13, Y13
	VPXOR       Y4, Y4, Y4
	VPXOR       Y5, Y5, Y5
	VPXOR       Y6, Y6, Y6
	VPXOR       Y7, Y7, Y7
	VMOVDQU    16(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSHUFB    q4kShuf<>+0(SB), Y13, Y10
	VPSHUFB    q4kShuf<>+32(SB), Y13, Y11
	VPMADDUBSW 4(DI), Y8, Y14
	VPMADDUBSW 36(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y4, Y4
	VPADDD     Y15, Y4, Y4
	VPMADDUBSW 4(DI)(R12*1), Y8, Y14
	VPMADDUBSW 36(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y5, Y5
	VPADDD     Y15, Y5, Y5
	VPMADDUBSW 4(DI)(R12*2), Y8, Y14
	VPMADDUBSW 36(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y6, Y6
	VPADDD     Y15, Y6, Y6
	VPMADDUBSW 4(DI)(R13*1), Y8, Y14
	VPMADDUBSW 36(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y7, Y7
	VPADDD     Y15, Y7, Y7
	VMOVDQU    48(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSHUFB    q4kShuf<>+64(SB), Y13, Y10
	VPSHUFB    q4kShuf<>+96(SB), Y13, Y11
	VPMADDUBSW 68(DI), Y8, Y14
	VPMADDUBSW 100(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y4, Y4
	VPADDD     Y15, Y4, Y4
	VPMADDUBSW 68(DI)(R12*1), Y8, Y14
	VPMADDUBSW 100(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y5, Y5
	VPADDD     Y15, Y5, Y5
	VPMADDUBSW 68(DI)(R12*2), Y8, Y14
	VPMADDUBSW 100(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y6, Y6
	VPADDD     Y15, Y6, Y6
	VPMADDUBSW 68(DI)(R13*1), Y8, Y14
	VPMADDUBSW 100(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y7, Y7
	VPADDD     Y15, Y7, Y7
	VMOVDQU    80(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSHUFB    q4kShuf<>+128(SB), Y13, Y10
	VPSHUFB    q4kShuf<>+160(SB), Y13, Y11
	VPMADDUBSW 132(DI), Y8, Y14
	VPMADDUBSW 164(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y4, Y4
	VPADDD     Y15, Y4, Y4
	VPMADDUBSW 132(DI)(R12*1), Y8, Y14
	VPMADDUBSW 164(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y5, Y5
	VPADDD     Y15, Y5, Y5
	VPMADDUBSW 132(DI)(R12*2), Y8, Y14
	VPMADDUBSW 164(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y6, Y6
	VPADDD     Y15, Y6, Y6
	VPMADDUBSW 132(DI)(R13*1), Y8, Y14
	VPMADDUBSW 164(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y7, Y7
	VPADDD     Y15, Y7, Y7
	VMOVDQU    112(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSHUFB    q4kShuf<>+192(SB), Y13, Y10
	VPSHUFB    q4kShuf<>+224(SB), Y13, Y11
	VPMADDUBSW 196(DI), Y8, Y14
	VPMADDUBSW 228(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y4, Y4
	VPADDD     Y15, Y4, Y4
	VPMADDUBSW 196(DI)(R12*1), Y8, Y14
	VPMADDUBSW 228(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y5, Y5
	VPADDD     Y15, Y5, Y5
	VPMADDUBSW 196(DI)(R12*2), Y8, Y14
	VPMADDUBSW 228(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y6, Y6
	VPADDD     Y15, Y6, Y6
	VPMADDUBSW 196(DI)(R13*1), Y8, Y14
	VPMADDUBSW 228(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y7, Y7
	VPADDD     Y15, Y7, Y7
	VMOVQ       R10, X12
	VPMOVZXBW   X12, X12
	MOVL        (SI), AX
	VMOVD       AX, X8
	VCVTPH2PS   X8, X8
	VMOVDQU      260(DI), X14
	VPHADDW      276(DI), X14, X14
	VPMADDWD     X14, X12, X14
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    Y4, Y4
	VBROADCASTSS 0(DI), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFMADD231PS  Y10, Y4, Y0
	VMOVUPS      0(SP), X15
	VFNMADD231PS X11, X14, X15
	VMOVUPS      X15, 0(SP)
	VMOVDQU      260(DI)(R12*1), X14
	VPHADDW      276(DI)(R12*1), X14, X14
	VPMADDWD     X14, X12, X14
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    Y5, Y5
	VBROADCASTSS 0(DI)(R12*1), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFMADD231PS  Y10, Y5, Y1
	VMOVUPS      16(SP), X15
	VFNMADD231PS X11, X14, X15
	VMOVUPS      X15, 16(SP)
	VMOVDQU      260(DI)(R12*2), X14
	VPHADDW      276(DI)(R12*2), X14, X14
	VPMADDWD     X14, X12, X14
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    Y6, Y6
	VBROADCASTSS 0(DI)(R12*2), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFMADD231PS  Y10, Y6, Y2
	VMOVUPS      32(SP), X15
	VFNMADD231PS X11, X14, X15
	VMOVUPS      X15, 32(SP)
	VMOVDQU      260(DI)(R13*1), X14
	VPHADDW      276(DI)(R13*1), X14, X14
	VPMADDWD     X14, X12, X14
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    Y7, Y7
	VBROADCASTSS 0(DI)(R13*1), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFMADD231PS  Y10, Y7, Y3
	VMOVUPS      48(SP), X15
	VFNMADD231PS X11, X14, X15
	VMOVUPS      X15, 48(SP)
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  dotQ4_KRows4AVX2loop

dotQ4_KRows4AVX2done:
	MOVQ out+32(FP), AX
	VEXTRACTF128 $1, Y0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0x4E, X0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0xB1, X0, X15
	VADDPS       X15, X0, X0
	VMOVUPS      0(SP), X14
	VPERMILPS    $0x4E, X14, X15
	VADDPS       X15, X14, X14
	VPERMILPS    $0xB1, X14, X15
	VADDPS       X15, X14, X14
	VADDSS       X14, X0, X0
	VMOVSS       X0, 0(AX)
	VEXTRACTF128 $1, Y1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0x4E, X1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0xB1, X1, X15
	VADDPS       X15, X1, X1
	VMOVUPS      16(SP), X14
	VPERMILPS    $0x4E, X14, X15
	VADDPS       X15, X14, X14
	VPERMILPS    $0xB1, X14, X15
	VADDPS       X15, X14, X14
	VADDSS       X14, X1, X1
	VMOVSS       X1, 4(AX)
	VEXTRACTF128 $1, Y2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0x4E, X2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0xB1, X2, X15
	VADDPS       X15, X2, X2
	VMOVUPS      32(SP), X14
	VPERMILPS    $0x4E, X14, X15
	VADDPS       X15, X14, X14
	VPERMILPS    $0xB1, X14, X15
	VADDPS       X15, X14, X14
	VADDSS       X14, X2, X2
	VMOVSS       X2, 8(AX)
	VEXTRACTF128 $1, Y3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0x4E, X3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0xB1, X3, X15
	VADDPS       X15, X3, X3
	VMOVUPS      48(SP), X14
	VPERMILPS    $0x4E, X14, X15
	VADDPS       X15, X14, X14
	VPERMILPS    $0xB1, X14, X15
	VADDPS       X15, X14, X14
	VADDSS       X14, X3, X3
	VMOVSS       X3, 12(AX)
	VZEROUPPER
	RET

// func dotQ6_KRows4AVX2(w, a *byte, stride, nb int, out *float32)
TEXT ·dotQ6_KRows4AVX2(SB), NOSPLIT, $256-40
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   stride+16(FP), R12
	MOVQ   nb+24(FP), CX
	LEAQ   (R12)(R12*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ  CX, CX
	JZ     dotQ6_KRows4AVX2done

dotQ6_KRows4AVX2loop:
	VPMOVSXBW   192(SI), X13
	VINSERTI128 $1, X13, Y13, Y13
	VPSHUFB     q6kShuf<>+0(SB), Y13, Y14
	VMOVDQU     Y14, 0(SP)
	VPSHUFB     q6kShuf<>+32(SB), Y13, Y14
	VMOVDQU     Y14, 32(SP)
	VPSHUFB     q6kShuf<>+64(SB), Y13, Y14
	VMOVDQU     Y14, 64(SP)
	VPSHUFB     q6kShuf<>+96(SB), Y13, Y14
	VMOVDQU     Y14, 96(SP)
	VPMOVSXBW   200(SI), X13
	VINSERTI128 $1, X13, Y13, Y13
	VPSHUFB     q6kShuf<>+0(SB), Y13, Y14
	VMOVDQU     Y14, 128(SP)
	VPSHUFB     q6kShuf<>+32(SB), Y13, Y14
	VMOVDQU     Y14, 160(SP)
	VPSHUFB     q6kShuf<>+64(SB), Y13, Y14
	VMOVDQU     Y14, 192(SP)
	VPSHUFB     q6kShuf<>+96(SB), Y13, Y14
	VMOVDQU     Y14, 224(SP)
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VMOVDQU 0(SI), Y8
	VMOVDQU 32(SI), Y9
	VMOVDQU 128(SI), Y10
	VPAND       c0f<>(SB), Y8, Y11
	VPSLLW      $4, Y10, Y13
	VPAND       c30<>(SB), Y13, Y13
	VPOR        Y13, Y11, Y11
	VPMADDUBSW  4(DI), Y11, Y14
	VPMADDWD    0(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  4(DI)(R12*1), Y11, Y14
	VPMADDWD    0(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  4(DI)(R12*2), Y11, Y14
	VPMADDWD    0(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  4(DI)(R13*1), Y11, Y14
	VPMADDWD    0(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPAND       c0f<>(SB), Y9, Y11
	VPSLLW      $2, Y10, Y13
	VPAND       c30<>(SB), Y13, Y13
	VPOR        Y13, Y11, Y11
	VPMADDUBSW  36(DI), Y11, Y14
	VPMADDWD    32(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  36(DI)(R12*1), Y11, Y14
	VPMADDWD    32(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  36(DI)(R12*2), Y11, Y14
	VPMADDWD    32(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  36(DI)(R13*1), Y11, Y14
	VPMADDWD    32(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $4, Y8, Y11
	VPAND       c0f<>(SB), Y11, Y11
	VPAND       c30<>(SB), Y10, Y13
	VPOR        Y13, Y11, Y11
	VPMADDUBSW  68(DI), Y11, Y14
	VPMADDWD    64(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  68(DI)(R12*1), Y11, Y14
	VPMADDWD    64(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  68(DI)(R12*2), Y11, Y14
	VPMADDWD    64(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  68(DI)(R13*1), Y11, Y14
	VPMADDWD    64(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $4, Y9, Y11
	VPAND       c0f<>(SB), Y11, Y11
	VPSRLW      $2, Y10, Y13
	VPAND       c30<>(SB), Y13, Y13
	VPOR        Y13, Y11, Y11
	VPMADDUBSW  100(DI), Y11, Y14
	VPMADDWD    96(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  100(DI)(R12*1), Y11, Y14
	VPMADDWD    96(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  100(DI)(R12*2), Y11, Y14
	VPMADDWD    96(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  100(DI)(R13*1), Y11, Y14
	VPMADDWD    96(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU 64(SI), Y8
	VMOVDQU 96(SI), Y9
	VMOVDQU 160(SI), Y10
	VPAND       c0f<>(SB), Y8, Y11
	VPSLLW      $4, Y10, Y13
	VPAND       c30<>(SB), Y13, Y13
	VPOR        Y13, Y11, Y11
	VPMADDUBSW  132(DI), Y11, Y14
	VPMADDWD    128(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  132(DI)(R12*1), Y11, Y14
	VPMADDWD    128(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  132(DI)(R12*2), Y11, Y14
	VPMADDWD    128(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  132(DI)(R13*1), Y11, Y14
	VPMADDWD    128(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPAND       c0f<>(SB), Y9, Y11
	VPSLLW      $2, Y10, Y13
	VPAND       c30<>(SB), Y13, Y13
	VPOR        Y13, Y11, Y11
	VPMADDUBSW  164(DI), Y11, Y14
	VPMADDWD    160(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  164(DI)(R12*1), Y11, Y14
	VPMADDWD    160(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  164(DI)(R12*2), Y11, Y14
	VPMADDWD    160(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  164(DI)(R13*1), Y11, Y14
	VPMADDWD    160(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $4, Y8, Y11
	VPAND       c0f<>(SB), Y11, Y11
	VPAND       c30<>(SB), Y10, Y13
	VPOR        Y13, Y11, Y11
	VPMADDUBSW  196(DI), Y11, Y14
	VPMADDWD    192(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  196(DI)(R12*1), Y11, Y14
	VPMADDWD    192(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  196(DI)(R12*2), Y11, Y14
	VPMADDWD    192(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  196(DI)(R13*1), Y11, Y14
	VPMADDWD    192(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $4, Y9, Y11
	VPAND       c0f<>(SB), Y11, Y11
	VPSRLW      $2, Y10, Y13
	VPAND       c30<>(SB), Y13, Y13
	VPOR        Y13, Y11, Y11
	VPMADDUBSW  228(DI), Y11, Y14
	VPMADDWD    224(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  228(DI)(R12*1), Y11, Y14
	VPMADDWD    224(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  228(DI)(R12*2), Y11, Y14
	VPMADDWD    224(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  228(DI)(R13*1), Y11, Y14
	VPMADDWD    224(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPMOVSXBW 192(SI), Y8
	VPMADDWD  260(DI), Y8, Y14
	VPSLLD    $5, Y14, Y14
	VPSUBD    Y14, Y4, Y4
	VPMADDWD  260(DI)(R12*1), Y8, Y14
	VPSLLD    $5, Y14, Y14
	VPSUBD    Y14, Y5, Y5
	VPMADDWD  260(DI)(R12*2), Y8, Y14
	VPSLLD    $5, Y14, Y14
	VPSUBD    Y14, Y6, Y6
	VPMADDWD  260(DI)(R13*1), Y8, Y14
	VPSLLD    $5, Y14, Y14
	VPSUBD    Y14, Y7, Y7
	MOVWLZX   208(SI), AX
	VMOVD     AX, X8
	VCVTPH2PS X8, X8
	VCVTDQ2PS    Y4, Y4
	VMULSS       0(DI), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y4, Y0
	VCVTDQ2PS    Y5, Y5
	VMULSS       0(DI)(R12*1), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y5, Y1
	VCVTDQ2PS    Y6, Y6
	VMULSS       0(DI)(R12*2), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y6, Y2
	VCVTDQ2PS    Y7, Y7
	VMULSS       0(DI)(R13*1), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y7, Y3
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  dotQ6_KRows4AVX2loop

dotQ6_KRows4AVX2done:
	MOVQ out+32(FP), AX
	VEXTRACTF128 $1, Y0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0x4E, X0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0xB1, X0, X15
	VADDPS       X15, X0, X0
	VMOVSS       X0, 0(AX)
	VEXTRACTF128 $1, Y1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0x4E, X1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0xB1, X1, X15
	VADDPS       X15, X1, X1
	VMOVSS       X1, 4(AX)
	VEXTRACTF128 $1, Y2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0x4E, X2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0xB1, X2, X15
	VADDPS       X15, X2, X2
	VMOVSS       X2, 8(AX)
	VEXTRACTF128 $1, Y3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0x4E, X3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0xB1, X3, X15
	VADDPS       X15, X3, X3
	VMOVSS       X3, 12(AX)
	VZEROUPPER
	RET

DATA c0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL c0f<>(SB), RODATA|NOPTR, $32
DATA c30<>+0(SB)/8, $0x3030303030303030
DATA c30<>+8(SB)/8, $0x3030303030303030
DATA c30<>+16(SB)/8, $0x3030303030303030
DATA c30<>+24(SB)/8, $0x3030303030303030
GLOBL c30<>(SB), RODATA|NOPTR, $32
DATA c20<>+0(SB)/8, $0x2020202020202020
DATA c20<>+8(SB)/8, $0x2020202020202020
DATA c20<>+16(SB)/8, $0x2020202020202020
DATA c20<>+24(SB)/8, $0x2020202020202020
GLOBL c20<>(SB), RODATA|NOPTR, $32

// ---------------------------------------------------------------------------
// Q2_0 block: fp16 d @0, qs[16] @2 (18 bytes, 64 elements); element j is bits 2*(j%4) of
// qs[j/4], value q-1. Activations: two Q8_0 blocks per weight block. The 2-bit fields are
// split into 4 planes and re-interleaved (bytes, then words) into element order; the -1 is
// VPMADDUBSW(1, a) subtracted per int16 pair: exact for every int8 activation.

// func dotQ2_0AVX2(w, a *byte, nb int) float32
TEXT ·dotQ2_0AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	BYTECONST($0x03030303, X11, Y11)
	BYTECONST($0x00010001, X10, Y10)
	BYTECONST($0x01010101, X9, Y9)
	TESTQ  CX, CX
	JZ     q20a2done

q20a2loop:
	VMOVDQU     2(SI), X1
	VPAND       X11, X1, X4
	VPSRLW      $2, X1, X5
	VPAND       X11, X5, X5
	VPSRLW      $4, X1, X6
	VPAND       X11, X6, X6
	VPSRLW      $6, X1, X7
	VPAND       X11, X7, X7
	VPUNPCKLBW  X5, X4, X12
	VPUNPCKLBW  X7, X6, X13
	VPUNPCKHBW  X5, X4, X14
	VPUNPCKHBW  X7, X6, X15
	VPUNPCKLWD  X13, X12, X1
	VPUNPCKHWD  X13, X12, X2
	VINSERTI128 $1, X2, Y1, Y1
	VPUNPCKLWD  X15, X14, X8
	VPUNPCKHWD  X15, X14, X2
	VINSERTI128 $1, X2, Y8, Y8

	DOTOFF(2)
	VCVTDQ2PS   Y2, Y2
	SCALE2((SI), (DI), Y4)
	VFMADD231PS Y4, Y2, Y0
	VMOVDQA     Y8, Y1
	DOTOFF(36)
	VCVTDQ2PS   Y2, Y2
	SCALE2((SI), 34(DI), Y4)
	VFMADD231PS Y4, Y2, Y0

	ADDQ $18, SI
	ADDQ $68, DI
	DECQ CX
	JNZ  q20a2loop

q20a2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---------------------------------------------------------------------------
// AVX-512 (BW + VNNI) K-quant kernels: 64 elements per zmm, scales as word vectors picked
// by VPERMW and applied by VPDPWSSD. The 16 int32 lanes are folded to the 8 lanes of the
// AVX2 kernel (the upper 8 hold the very elements the AVX2 kernel adds into the same lanes),
// then the float part is the AVX2 kernel's, op for op: results are bit-identical to the
// AVX2 kernels (so the AVX2 4-row DotRows kernels match at this level too).

// q4kIdx512<>+64*j: words 2j (x16) then 2j+1 (x16).
DATA q4kIdx512<>+0(SB)/8, $0x0000000000000000
DATA q4kIdx512<>+8(SB)/8, $0x0000000000000000
DATA q4kIdx512<>+16(SB)/8, $0x0000000000000000
DATA q4kIdx512<>+24(SB)/8, $0x0000000000000000
DATA q4kIdx512<>+32(SB)/8, $0x0001000100010001
DATA q4kIdx512<>+40(SB)/8, $0x0001000100010001
DATA q4kIdx512<>+48(SB)/8, $0x0001000100010001
DATA q4kIdx512<>+56(SB)/8, $0x0001000100010001
DATA q4kIdx512<>+64(SB)/8, $0x0002000200020002
DATA q4kIdx512<>+72(SB)/8, $0x0002000200020002
DATA q4kIdx512<>+80(SB)/8, $0x0002000200020002
DATA q4kIdx512<>+88(SB)/8, $0x0002000200020002
DATA q4kIdx512<>+96(SB)/8, $0x0003000300030003
DATA q4kIdx512<>+104(SB)/8, $0x0003000300030003
DATA q4kIdx512<>+112(SB)/8, $0x0003000300030003
DATA q4kIdx512<>+120(SB)/8, $0x0003000300030003
DATA q4kIdx512<>+128(SB)/8, $0x0004000400040004
DATA q4kIdx512<>+136(SB)/8, $0x0004000400040004
DATA q4kIdx512<>+144(SB)/8, $0x0004000400040004
DATA q4kIdx512<>+152(SB)/8, $0x0004000400040004
DATA q4kIdx512<>+160(SB)/8, $0x0005000500050005
DATA q4kIdx512<>+168(SB)/8, $0x0005000500050005
DATA q4kIdx512<>+176(SB)/8, $0x0005000500050005
DATA q4kIdx512<>+184(SB)/8, $0x0005000500050005
DATA q4kIdx512<>+192(SB)/8, $0x0006000600060006
DATA q4kIdx512<>+200(SB)/8, $0x0006000600060006
DATA q4kIdx512<>+208(SB)/8, $0x0006000600060006
DATA q4kIdx512<>+216(SB)/8, $0x0006000600060006
DATA q4kIdx512<>+224(SB)/8, $0x0007000700070007
DATA q4kIdx512<>+232(SB)/8, $0x0007000700070007
DATA q4kIdx512<>+240(SB)/8, $0x0007000700070007
DATA q4kIdx512<>+248(SB)/8, $0x0007000700070007
GLOBL q4kIdx512<>(SB), RODATA|NOPTR, $256

// q6kIdx512<>+64*g: words 4g, 4g+1, 4g+2, 4g+3 (x8 each): the scales of 64 elements.
DATA q6kIdx512<>+0(SB)/8, $0x0000000000000000
DATA q6kIdx512<>+8(SB)/8, $0x0000000000000000
DATA q6kIdx512<>+16(SB)/8, $0x0001000100010001
DATA q6kIdx512<>+24(SB)/8, $0x0001000100010001
DATA q6kIdx512<>+32(SB)/8, $0x0002000200020002
DATA q6kIdx512<>+40(SB)/8, $0x0002000200020002
DATA q6kIdx512<>+48(SB)/8, $0x0003000300030003
DATA q6kIdx512<>+56(SB)/8, $0x0003000300030003
DATA q6kIdx512<>+64(SB)/8, $0x0004000400040004
DATA q6kIdx512<>+72(SB)/8, $0x0004000400040004
DATA q6kIdx512<>+80(SB)/8, $0x0005000500050005
DATA q6kIdx512<>+88(SB)/8, $0x0005000500050005
DATA q6kIdx512<>+96(SB)/8, $0x0006000600060006
DATA q6kIdx512<>+104(SB)/8, $0x0006000600060006
DATA q6kIdx512<>+112(SB)/8, $0x0007000700070007
DATA q6kIdx512<>+120(SB)/8, $0x0007000700070007
DATA q6kIdx512<>+128(SB)/8, $0x0008000800080008
DATA q6kIdx512<>+136(SB)/8, $0x0008000800080008
DATA q6kIdx512<>+144(SB)/8, $0x0009000900090009
DATA q6kIdx512<>+152(SB)/8, $0x0009000900090009
DATA q6kIdx512<>+160(SB)/8, $0x000a000a000a000a
DATA q6kIdx512<>+168(SB)/8, $0x000a000a000a000a
DATA q6kIdx512<>+176(SB)/8, $0x000b000b000b000b
DATA q6kIdx512<>+184(SB)/8, $0x000b000b000b000b
DATA q6kIdx512<>+192(SB)/8, $0x000c000c000c000c
DATA q6kIdx512<>+200(SB)/8, $0x000c000c000c000c
DATA q6kIdx512<>+208(SB)/8, $0x000d000d000d000d
DATA q6kIdx512<>+216(SB)/8, $0x000d000d000d000d
DATA q6kIdx512<>+224(SB)/8, $0x000e000e000e000e
DATA q6kIdx512<>+232(SB)/8, $0x000e000e000e000e
DATA q6kIdx512<>+240(SB)/8, $0x000f000f000f000f
DATA q6kIdx512<>+248(SB)/8, $0x000f000f000f000f
GLOBL q6kIdx512<>(SB), RODATA|NOPTR, $256

// q6kShl512<>: word shifts 4 (x16) then 2 (x16); q6kShr512<>: 0 (x16) then 2 (x16).
DATA q6kShl512<>+0(SB)/8, $0x0004000400040004
DATA q6kShl512<>+8(SB)/8, $0x0004000400040004
DATA q6kShl512<>+16(SB)/8, $0x0004000400040004
DATA q6kShl512<>+24(SB)/8, $0x0004000400040004
DATA q6kShl512<>+32(SB)/8, $0x0002000200020002
DATA q6kShl512<>+40(SB)/8, $0x0002000200020002
DATA q6kShl512<>+48(SB)/8, $0x0002000200020002
DATA q6kShl512<>+56(SB)/8, $0x0002000200020002
GLOBL q6kShl512<>(SB), RODATA|NOPTR, $64
DATA q6kShr512<>+0(SB)/8, $0x0000000000000000
DATA q6kShr512<>+8(SB)/8, $0x0000000000000000
DATA q6kShr512<>+16(SB)/8, $0x0000000000000000
DATA q6kShr512<>+24(SB)/8, $0x0000000000000000
DATA q6kShr512<>+32(SB)/8, $0x0002000200020002
DATA q6kShr512<>+40(SB)/8, $0x0002000200020002
DATA q6kShr512<>+48(SB)/8, $0x0002000200020002
DATA q6kShr512<>+56(SB)/8, $0x0002000200020002
GLOBL q6kShr512<>(SB), RODATA|NOPTR, $64

// func dotQ4_KAVX512(w, a *byte, nb int) float32
TEXT ·dotQ4_KAVX512(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       Y0, Y0, Y0
	VXORPS       X12, X12, X12
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z11
	VMOVDQU64    q4kIdx512<>+0(SB), Z20
	VMOVDQU64    q4kIdx512<>+64(SB), Z21
	VMOVDQU64    q4kIdx512<>+128(SB), Z22
	VMOVDQU64    q4kIdx512<>+192(SB), Z23
	TESTQ        CX, CX
	JZ           q4kz2done

q4kz2loop:
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  BX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	ANDL  $0x3f3f3f3f, R10
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, DX
	ANDL  $0x3f3f3f3f, AX
	SHLQ  $32, DX
	ORQ   DX, AX
	SHLQ  $32, R8
	ORQ   R8, R10

	VMOVQ       AX, X1
	VPMOVZXBW   X1, X1
	VMOVQ       R10, X2
	VPMOVZXBW   X2, X2
	VMOVDQU     260(DI), X3
	VPHADDW     276(DI), X3, X3
	VPMADDWD    X3, X2, X3
	VCVTDQ2PS   X3, X3

	VPXORD Z2, Z2, Z2

	VMOVDQU      16(SI), Y4
	VPSRLW       $4, Y4, Y5
	VINSERTI64X4 $1, Y5, Z4, Z4
	VPANDD       Z11, Z4, Z4
	VPMADDUBSW   4(DI), Z4, Z4
	VPERMW       Z1, Z20, Z6
	VPDPWSSD     Z6, Z4, Z2

	VMOVDQU      48(SI), Y4
	VPSRLW       $4, Y4, Y5
	VINSERTI64X4 $1, Y5, Z4, Z4
	VPANDD       Z11, Z4, Z4
	VPMADDUBSW   68(DI), Z4, Z4
	VPERMW       Z1, Z21, Z6
	VPDPWSSD     Z6, Z4, Z2

	VMOVDQU      80(SI), Y4
	VPSRLW       $4, Y4, Y5
	VINSERTI64X4 $1, Y5, Z4, Z4
	VPANDD       Z11, Z4, Z4
	VPMADDUBSW   132(DI), Z4, Z4
	VPERMW       Z1, Z22, Z6
	VPDPWSSD     Z6, Z4, Z2

	VMOVDQU      112(SI), Y4
	VPSRLW       $4, Y4, Y5
	VINSERTI64X4 $1, Y5, Z4, Z4
	VPANDD       Z11, Z4, Z4
	VPMADDUBSW   196(DI), Z4, Z4
	VPERMW       Z1, Z23, Z6
	VPDPWSSD     Z6, Z4, Z2

	VEXTRACTI64X4 $1, Z2, Y6
	VPADDD        Y6, Y2, Y2
	VCVTDQ2PS     Y2, Y2

	MOVL         (SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VBROADCASTSS (DI), X9
	VMULPS       X9, X8, X8
	VBROADCASTSS X8, Y9
	VMOVSHDUP    X8, X10
	VBROADCASTSS X10, Y10
	VFMADD231PS  Y9, Y2, Y0
	VFNMADD231PS X10, X3, X12

	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kz2loop

q4kz2done:
	REDUCE8
	VPERMILPS $0x4E, X12, X1
	VADDPS    X1, X12, X12
	VPERMILPS $0xB1, X12, X1
	VADDPS    X1, X12, X12
	VADDSS    X12, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ6_KAVX512(w, a *byte, nb int) float32
TEXT ·dotQ6_KAVX512(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       Y0, Y0, Y0
	MOVL         $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z11
	MOVL         $0x30303030, AX
	VPBROADCASTD AX, Z12
	VMOVDQU64    q6kIdx512<>+0(SB), Z20
	VMOVDQU64    q6kIdx512<>+64(SB), Z21
	VMOVDQU64    q6kIdx512<>+128(SB), Z22
	VMOVDQU64    q6kIdx512<>+192(SB), Z23
	VMOVDQU64    q6kShl512<>(SB), Z24
	VMOVDQU64    q6kShr512<>(SB), Z25
	TESTQ        CX, CX
	JZ           q6kz2done

q6kz2loop:
	VPMOVSXBW 192(SI), Y9
	VPXORD    Z2, Z2, Z2

	VMOVDQU64       0(SI), Z4
	VPSRLW          $4, Z4, Z5
	VPANDD          Z11, Z4, Z4
	VPANDD          Z11, Z5, Z5
	VBROADCASTI64X4 128(SI), Z6
	VPSLLVW         Z24, Z6, Z7
	VPTERNLOGD      $0xF8, Z12, Z7, Z4
	VPSRLVW         Z25, Z6, Z7
	VPTERNLOGD      $0xF8, Z12, Z7, Z5
	VPMADDUBSW      4(DI), Z4, Z4
	VPERMW          Z9, Z20, Z8
	VPDPWSSD        Z8, Z4, Z2
	VPMADDUBSW      68(DI), Z5, Z5
	VPERMW          Z9, Z21, Z8
	VPDPWSSD        Z8, Z5, Z2

	VMOVDQU64       64(SI), Z4
	VPSRLW          $4, Z4, Z5
	VPANDD          Z11, Z4, Z4
	VPANDD          Z11, Z5, Z5
	VBROADCASTI64X4 160(SI), Z6
	VPSLLVW         Z24, Z6, Z7
	VPTERNLOGD      $0xF8, Z12, Z7, Z4
	VPSRLVW         Z25, Z6, Z7
	VPTERNLOGD      $0xF8, Z12, Z7, Z5
	VPMADDUBSW      132(DI), Z4, Z4
	VPERMW          Z9, Z22, Z8
	VPDPWSSD        Z8, Z4, Z2
	VPMADDUBSW      196(DI), Z5, Z5
	VPERMW          Z9, Z23, Z8
	VPDPWSSD        Z8, Z5, Z2

	VEXTRACTI64X4 $1, Z2, Y6
	VPADDD        Y6, Y2, Y2
	VPMADDWD      260(DI), Y9, Y10
	VPSLLD        $5, Y10, Y10
	VPSUBD        Y10, Y2, Y2
	VCVTDQ2PS     Y2, Y2

	MOVWLZX      208(SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VMULSS       (DI), X8, X8
	VBROADCASTSS X8, Y8
	VFMADD231PS  Y8, Y2, Y0

	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q6kz2loop

q6kz2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_KRows4AVX2(w, a *byte, stride, nb int, out *float32)
TEXT ·dotQ5_KRows4AVX2(SB), NOSPLIT, $64-40
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   stride+16(FP), R12
	MOVQ   nb+24(FP), CX
	LEAQ   (R12)(R12*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS X15, X15, X15
	VMOVUPS X15, 0(SP)
	VMOVUPS X15, 16(SP)
	VMOVUPS X15, 32(SP)
	VMOVUPS X15, 48(SP)
	TESTQ  CX, CX
	JZ     dotQ5_KRows4AVX2done

dotQ5_KRows4AVX2loop:
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  BX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	ANDL  $0x3f3f3f3f, R10
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, DX
	ANDL  $0x3f3f3f3f, AX
	SHLQ  $32, DX
	ORQ   DX, AX
	SHLQ  $32, R8
	ORQ   R8, R10
	VMOVQ       AX, X13
	VPMOVZXBW   X13, X13
	VINSERTI128 $1, X13, Y13, Y13
	VMOVDQU     16(SI), Y12
	VPXOR       Y4, Y4, Y4
	VPXOR       Y5, Y5, Y5
	VPXOR       Y6, Y6, Y6
	VPXOR       Y7, Y7, Y7
	VMOVDQU    48(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSLLW     $4, Y12, Y14
	VPAND      c10<>(SB), Y14, Y14
	VPOR       Y14, Y8, Y8
	VPSLLW     $3, Y12, Y14
	VPAND      c10<>(SB), Y14, Y14
	VPOR       Y14, Y9, Y9
	VPSHUFB    q4kShuf<>+0(SB), Y13, Y10
	VPSHUFB    q4kShuf<>+32(SB), Y13, Y11
	VPMADDUBSW 4(DI), Y8, Y14
	VPMADDUBSW 36(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y4, Y4
	VPADDD     Y15, Y4, Y4
	VPMADDUBSW 4(DI)(R12*1), Y8, Y14
	VPMADDUBSW 36(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y5, Y5
	VPADDD     Y15, Y5, Y5
	VPMADDUBSW 4(DI)(R12*2), Y8, Y14
	VPMADDUBSW 36(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y6, Y6
	VPADDD     Y15, Y6, Y6
	VPMADDUBSW 4(DI)(R13*1), Y8, Y14
	VPMADDUBSW 36(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y7, Y7
	VPADDD     Y15, Y7, Y7
	VMOVDQU    80(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSLLW     $2, Y12, Y14
	VPAND      c10<>(SB), Y14, Y14
	VPOR       Y14, Y8, Y8
	VPSLLW     $1, Y12, Y14
	VPAND      c10<>(SB), Y14, Y14
	VPOR       Y14, Y9, Y9
	VPSHUFB    q4kShuf<>+64(SB), Y13, Y10
	VPSHUFB    q4kShuf<>+96(SB), Y13, Y11
	VPMADDUBSW 68(DI), Y8, Y14
	VPMADDUBSW 100(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y4, Y4
	VPADDD     Y15, Y4, Y4
	VPMADDUBSW 68(DI)(R12*1), Y8, Y14
	VPMADDUBSW 100(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y5, Y5
	VPADDD     Y15, Y5, Y5
	VPMADDUBSW 68(DI)(R12*2), Y8, Y14
	VPMADDUBSW 100(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y6, Y6
	VPADDD     Y15, Y6, Y6
	VPMADDUBSW 68(DI)(R13*1), Y8, Y14
	VPMADDUBSW 100(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y7, Y7
	VPADDD     Y15, Y7, Y7
	VMOVDQU    112(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPAND      c10<>(SB), Y12, Y14
	VPOR       Y14, Y8, Y8
	VPSRLW     $1, Y12, Y14
	VPAND      c10<>(SB), Y14, Y14
	VPOR       Y14, Y9, Y9
	VPSHUFB    q4kShuf<>+128(SB), Y13, Y10
	VPSHUFB    q4kShuf<>+160(SB), Y13, Y11
	VPMADDUBSW 132(DI), Y8, Y14
	VPMADDUBSW 164(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y4, Y4
	VPADDD     Y15, Y4, Y4
	VPMADDUBSW 132(DI)(R12*1), Y8, Y14
	VPMADDUBSW 164(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y5, Y5
	VPADDD     Y15, Y5, Y5
	VPMADDUBSW 132(DI)(R12*2), Y8, Y14
	VPMADDUBSW 164(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y6, Y6
	VPADDD     Y15, Y6, Y6
	VPMADDUBSW 132(DI)(R13*1), Y8, Y14
	VPMADDUBSW 164(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y7, Y7
	VPADDD     Y15, Y7, Y7
	VMOVDQU    144(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSRLW     $2, Y12, Y14
	VPAND      c10<>(SB), Y14, Y14
	VPOR       Y14, Y8, Y8
	VPSRLW     $3, Y12, Y14
	VPAND      c10<>(SB), Y14, Y14
	VPOR       Y14, Y9, Y9
	VPSHUFB    q4kShuf<>+192(SB), Y13, Y10
	VPSHUFB    q4kShuf<>+224(SB), Y13, Y11
	VPMADDUBSW 196(DI), Y8, Y14
	VPMADDUBSW 228(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y4, Y4
	VPADDD     Y15, Y4, Y4
	VPMADDUBSW 196(DI)(R12*1), Y8, Y14
	VPMADDUBSW 228(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y5, Y5
	VPADDD     Y15, Y5, Y5
	VPMADDUBSW 196(DI)(R12*2), Y8, Y14
	VPMADDUBSW 228(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y6, Y6
	VPADDD     Y15, Y6, Y6
	VPMADDUBSW 196(DI)(R13*1), Y8, Y14
	VPMADDUBSW 228(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y14, Y7, Y7
	VPADDD     Y15, Y7, Y7
	VMOVQ       R10, X12
	VPMOVZXBW   X12, X12
	MOVL        (SI), AX
	VMOVD       AX, X8
	VCVTPH2PS   X8, X8
	VMOVDQU      260(DI), X14
	VPHADDW      276(DI), X14, X14
	VPMADDWD     X14, X12, X14
	VPHADDD      X14, X14, X14
	VPHADDD      X14, X14, X14
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    Y4, Y4
	VBROADCASTSS 0(DI), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFMADD231PS  Y10, Y4, Y0
	VMOVSS       0(SP), X15
	VFNMADD231SS X11, X14, X15
	VMOVSS       X15, 0(SP)
	VMOVDQU      260(DI)(R12*1), X14
	VPHADDW      276(DI)(R12*1), X14, X14
	VPMADDWD     X14, X12, X14
	VPHADDD      X14, X14, X14
	VPHADDD      X14, X14, X14
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    Y5, Y5
	VBROADCASTSS 0(DI)(R12*1), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFMADD231PS  Y10, Y5, Y1
	VMOVSS       16(SP), X15
	VFNMADD231SS X11, X14, X15
	VMOVSS       X15, 16(SP)
	VMOVDQU      260(DI)(R12*2), X14
	VPHADDW      276(DI)(R12*2), X14, X14
	VPMADDWD     X14, X12, X14
	VPHADDD      X14, X14, X14
	VPHADDD      X14, X14, X14
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    Y6, Y6
	VBROADCASTSS 0(DI)(R12*2), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFMADD231PS  Y10, Y6, Y2
	VMOVSS       32(SP), X15
	VFNMADD231SS X11, X14, X15
	VMOVSS       X15, 32(SP)
	VMOVDQU      260(DI)(R13*1), X14
	VPHADDW      276(DI)(R13*1), X14, X14
	VPMADDWD     X14, X12, X14
	VPHADDD      X14, X14, X14
	VPHADDD      X14, X14, X14
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    Y7, Y7
	VBROADCASTSS 0(DI)(R13*1), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFMADD231PS  Y10, Y7, Y3
	VMOVSS       48(SP), X15
	VFNMADD231SS X11, X14, X15
	VMOVSS       X15, 48(SP)
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  dotQ5_KRows4AVX2loop

dotQ5_KRows4AVX2done:
	MOVQ out+32(FP), AX
	VEXTRACTF128 $1, Y0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0x4E, X0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0xB1, X0, X15
	VADDPS       X15, X0, X0
	VADDSS       0(SP), X0, X0
	VMOVSS       X0, 0(AX)
	VEXTRACTF128 $1, Y1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0x4E, X1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0xB1, X1, X15
	VADDPS       X15, X1, X1
	VADDSS       16(SP), X1, X1
	VMOVSS       X1, 4(AX)
	VEXTRACTF128 $1, Y2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0x4E, X2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0xB1, X2, X15
	VADDPS       X15, X2, X2
	VADDSS       32(SP), X2, X2
	VMOVSS       X2, 8(AX)
	VEXTRACTF128 $1, Y3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0x4E, X3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0xB1, X3, X15
	VADDPS       X15, X3, X3
	VADDSS       48(SP), X3, X3
	VMOVSS       X3, 12(AX)
	VZEROUPPER
	RET

// func dotIQ4_XSRows4AVX2(w, a *byte, stride, nb int, out *float32)
TEXT ·dotIQ4_XSRows4AVX2(SB), NOSPLIT, $0-40
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   stride+16(FP), R12
	MOVQ   nb+24(FP), CX
	LEAQ   (R12)(R12*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VMOVDQU iq4nlTab<>(SB), Y13
	TESTQ  CX, CX
	JZ     dotIQ4_XSRows4AVX2done

dotIQ4_XSRows4AVX2loop:
	VMOVD        4(SI), X8
	VPSRLW       $4, X8, X9
	VPAND        c0f<>(SB), X8, X8
	VPAND        c0f<>(SB), X9, X9
	VPUNPCKLBW   X9, X8, X8
	VPMOVZXBD    X8, Y8
	MOVWLZX      2(SI), AX
	VMOVD        AX, X9
	VPBROADCASTD X9, Y9
	VPSRLVD      iq4xsShift<>(SB), Y9, Y9
	VPAND        c03d<>(SB), Y9, Y9
	VPSLLD       $4, Y9, Y9
	VPOR         Y9, Y8, Y8
	VPSUBD       c20d<>(SB), Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPACKSSDW    X9, X8, X8
	VINSERTI128  $1, X8, Y8, Y15
	VPXOR        Y4, Y4, Y4
	VPXOR        Y5, Y5, Y5
	VPXOR        Y6, Y6, Y6
	VPXOR        Y7, Y7, Y7
	VMOVDQU     8(SI), X8
	VPSRLW      $4, X8, X9
	VINSERTI128 $1, X9, Y8, Y8
	VPAND       c0f<>(SB), Y8, Y8
	VPSHUFB     Y8, Y13, Y9
	VPSIGNB     Y9, Y9, Y10
	VPSHUFB     q4kShuf<>+0(SB), Y15, Y11
	VMOVDQU     4(DI), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VMOVDQU     4(DI)(R12*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VMOVDQU     4(DI)(R12*2), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VMOVDQU     4(DI)(R13*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     24(SI), X8
	VPSRLW      $4, X8, X9
	VINSERTI128 $1, X9, Y8, Y8
	VPAND       c0f<>(SB), Y8, Y8
	VPSHUFB     Y8, Y13, Y9
	VPSIGNB     Y9, Y9, Y10
	VPSHUFB     q4kShuf<>+32(SB), Y15, Y11
	VMOVDQU     36(DI), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VMOVDQU     36(DI)(R12*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VMOVDQU     36(DI)(R12*2), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VMOVDQU     36(DI)(R13*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     40(SI), X8
	VPSRLW      $4, X8, X9
	VINSERTI128 $1, X9, Y8, Y8
	VPAND       c0f<>(SB), Y8, Y8
	VPSHUFB     Y8, Y13, Y9
	VPSIGNB     Y9, Y9, Y10
	VPSHUFB     q4kShuf<>+64(SB), Y15, Y11
	VMOVDQU     68(DI), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VMOVDQU     68(DI)(R12*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VMOVDQU     68(DI)(R12*2), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VMOVDQU     68(DI)(R13*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     56(SI), X8
	VPSRLW      $4, X8, X9
	VINSERTI128 $1, X9, Y8, Y8
	VPAND       c0f<>(SB), Y8, Y8
	VPSHUFB     Y8, Y13, Y9
	VPSIGNB     Y9, Y9, Y10
	VPSHUFB     q4kShuf<>+96(SB), Y15, Y11
	VMOVDQU     100(DI), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VMOVDQU     100(DI)(R12*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VMOVDQU     100(DI)(R12*2), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VMOVDQU     100(DI)(R13*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     72(SI), X8
	VPSRLW      $4, X8, X9
	VINSERTI128 $1, X9, Y8, Y8
	VPAND       c0f<>(SB), Y8, Y8
	VPSHUFB     Y8, Y13, Y9
	VPSIGNB     Y9, Y9, Y10
	VPSHUFB     q4kShuf<>+128(SB), Y15, Y11
	VMOVDQU     132(DI), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VMOVDQU     132(DI)(R12*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VMOVDQU     132(DI)(R12*2), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VMOVDQU     132(DI)(R13*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     88(SI), X8
	VPSRLW      $4, X8, X9
	VINSERTI128 $1, X9, Y8, Y8
	VPAND       c0f<>(SB), Y8, Y8
	VPSHUFB     Y8, Y13, Y9
	VPSIGNB     Y9, Y9, Y10
	VPSHUFB     q4kShuf<>+160(SB), Y15, Y11
	VMOVDQU     164(DI), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VMOVDQU     164(DI)(R12*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VMOVDQU     164(DI)(R12*2), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VMOVDQU     164(DI)(R13*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     104(SI), X8
	VPSRLW      $4, X8, X9
	VINSERTI128 $1, X9, Y8, Y8
	VPAND       c0f<>(SB), Y8, Y8
	VPSHUFB     Y8, Y13, Y9
	VPSIGNB     Y9, Y9, Y10
	VPSHUFB     q4kShuf<>+192(SB), Y15, Y11
	VMOVDQU     196(DI), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VMOVDQU     196(DI)(R12*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VMOVDQU     196(DI)(R12*2), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VMOVDQU     196(DI)(R13*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     120(SI), X8
	VPSRLW      $4, X8, X9
	VINSERTI128 $1, X9, Y8, Y8
	VPAND       c0f<>(SB), Y8, Y8
	VPSHUFB     Y8, Y13, Y9
	VPSIGNB     Y9, Y9, Y10
	VPSHUFB     q4kShuf<>+224(SB), Y15, Y11
	VMOVDQU     228(DI), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VMOVDQU     228(DI)(R12*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VMOVDQU     228(DI)(R12*2), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VMOVDQU     228(DI)(R13*1), Y12
	VPSIGNB     Y9, Y12, Y12
	VPMADDUBSW  Y12, Y10, Y14
	VPMADDWD    Y11, Y14, Y14
	VPADDD      Y14, Y7, Y7
	MOVWLZX   (SI), AX
	VMOVD     AX, X8
	VCVTPH2PS X8, X8
	VCVTDQ2PS    Y4, Y4
	VMULSS       0(DI), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y4, Y0
	VCVTDQ2PS    Y5, Y5
	VMULSS       0(DI)(R12*1), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y5, Y1
	VCVTDQ2PS    Y6, Y6
	VMULSS       0(DI)(R12*2), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y6, Y2
	VCVTDQ2PS    Y7, Y7
	VMULSS       0(DI)(R13*1), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y7, Y3
	ADDQ $136, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  dotIQ4_XSRows4AVX2loop

dotIQ4_XSRows4AVX2done:
	MOVQ out+32(FP), AX
	VEXTRACTF128 $1, Y0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0x4E, X0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0xB1, X0, X15
	VADDPS       X15, X0, X0
	VMOVSS       X0, 0(AX)
	VEXTRACTF128 $1, Y1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0x4E, X1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0xB1, X1, X15
	VADDPS       X15, X1, X1
	VMOVSS       X1, 4(AX)
	VEXTRACTF128 $1, Y2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0x4E, X2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0xB1, X2, X15
	VADDPS       X15, X2, X2
	VMOVSS       X2, 8(AX)
	VEXTRACTF128 $1, Y3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0x4E, X3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0xB1, X3, X15
	VADDPS       X15, X3, X3
	VMOVSS       X3, 12(AX)
	VZEROUPPER
	RET

DATA c10<>+0(SB)/8, $0x1010101010101010
DATA c10<>+8(SB)/8, $0x1010101010101010
DATA c10<>+16(SB)/8, $0x1010101010101010
DATA c10<>+24(SB)/8, $0x1010101010101010
GLOBL c10<>(SB), RODATA|NOPTR, $32
DATA c03d<>+0(SB)/8, $0x0000000300000003
DATA c03d<>+8(SB)/8, $0x0000000300000003
DATA c03d<>+16(SB)/8, $0x0000000300000003
DATA c03d<>+24(SB)/8, $0x0000000300000003
GLOBL c03d<>(SB), RODATA|NOPTR, $32
DATA c20d<>+0(SB)/8, $0x0000002000000020
DATA c20d<>+8(SB)/8, $0x0000002000000020
DATA c20d<>+16(SB)/8, $0x0000002000000020
DATA c20d<>+24(SB)/8, $0x0000002000000020
GLOBL c20d<>(SB), RODATA|NOPTR, $32

// func dotQ2_KRows4AVX2(w, a *byte, stride, nb int, out *float32)
TEXT ·dotQ2_KRows4AVX2(SB), NOSPLIT, $0-40
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   stride+16(FP), R12
	MOVQ   nb+24(FP), CX
	LEAQ   (R12)(R12*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ  CX, CX
	JZ     dotQ2_KRows4AVX2done

dotQ2_KRows4AVX2loop:
	VMOVDQU     (SI), X9
	VPSRLW      $4, X9, X13
	VPAND       c0f<>(SB), X9, X9
	VPAND       c0f<>(SB), X13, X13
	VPMOVZXBW   X9, Y9
	VPMOVZXBW   X13, Y13
	VPXOR       Y4, Y4, Y4
	VPXOR       Y5, Y5, Y5
	VPXOR       Y6, Y6, Y6
	VPXOR       Y7, Y7, Y7
	VMOVDQU     16(SI), Y8
	VPERMQ      $0x44, Y9, Y10
	VPAND       c03<>(SB), Y8, Y11
	VPSHUFB     q6kShuf<>+0(SB), Y10, Y12
	VPMADDUBSW  4(DI), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  4(DI)(R12*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  4(DI)(R12*2), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  4(DI)(R13*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $2, Y8, Y11
	VPAND       c03<>(SB), Y11, Y11
	VPSHUFB     q6kShuf<>+32(SB), Y10, Y12
	VPMADDUBSW  36(DI), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  36(DI)(R12*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  36(DI)(R12*2), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  36(DI)(R13*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $4, Y8, Y11
	VPAND       c03<>(SB), Y11, Y11
	VPSHUFB     q6kShuf<>+64(SB), Y10, Y12
	VPMADDUBSW  68(DI), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  68(DI)(R12*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  68(DI)(R12*2), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  68(DI)(R13*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $6, Y8, Y11
	VPAND       c03<>(SB), Y11, Y11
	VPSHUFB     q6kShuf<>+96(SB), Y10, Y12
	VPMADDUBSW  100(DI), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  100(DI)(R12*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  100(DI)(R12*2), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  100(DI)(R13*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     48(SI), Y8
	VPERMQ      $0xEE, Y9, Y10
	VPAND       c03<>(SB), Y8, Y11
	VPSHUFB     q6kShuf<>+0(SB), Y10, Y12
	VPMADDUBSW  132(DI), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  132(DI)(R12*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  132(DI)(R12*2), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  132(DI)(R13*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $2, Y8, Y11
	VPAND       c03<>(SB), Y11, Y11
	VPSHUFB     q6kShuf<>+32(SB), Y10, Y12
	VPMADDUBSW  164(DI), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  164(DI)(R12*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  164(DI)(R12*2), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  164(DI)(R13*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $4, Y8, Y11
	VPAND       c03<>(SB), Y11, Y11
	VPSHUFB     q6kShuf<>+64(SB), Y10, Y12
	VPMADDUBSW  196(DI), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  196(DI)(R12*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  196(DI)(R12*2), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  196(DI)(R13*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $6, Y8, Y11
	VPAND       c03<>(SB), Y11, Y11
	VPSHUFB     q6kShuf<>+96(SB), Y10, Y12
	VPMADDUBSW  228(DI), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  228(DI)(R12*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  228(DI)(R12*2), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  228(DI)(R13*1), Y11, Y14
	VPMADDWD    Y12, Y14, Y14
	VPADDD      Y14, Y7, Y7
	MOVL      80(SI), AX
	VMOVD     AX, X8
	VCVTPH2PS X8, X8
	VPMADDWD     260(DI), Y13, Y14
	VCVTDQ2PS    Y14, Y14
	VCVTDQ2PS    Y4, Y4
	VBROADCASTSS 0(DI), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFNMADD231PS Y11, Y14, Y0
	VFMADD231PS  Y10, Y4, Y0
	VPMADDWD     260(DI)(R12*1), Y13, Y14
	VCVTDQ2PS    Y14, Y14
	VCVTDQ2PS    Y5, Y5
	VBROADCASTSS 0(DI)(R12*1), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFNMADD231PS Y11, Y14, Y1
	VFMADD231PS  Y10, Y5, Y1
	VPMADDWD     260(DI)(R12*2), Y13, Y14
	VCVTDQ2PS    Y14, Y14
	VCVTDQ2PS    Y6, Y6
	VBROADCASTSS 0(DI)(R12*2), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFNMADD231PS Y11, Y14, Y2
	VFMADD231PS  Y10, Y6, Y2
	VPMADDWD     260(DI)(R13*1), Y13, Y14
	VCVTDQ2PS    Y14, Y14
	VCVTDQ2PS    Y7, Y7
	VBROADCASTSS 0(DI)(R13*1), X9
	VMULPS       X9, X8, X9
	VBROADCASTSS X9, Y10
	VMOVSHDUP    X9, X11
	VBROADCASTSS X11, Y11
	VFNMADD231PS Y11, Y14, Y3
	VFMADD231PS  Y10, Y7, Y3
	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  dotQ2_KRows4AVX2loop

dotQ2_KRows4AVX2done:
	MOVQ out+32(FP), AX
	VEXTRACTF128 $1, Y0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0x4E, X0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0xB1, X0, X15
	VADDPS       X15, X0, X0
	VMOVSS       X0, 0(AX)
	VEXTRACTF128 $1, Y1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0x4E, X1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0xB1, X1, X15
	VADDPS       X15, X1, X1
	VMOVSS       X1, 4(AX)
	VEXTRACTF128 $1, Y2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0x4E, X2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0xB1, X2, X15
	VADDPS       X15, X2, X2
	VMOVSS       X2, 8(AX)
	VEXTRACTF128 $1, Y3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0x4E, X3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0xB1, X3, X15
	VADDPS       X15, X3, X3
	VMOVSS       X3, 12(AX)
	VZEROUPPER
	RET

// func dotQ3_KRows4AVX2(w, a *byte, stride, nb int, out *float32)
TEXT ·dotQ3_KRows4AVX2(SB), NOSPLIT, $256-40
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   stride+16(FP), R12
	MOVQ   nb+24(FP), CX
	LEAQ   (R12)(R12*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ  CX, CX
	JZ     dotQ3_KRows4AVX2done

dotQ3_KRows4AVX2loop:
	MOVL  96(SI), AX
	MOVL  100(SI), BX
	MOVL  104(SI), DX
	MOVL  AX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  DX, R9
	SHRL  $4, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	SHRL  $4, R10
	ANDL  $0x0f0f0f0f, R10
	MOVL  DX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R10
	ANDL  $0x0f0f0f0f, AX
	MOVL  DX, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, AX
	ANDL  $0x0f0f0f0f, BX
	MOVL  DX, R9
	SHRL  $2, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, BX
	SHLQ  $32, BX
	ORQ   BX, AX
	SHLQ  $32, R10
	ORQ   R10, R8
	VMOVQ     AX, X9
	VPINSRQ   $1, R8, X9, X9
	VPMOVZXBW X9, Y9
	VPSUBW    c20w<>(SB), Y9, Y9
	VPERMQ      $0x44, Y9, Y11
	VPSHUFB     q6kShuf<>+0(SB), Y11, Y14
	VMOVDQU     Y14, 0(SP)
	VPSHUFB     q6kShuf<>+32(SB), Y11, Y14
	VMOVDQU     Y14, 32(SP)
	VPSHUFB     q6kShuf<>+64(SB), Y11, Y14
	VMOVDQU     Y14, 64(SP)
	VPSHUFB     q6kShuf<>+96(SB), Y11, Y14
	VMOVDQU     Y14, 96(SP)
	VPERMQ      $0xEE, Y9, Y11
	VPSHUFB     q6kShuf<>+0(SB), Y11, Y14
	VMOVDQU     Y14, 128(SP)
	VPSHUFB     q6kShuf<>+32(SB), Y11, Y14
	VMOVDQU     Y14, 160(SP)
	VPSHUFB     q6kShuf<>+64(SB), Y11, Y14
	VMOVDQU     Y14, 192(SP)
	VPSHUFB     q6kShuf<>+96(SB), Y11, Y14
	VMOVDQU     Y14, 224(SP)
	VMOVDQU (SI), Y10
	VPXOR   Y4, Y4, Y4
	VPXOR   Y5, Y5, Y5
	VPXOR   Y6, Y6, Y6
	VPXOR   Y7, Y7, Y7
	VMOVDQU     32(SI), Y8
	VPAND       c03<>(SB), Y8, Y12
	VPSLLW      $2, Y10, Y13
	VPANDN      c04<>(SB), Y13, Y13
	VPMADDUBSW  4(DI), Y12, Y14
	VPMADDUBSW  4(DI), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    0(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  4(DI)(R12*1), Y12, Y14
	VPMADDUBSW  4(DI)(R12*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    0(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  4(DI)(R12*2), Y12, Y14
	VPMADDUBSW  4(DI)(R12*2), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    0(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  4(DI)(R13*1), Y12, Y14
	VPMADDUBSW  4(DI)(R13*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    0(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $2, Y8, Y12
	VPAND       c03<>(SB), Y12, Y12
	VPSLLW      $1, Y10, Y13
	VPANDN      c04<>(SB), Y13, Y13
	VPMADDUBSW  36(DI), Y12, Y14
	VPMADDUBSW  36(DI), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    32(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  36(DI)(R12*1), Y12, Y14
	VPMADDUBSW  36(DI)(R12*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    32(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  36(DI)(R12*2), Y12, Y14
	VPMADDUBSW  36(DI)(R12*2), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    32(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  36(DI)(R13*1), Y12, Y14
	VPMADDUBSW  36(DI)(R13*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    32(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $4, Y8, Y12
	VPAND       c03<>(SB), Y12, Y12
	VPANDN      c04<>(SB), Y10, Y13
	VPMADDUBSW  68(DI), Y12, Y14
	VPMADDUBSW  68(DI), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    64(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  68(DI)(R12*1), Y12, Y14
	VPMADDUBSW  68(DI)(R12*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    64(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  68(DI)(R12*2), Y12, Y14
	VPMADDUBSW  68(DI)(R12*2), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    64(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  68(DI)(R13*1), Y12, Y14
	VPMADDUBSW  68(DI)(R13*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    64(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $6, Y8, Y12
	VPAND       c03<>(SB), Y12, Y12
	VPSRLW      $1, Y10, Y13
	VPANDN      c04<>(SB), Y13, Y13
	VPMADDUBSW  100(DI), Y12, Y14
	VPMADDUBSW  100(DI), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    96(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  100(DI)(R12*1), Y12, Y14
	VPMADDUBSW  100(DI)(R12*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    96(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  100(DI)(R12*2), Y12, Y14
	VPMADDUBSW  100(DI)(R12*2), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    96(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  100(DI)(R13*1), Y12, Y14
	VPMADDUBSW  100(DI)(R13*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    96(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VMOVDQU     64(SI), Y8
	VPAND       c03<>(SB), Y8, Y12
	VPSRLW      $2, Y10, Y13
	VPANDN      c04<>(SB), Y13, Y13
	VPMADDUBSW  132(DI), Y12, Y14
	VPMADDUBSW  132(DI), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    128(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  132(DI)(R12*1), Y12, Y14
	VPMADDUBSW  132(DI)(R12*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    128(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  132(DI)(R12*2), Y12, Y14
	VPMADDUBSW  132(DI)(R12*2), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    128(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  132(DI)(R13*1), Y12, Y14
	VPMADDUBSW  132(DI)(R13*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    128(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $2, Y8, Y12
	VPAND       c03<>(SB), Y12, Y12
	VPSRLW      $3, Y10, Y13
	VPANDN      c04<>(SB), Y13, Y13
	VPMADDUBSW  164(DI), Y12, Y14
	VPMADDUBSW  164(DI), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    160(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  164(DI)(R12*1), Y12, Y14
	VPMADDUBSW  164(DI)(R12*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    160(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  164(DI)(R12*2), Y12, Y14
	VPMADDUBSW  164(DI)(R12*2), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    160(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  164(DI)(R13*1), Y12, Y14
	VPMADDUBSW  164(DI)(R13*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    160(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $4, Y8, Y12
	VPAND       c03<>(SB), Y12, Y12
	VPSRLW      $4, Y10, Y13
	VPANDN      c04<>(SB), Y13, Y13
	VPMADDUBSW  196(DI), Y12, Y14
	VPMADDUBSW  196(DI), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    192(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  196(DI)(R12*1), Y12, Y14
	VPMADDUBSW  196(DI)(R12*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    192(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  196(DI)(R12*2), Y12, Y14
	VPMADDUBSW  196(DI)(R12*2), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    192(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  196(DI)(R13*1), Y12, Y14
	VPMADDUBSW  196(DI)(R13*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    192(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	VPSRLW      $6, Y8, Y12
	VPAND       c03<>(SB), Y12, Y12
	VPSRLW      $5, Y10, Y13
	VPANDN      c04<>(SB), Y13, Y13
	VPMADDUBSW  228(DI), Y12, Y14
	VPMADDUBSW  228(DI), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    224(SP), Y14, Y14
	VPADDD      Y14, Y4, Y4
	VPMADDUBSW  228(DI)(R12*1), Y12, Y14
	VPMADDUBSW  228(DI)(R12*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    224(SP), Y14, Y14
	VPADDD      Y14, Y5, Y5
	VPMADDUBSW  228(DI)(R12*2), Y12, Y14
	VPMADDUBSW  228(DI)(R12*2), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    224(SP), Y14, Y14
	VPADDD      Y14, Y6, Y6
	VPMADDUBSW  228(DI)(R13*1), Y12, Y14
	VPMADDUBSW  228(DI)(R13*1), Y13, Y15
	VPSUBW      Y15, Y14, Y14
	VPMADDWD    224(SP), Y14, Y14
	VPADDD      Y14, Y7, Y7
	MOVWLZX   108(SI), AX
	VMOVD     AX, X8
	VCVTPH2PS X8, X8
	VCVTDQ2PS    Y4, Y4
	VMULSS       0(DI), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y4, Y0
	VCVTDQ2PS    Y5, Y5
	VMULSS       0(DI)(R12*1), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y5, Y1
	VCVTDQ2PS    Y6, Y6
	VMULSS       0(DI)(R12*2), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y6, Y2
	VCVTDQ2PS    Y7, Y7
	VMULSS       0(DI)(R13*1), X8, X9
	VBROADCASTSS X9, Y9
	VFMADD231PS  Y9, Y7, Y3
	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  dotQ3_KRows4AVX2loop

dotQ3_KRows4AVX2done:
	MOVQ out+32(FP), AX
	VEXTRACTF128 $1, Y0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0x4E, X0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0xB1, X0, X15
	VADDPS       X15, X0, X0
	VMOVSS       X0, 0(AX)
	VEXTRACTF128 $1, Y1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0x4E, X1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0xB1, X1, X15
	VADDPS       X15, X1, X1
	VMOVSS       X1, 4(AX)
	VEXTRACTF128 $1, Y2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0x4E, X2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0xB1, X2, X15
	VADDPS       X15, X2, X2
	VMOVSS       X2, 8(AX)
	VEXTRACTF128 $1, Y3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0x4E, X3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0xB1, X3, X15
	VADDPS       X15, X3, X3
	VMOVSS       X3, 12(AX)
	VZEROUPPER
	RET

DATA c03<>+0(SB)/8, $0x0303030303030303
DATA c03<>+8(SB)/8, $0x0303030303030303
DATA c03<>+16(SB)/8, $0x0303030303030303
DATA c03<>+24(SB)/8, $0x0303030303030303
GLOBL c03<>(SB), RODATA|NOPTR, $32
DATA c04<>+0(SB)/8, $0x0404040404040404
DATA c04<>+8(SB)/8, $0x0404040404040404
DATA c04<>+16(SB)/8, $0x0404040404040404
DATA c04<>+24(SB)/8, $0x0404040404040404
GLOBL c04<>(SB), RODATA|NOPTR, $32
DATA c20w<>+0(SB)/8, $0x0020002000200020
DATA c20w<>+8(SB)/8, $0x0020002000200020
DATA c20w<>+16(SB)/8, $0x0020002000200020
DATA c20w<>+24(SB)/8, $0x0020002000200020
GLOBL c20w<>(SB), RODATA|NOPTR, $32

// ---------------------------------------------------------------------------
// 32-element block kernels, AVX2, in llama.cpp's AVX2 order (ggml_vec_dot_*_q8_0/_q8_1):
// per block, 8 int32 lanes (lane l = elements 4l..4l+3) converted and fused into one
// accumulator with d_w*d_a; Q4_1/Q5_1 fuse m*s into a scalar; IQ4_NL and MXFP4 alternate two
// accumulators over block pairs and add a last odd block in scalar (multiply, then add, as
// GCC compiles llama.cpp's tail loop). Bit-identical to llama.cpp's x86 build (GCC 12,
// -march=native) on testdata/simd_llama_dots.json.


// func dotQ8_0AVX2(w, a *byte, nb int) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	BYTECONST($0x00010001, X10, Y10)
	TESTQ  CX, CX
	JZ     dotQ8_0AVX2done

dotQ8_0AVX2loop:
	VMOVDQU    2(SI), Y1
	VMOVDQU    2(DI), Y3
	VPSIGNB    Y1, Y1, Y2
	VPSIGNB    Y1, Y3, Y3
	VPMADDUBSW Y3, Y2, Y2
	VPMADDWD   Y10, Y2, Y2
	VCVTDQ2PS Y2, Y2
	SCALE2((SI), (DI), Y4)
	VFMADD231PS Y4, Y2, Y0
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  dotQ8_0AVX2loop

dotQ8_0AVX2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ4_0AVX2(w, a *byte, nb int) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	LEGACYCONSTS
	BYTECONST($0x08080808, X9, Y9)
	TESTQ  CX, CX
	JZ     dotQ4_0AVX2done

dotQ4_0AVX2loop:
	LOADQ4(2)
	DOTOFF(2)
	VCVTDQ2PS Y2, Y2
	SCALE2((SI), (DI), Y4)
	VFMADD231PS Y4, Y2, Y0
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  dotQ4_0AVX2loop

dotQ4_0AVX2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_0AVX2(w, a *byte, nb int) float32
TEXT ·dotQ5_0AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	LEGACYCONSTS
	BYTECONST($0x10101010, X9, Y9)
	TESTQ  CX, CX
	JZ     dotQ5_0AVX2done

dotQ5_0AVX2loop:
	LOADQ4(6)
	BITS5(2)
	DOTOFF(2)
	VCVTDQ2PS Y2, Y2
	SCALE2((SI), (DI), Y4)
	VFMADD231PS Y4, Y2, Y0
	ADDQ $22, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  dotQ5_0AVX2loop

dotQ5_0AVX2done:
	REDUCE8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ4_1AVX2(w, a *byte, nb int) float32
TEXT ·dotQ4_1AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	LEGACYCONSTS
	VXORPS X9, X9, X9
	TESTQ  CX, CX
	JZ     dotQ4_1AVX2done

dotQ4_1AVX2loop:
	LOADQ4(4)
	VPMADDUBSW 4(DI), Y1, Y2
	VPMADDWD   Y10, Y2, Y2
	VCVTDQ2PS Y2, Y2
	MOVL         (SI), AX
	VMOVD        AX, X14
	MOVL         (DI), DX
	VMOVD        DX, X15
	VCVTPH2PS    X14, X14
	VCVTPH2PS    X15, X15
	VMULPS       X15, X14, X4
	VBROADCASTSS X4, Y4
	VFMADD231PS  Y4, Y2, Y0
	VMOVSHDUP    X14, X14
	VMOVSHDUP    X15, X15
	VFMADD231SS  X15, X14, X9
	ADDQ $20, SI
	ADDQ $36, DI
	DECQ CX
	JNZ  dotQ4_1AVX2loop

dotQ4_1AVX2done:
	REDUCE8
	VADDSS X9, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_1AVX2(w, a *byte, nb int) float32
TEXT ·dotQ5_1AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	LEGACYCONSTS
	VXORPS X9, X9, X9
	TESTQ  CX, CX
	JZ     dotQ5_1AVX2done

dotQ5_1AVX2loop:
	LOADQ4(8)
	BITS5(4)
	VPMADDUBSW 4(DI), Y1, Y2
	VPMADDWD   Y10, Y2, Y2
	VCVTDQ2PS Y2, Y2
	MOVL         (SI), AX
	VMOVD        AX, X14
	MOVL         (DI), DX
	VMOVD        DX, X15
	VCVTPH2PS    X14, X14
	VCVTPH2PS    X15, X15
	VMULPS       X15, X14, X4
	VBROADCASTSS X4, Y4
	VFMADD231PS  Y4, Y2, Y0
	VMOVSHDUP    X14, X14
	VMOVSHDUP    X15, X15
	VFMADD231SS  X15, X14, X9
	ADDQ $24, SI
	ADDQ $36, DI
	DECQ CX
	JNZ  dotQ5_1AVX2loop

dotQ5_1AVX2done:
	REDUCE8
	VADDSS X9, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotIQ4_NLAVX2(w, a *byte, nb int) float32
TEXT ·dotIQ4_NLAVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	BYTECONST($0x0f0f0f0f, X11, Y11)
	BYTECONST($0x00010001, X10, Y10)
	VMOVDQU iq4nlTab<>(SB), Y13
	VXORPS Y5, Y5, Y5
	MOVQ   CX, BX
	SHRQ   $1, BX
	JZ     dotIQ4_NLAVX2pairsdone

dotIQ4_NLAVX2loop2:
	LOADQ4(2)
	TABDOT(2, Y10)
	VCVTDQ2PS Y2, Y2
	SCALE2((SI), (DI), Y4)
	VFMADD231PS Y4, Y2, Y0
	ADDQ $18, SI
	ADDQ $34, DI
	LOADQ4(2)
	TABDOT(2, Y10)
	VCVTDQ2PS Y2, Y2
	SCALE2((SI), (DI), Y4)
	VFMADD231PS Y4, Y2, Y5
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ BX
	JNZ  dotIQ4_NLAVX2loop2

dotIQ4_NLAVX2pairsdone:
	VADDPS Y5, Y0, Y0
	REDUCE8
	TESTQ  $1, CX
	JZ     dotIQ4_NLAVX2done
	LOADQ4(2)
	TABDOT(2, Y10)
	VEXTRACTI128 $1, Y2, X3
	VPADDD       X3, X2, X2
	VPHADDD      X2, X2, X2
	VPHADDD      X2, X2, X2
	VCVTDQ2PS    X2, X2
	SCALE2((SI), (DI), Y4)
	VMULSS       X4, X2, X2
	VADDSS       X2, X0, X0

dotIQ4_NLAVX2done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotMXFP4AVX2(w, a *byte, nb int) float32
TEXT ·dotMXFP4AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	BYTECONST($0x0f0f0f0f, X11, Y11)
	BYTECONST($0x00010001, X10, Y10)
	VMOVDQU mxfp4Tab<>(SB), Y13
	LEAQ    e8m0Half<>(SB), R11
	VXORPS Y5, Y5, Y5
	MOVQ   CX, BX
	SHRQ   $1, BX
	JZ     dotMXFP4AVX2pairsdone

dotMXFP4AVX2loop2:
	LOADQ4(1)
	TABDOT(2, Y10)
	VCVTDQ2PS Y2, Y2
	MOVBLZX      (SI), AX
	MOVWLZX      (DI), DX
	VMOVD        DX, X14
	VCVTPH2PS    X14, X14
	VMULSS       (R11)(AX*4), X14, X14
	VBROADCASTSS X14, Y4
	VFMADD231PS Y4, Y2, Y0
	ADDQ $17, SI
	ADDQ $34, DI
	LOADQ4(1)
	TABDOT(2, Y10)
	VCVTDQ2PS Y2, Y2
	MOVBLZX      (SI), AX
	MOVWLZX      (DI), DX
	VMOVD        DX, X14
	VCVTPH2PS    X14, X14
	VMULSS       (R11)(AX*4), X14, X14
	VBROADCASTSS X14, Y4
	VFMADD231PS Y4, Y2, Y5
	ADDQ $17, SI
	ADDQ $34, DI
	DECQ BX
	JNZ  dotMXFP4AVX2loop2

dotMXFP4AVX2pairsdone:
	VADDPS Y5, Y0, Y0
	REDUCE8
	TESTQ  $1, CX
	JZ     dotMXFP4AVX2done
	LOADQ4(1)
	TABDOT(2, Y10)
	VEXTRACTI128 $1, Y2, X3
	VPADDD       X3, X2, X2
	VPHADDD      X2, X2, X2
	VPHADDD      X2, X2, X2
	VCVTDQ2PS    X2, X2
	MOVBLZX      (SI), AX
	MOVWLZX      (DI), DX
	VMOVD        DX, X14
	VCVTPH2PS    X14, X14
	VMULSS       (R11)(AX*4), X14, X14
	VBROADCASTSS X14, Y4
	VMULSS       X4, X2, X2
	VADDSS       X2, X0, X0

dotMXFP4AVX2done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q8_0 four-row kernel for DotRows: dotQ8_0AVX2's operations per row.

// func dotQ8_0Rows4AVX2(w, a *byte, stride, nb int, out *float32)
TEXT ·dotQ8_0Rows4AVX2(SB), NOSPLIT, $0-40
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   stride+16(FP), R12
	MOVQ   nb+24(FP), CX
	LEAQ   (R12)(R12*2), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	BYTECONST($0x00010001, X11, Y11)
	TESTQ  CX, CX
	JZ     q80r4done

q80r4loop:
	VMOVDQU   2(SI), Y8
	VPSIGNB   Y8, Y8, Y9
	MOVWLZX   (SI), AX
	VMOVD     AX, X13
	VCVTPH2PS X13, X13
	VMOVDQU      2(DI), Y10
	VPSIGNB      Y8, Y10, Y10
	VPMADDUBSW   Y10, Y9, Y10
	VPMADDWD     Y11, Y10, Y10
	VCVTDQ2PS    Y10, Y10
	MOVWLZX      0(DI), DX
	VMOVD        DX, X12
	VCVTPH2PS    X12, X12
	VMULSS       X12, X13, X12
	VBROADCASTSS X12, Y12
	VFMADD231PS  Y12, Y10, Y0
	VMOVDQU      2(DI)(R12*1), Y10
	VPSIGNB      Y8, Y10, Y10
	VPMADDUBSW   Y10, Y9, Y10
	VPMADDWD     Y11, Y10, Y10
	VCVTDQ2PS    Y10, Y10
	MOVWLZX      0(DI)(R12*1), DX
	VMOVD        DX, X12
	VCVTPH2PS    X12, X12
	VMULSS       X12, X13, X12
	VBROADCASTSS X12, Y12
	VFMADD231PS  Y12, Y10, Y1
	VMOVDQU      2(DI)(R12*2), Y10
	VPSIGNB      Y8, Y10, Y10
	VPMADDUBSW   Y10, Y9, Y10
	VPMADDWD     Y11, Y10, Y10
	VCVTDQ2PS    Y10, Y10
	MOVWLZX      0(DI)(R12*2), DX
	VMOVD        DX, X12
	VCVTPH2PS    X12, X12
	VMULSS       X12, X13, X12
	VBROADCASTSS X12, Y12
	VFMADD231PS  Y12, Y10, Y2
	VMOVDQU      2(DI)(R13*1), Y10
	VPSIGNB      Y8, Y10, Y10
	VPMADDUBSW   Y10, Y9, Y10
	VPMADDWD     Y11, Y10, Y10
	VCVTDQ2PS    Y10, Y10
	MOVWLZX      0(DI)(R13*1), DX
	VMOVD        DX, X12
	VCVTPH2PS    X12, X12
	VMULSS       X12, X13, X12
	VBROADCASTSS X12, Y12
	VFMADD231PS  Y12, Y10, Y3
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  q80r4loop

q80r4done:
	MOVQ out+32(FP), AX
	VEXTRACTF128 $1, Y0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0x4E, X0, X15
	VADDPS       X15, X0, X0
	VPERMILPS    $0xB1, X0, X15
	VADDPS       X15, X0, X0
	VMOVSS       X0, 0(AX)
	VEXTRACTF128 $1, Y1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0x4E, X1, X15
	VADDPS       X15, X1, X1
	VPERMILPS    $0xB1, X1, X15
	VADDPS       X15, X1, X1
	VMOVSS       X1, 4(AX)
	VEXTRACTF128 $1, Y2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0x4E, X2, X15
	VADDPS       X15, X2, X2
	VPERMILPS    $0xB1, X2, X15
	VADDPS       X15, X2, X2
	VMOVSS       X2, 8(AX)
	VEXTRACTF128 $1, Y3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0x4E, X3, X15
	VADDPS       X15, X3, X3
	VPERMILPS    $0xB1, X3, X15
	VADDPS       X15, X3, X3
	VMOVSS       X3, 12(AX)
	VZEROUPPER
	RET

// ---------------------------------------------------------------------------
// Q4_K in the order of llama.cpp's repacked q4_K_8x8_q8_K kernels, as llamaorder_k.go
// writes it (dotQ4_KGemvRef, dotQ4_KGemmRef): per super-block the exact integer sums of the
// four 64-element chunks (isum) and of the mins (imin) are folded into two scalar
// accumulators, once per super-block (GEMV) or once per chunk (GEMM); the result is
// acc - accMin.

// func dotQ4_KGemvAVX2(w, a *byte, nb int) float32
TEXT ·dotQ4_KGemvAVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       X0, X0, X0
	VXORPS       X12, X12, X12
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ        CX, CX
	JZ           dotQ4_KGemvAVX2done

dotQ4_KGemvAVX2loop:
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  BX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	ANDL  $0x3f3f3f3f, R10
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, DX
	ANDL  $0x3f3f3f3f, AX
	SHLQ  $32, DX
	ORQ   DX, AX
	SHLQ  $32, R8
	ORQ   R8, R10

	// X3 = imin[0..3] (exact int32), Y1 = scales as words in both lanes.
	VMOVQ       R10, X2
	VPMOVZXBW   X2, X2
	VMOVDQU     260(DI), X3
	VPHADDW     276(DI), X3, X3
	VPMADDWD    X3, X2, X3
	VMOVQ       AX, X1
	VPMOVZXBW   X1, X1
	VINSERTI128 $1, X1, Y1, Y1
	VMOVDQU    16(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 4(DI), Y4, Y4
	VPMADDUBSW 36(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+0(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+32(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y4, Y13
	VMOVDQU    48(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 68(DI), Y4, Y4
	VPMADDUBSW 100(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+64(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+96(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y4, Y14
	VMOVDQU    80(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 132(DI), Y4, Y4
	VPMADDUBSW 164(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+128(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+160(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y4, Y15
	VMOVDQU    112(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 196(DI), Y4, Y4
	VPMADDUBSW 228(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+192(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+224(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y4, Y2
	// X2 = isum[0..3]: the four 64-element chunk sums (exact int32).
	VPHADDD      Y14, Y13, Y13
	VPHADDD      Y2, Y15, Y15
	VPHADDD      Y15, Y13, Y13
	VEXTRACTI128 $1, Y13, X2
	VPADDD       X13, X2, X2

	// X8 = [d*da, dmin*da]
	MOVL         (SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VBROADCASTSS (DI), X9
	VMULPS       X9, X8, X8
	VMOVSHDUP    X8, X10
	// GEMV: acc = fma(float(Σ isum), d, acc); accMin likewise.
	VPHADDD     X2, X2, X2
	VPHADDD     X2, X2, X2
	VCVTDQ2PS   X2, X2
	VFMADD231SS X8, X2, X0
	VPHADDD     X3, X3, X3
	VPHADDD     X3, X3, X3
	VCVTDQ2PS   X3, X3
	VFMADD231SS X10, X3, X12
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  dotQ4_KGemvAVX2loop

dotQ4_KGemvAVX2done:
	VSUBSS X12, X0, X0
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func dotQ4_KGemmAVX2(w, a *byte, nb int) float32
TEXT ·dotQ4_KGemmAVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         a+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       X0, X0, X0
	VXORPS       X12, X12, X12
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ        CX, CX
	JZ           dotQ4_KGemmAVX2done

dotQ4_KGemmAVX2loop:
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  BX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	ANDL  $0x3f3f3f3f, R10
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, DX
	ANDL  $0x3f3f3f3f, AX
	SHLQ  $32, DX
	ORQ   DX, AX
	SHLQ  $32, R8
	ORQ   R8, R10

	// X3 = imin[0..3] (exact int32), Y1 = scales as words in both lanes.
	VMOVQ       R10, X2
	VPMOVZXBW   X2, X2
	VMOVDQU     260(DI), X3
	VPHADDW     276(DI), X3, X3
	VPMADDWD    X3, X2, X3
	VMOVQ       AX, X1
	VPMOVZXBW   X1, X1
	VINSERTI128 $1, X1, Y1, Y1
	VMOVDQU    16(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 4(DI), Y4, Y4
	VPMADDUBSW 36(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+0(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+32(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y4, Y13
	VMOVDQU    48(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 68(DI), Y4, Y4
	VPMADDUBSW 100(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+64(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+96(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y4, Y14
	VMOVDQU    80(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 132(DI), Y4, Y4
	VPMADDUBSW 164(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+128(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+160(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y4, Y15
	VMOVDQU    112(SI), Y4
	VPSRLW     $4, Y4, Y5
	VPAND      Y11, Y4, Y4
	VPAND      Y11, Y5, Y5
	VPMADDUBSW 196(DI), Y4, Y4
	VPMADDUBSW 228(DI), Y5, Y5
	VPSHUFB    q4kShuf<>+192(SB), Y1, Y6
	VPSHUFB    q4kShuf<>+224(SB), Y1, Y7
	VPMADDWD   Y6, Y4, Y4
	VPMADDWD   Y7, Y5, Y5
	VPADDD     Y5, Y4, Y2
	// X2 = isum[0..3]: the four 64-element chunk sums (exact int32).
	VPHADDD      Y14, Y13, Y13
	VPHADDD      Y2, Y15, Y15
	VPHADDD      Y15, Y13, Y13
	VEXTRACTI128 $1, Y13, X2
	VPADDD       X13, X2, X2

	// X8 = [d*da, dmin*da]
	MOVL         (SI), AX
	VMOVD        AX, X8
	VCVTPH2PS    X8, X8
	VBROADCASTSS (DI), X9
	VMULPS       X9, X8, X8
	VMOVSHDUP    X8, X10
	// GEMM: acc = fma(float(isum[p]), d, acc) for p = 0..3; accMin likewise.
	VCVTDQ2PS   X2, X2
	VCVTDQ2PS   X3, X3
	VFMADD231SS X8, X2, X0
	VFMADD231SS X10, X3, X12
	VMOVSHDUP   X2, X4
	VMOVSHDUP   X3, X5
	VFMADD231SS X8, X4, X0
	VFMADD231SS X10, X5, X12
	VPERMILPS   $0x0E, X2, X4
	VPERMILPS   $0x0E, X3, X5
	VFMADD231SS X8, X4, X0
	VFMADD231SS X10, X5, X12
	VPERMILPS   $0x0F, X2, X4
	VPERMILPS   $0x0F, X3, X5
	VFMADD231SS X8, X4, X0
	VFMADD231SS X10, X5, X12
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  dotQ4_KGemmAVX2loop

dotQ4_KGemmAVX2done:
	VSUBSS X12, X0, X0
	VZEROUPPER
	MOVSS  X0, ret+24(FP)
	RET

// func dotQ4_KRows4LlamaAVX2(w, a *byte, stride, nb int, out *float32, gemv bool)
// dotQ4_KGemmAVX2 (gemv false) or dotQ4_KGemvAVX2 (gemv true) for 4 activation rows at
// a + r*stride: the weights are unpacked once; the per-row chunk vectors go through the stack
// (0..511(SP)); per row the same integer sums and the same FMA sequence as the one-row
// kernel, so out[r] is bit-identical to it.
TEXT ·dotQ4_KRows4LlamaAVX2(SB), NOSPLIT, $512-41
	MOVQ   w+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   stride+16(FP), R12
	MOVQ   nb+24(FP), CX
	MOVBQZX gemv+40(FP), R14
	LEAQ   (R12)(R12*2), R13
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	VXORPS X4, X4, X4
	VXORPS X5, X5, X5
	VXORPS X6, X6, X6
	VXORPS X7, X7, X7
	TESTQ  CX, CX
	JZ     q4kgr4done

q4kgr4loop:
	MOVL  4(SI), AX
	MOVL  8(SI), BX
	MOVL  12(SI), DX
	MOVL  DX, R8
	SHRL  $4, R8
	ANDL  $0x0f0f0f0f, R8
	MOVL  BX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, R8
	MOVL  BX, R10
	ANDL  $0x3f3f3f3f, R10
	ANDL  $0x0f0f0f0f, DX
	MOVL  AX, R9
	SHRL  $6, R9
	ANDL  $0x03030303, R9
	SHLL  $4, R9
	ORL   R9, DX
	ANDL  $0x3f3f3f3f, AX
	SHLQ  $32, DX
	ORQ   DX, AX
	SHLQ  $32, R8
	ORQ   R8, R10
	VMOVQ       AX, X12
	VPMOVZXBW   X12, X12
	VINSERTI128 $1, X12, Y12, Y12
	VMOVDQU    16(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSHUFB    q4kShuf<>+0(SB), Y12, Y10
	VPSHUFB    q4kShuf<>+32(SB), Y12, Y11
	VPMADDUBSW 4(DI), Y8, Y14
	VPMADDUBSW 36(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 0(SP)
	VPMADDUBSW 4(DI)(R12*1), Y8, Y14
	VPMADDUBSW 36(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 128(SP)
	VPMADDUBSW 4(DI)(R12*2), Y8, Y14
	VPMADDUBSW 36(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 256(SP)
	VPMADDUBSW 4(DI)(R13*1), Y8, Y14
	VPMADDUBSW 36(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 384(SP)
	VMOVDQU    48(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSHUFB    q4kShuf<>+64(SB), Y12, Y10
	VPSHUFB    q4kShuf<>+96(SB), Y12, Y11
	VPMADDUBSW 68(DI), Y8, Y14
	VPMADDUBSW 100(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 32(SP)
	VPMADDUBSW 68(DI)(R12*1), Y8, Y14
	VPMADDUBSW 100(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 160(SP)
	VPMADDUBSW 68(DI)(R12*2), Y8, Y14
	VPMADDUBSW 100(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 288(SP)
	VPMADDUBSW 68(DI)(R13*1), Y8, Y14
	VPMADDUBSW 100(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 416(SP)
	VMOVDQU    80(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSHUFB    q4kShuf<>+128(SB), Y12, Y10
	VPSHUFB    q4kShuf<>+160(SB), Y12, Y11
	VPMADDUBSW 132(DI), Y8, Y14
	VPMADDUBSW 164(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 64(SP)
	VPMADDUBSW 132(DI)(R12*1), Y8, Y14
	VPMADDUBSW 164(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 192(SP)
	VPMADDUBSW 132(DI)(R12*2), Y8, Y14
	VPMADDUBSW 164(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 320(SP)
	VPMADDUBSW 132(DI)(R13*1), Y8, Y14
	VPMADDUBSW 164(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 448(SP)
	VMOVDQU    112(SI), Y8
	VPSRLW     $4, Y8, Y9
	VPAND      c0f<>(SB), Y8, Y8
	VPAND      c0f<>(SB), Y9, Y9
	VPSHUFB    q4kShuf<>+192(SB), Y12, Y10
	VPSHUFB    q4kShuf<>+224(SB), Y12, Y11
	VPMADDUBSW 196(DI), Y8, Y14
	VPMADDUBSW 228(DI), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 96(SP)
	VPMADDUBSW 196(DI)(R12*1), Y8, Y14
	VPMADDUBSW 228(DI)(R12*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 224(SP)
	VPMADDUBSW 196(DI)(R12*2), Y8, Y14
	VPMADDUBSW 228(DI)(R12*2), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 352(SP)
	VPMADDUBSW 196(DI)(R13*1), Y8, Y14
	VPMADDUBSW 228(DI)(R13*1), Y9, Y15
	VPMADDWD   Y10, Y14, Y14
	VPMADDWD   Y11, Y15, Y15
	VPADDD     Y15, Y14, Y14
	VMOVDQU    Y14, 480(SP)
	VMOVQ     R10, X8
	VPMOVZXBW X8, X8
	MOVL      (SI), AX
	VMOVD     AX, X9
	VCVTPH2PS X9, X9
	VMOVDQU      0(SP), Y14
	VPHADDD      32(SP), Y14, Y14
	VMOVDQU      64(SP), Y15
	VPHADDD      96(SP), Y15, Y15
	VPHADDD      Y15, Y14, Y14
	VEXTRACTI128 $1, Y14, X15
	VPADDD       X15, X14, X14
	VMOVDQU      260(DI), X15
	VPHADDW      276(DI), X15, X15
	VPMADDWD     X15, X8, X15
	VBROADCASTSS 0(DI), X10
	VMULPS       X10, X9, X10
	VMOVSHDUP    X10, X11
	TESTQ        R14, R14
	JNZ          q4kgr4gemv0
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    X15, X15
	VFMADD231SS  X10, X14, X0
	VFMADD231SS  X11, X15, X4
	VMOVSHDUP    X14, X12
	VMOVSHDUP    X15, X13
	VFMADD231SS  X10, X12, X0
	VFMADD231SS  X11, X13, X4
	VPERMILPS    $0x0E, X14, X12
	VPERMILPS    $0x0E, X15, X13
	VFMADD231SS  X10, X12, X0
	VFMADD231SS  X11, X13, X4
	VPERMILPS    $0x0F, X14, X12
	VPERMILPS    $0x0F, X15, X13
	VFMADD231SS  X10, X12, X0
	VFMADD231SS  X11, X13, X4
	JMP          q4kgr4next0
q4kgr4gemv0: // GEMV order: one fold of the super-block's exact sums
	VPHADDD      X14, X14, X14
	VPHADDD      X14, X14, X14
	VPHADDD      X15, X15, X15
	VPHADDD      X15, X15, X15
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    X15, X15
	VFMADD231SS  X10, X14, X0
	VFMADD231SS  X11, X15, X4
q4kgr4next0:
	VMOVDQU      128(SP), Y14
	VPHADDD      160(SP), Y14, Y14
	VMOVDQU      192(SP), Y15
	VPHADDD      224(SP), Y15, Y15
	VPHADDD      Y15, Y14, Y14
	VEXTRACTI128 $1, Y14, X15
	VPADDD       X15, X14, X14
	VMOVDQU      260(DI)(R12*1), X15
	VPHADDW      276(DI)(R12*1), X15, X15
	VPMADDWD     X15, X8, X15
	VBROADCASTSS 0(DI)(R12*1), X10
	VMULPS       X10, X9, X10
	VMOVSHDUP    X10, X11
	TESTQ        R14, R14
	JNZ          q4kgr4gemv1
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    X15, X15
	VFMADD231SS  X10, X14, X1
	VFMADD231SS  X11, X15, X5
	VMOVSHDUP    X14, X12
	VMOVSHDUP    X15, X13
	VFMADD231SS  X10, X12, X1
	VFMADD231SS  X11, X13, X5
	VPERMILPS    $0x0E, X14, X12
	VPERMILPS    $0x0E, X15, X13
	VFMADD231SS  X10, X12, X1
	VFMADD231SS  X11, X13, X5
	VPERMILPS    $0x0F, X14, X12
	VPERMILPS    $0x0F, X15, X13
	VFMADD231SS  X10, X12, X1
	VFMADD231SS  X11, X13, X5
	JMP          q4kgr4next1
q4kgr4gemv1: // GEMV order: one fold of the super-block's exact sums
	VPHADDD      X14, X14, X14
	VPHADDD      X14, X14, X14
	VPHADDD      X15, X15, X15
	VPHADDD      X15, X15, X15
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    X15, X15
	VFMADD231SS  X10, X14, X1
	VFMADD231SS  X11, X15, X5
q4kgr4next1:
	VMOVDQU      256(SP), Y14
	VPHADDD      288(SP), Y14, Y14
	VMOVDQU      320(SP), Y15
	VPHADDD      352(SP), Y15, Y15
	VPHADDD      Y15, Y14, Y14
	VEXTRACTI128 $1, Y14, X15
	VPADDD       X15, X14, X14
	VMOVDQU      260(DI)(R12*2), X15
	VPHADDW      276(DI)(R12*2), X15, X15
	VPMADDWD     X15, X8, X15
	VBROADCASTSS 0(DI)(R12*2), X10
	VMULPS       X10, X9, X10
	VMOVSHDUP    X10, X11
	TESTQ        R14, R14
	JNZ          q4kgr4gemv2
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    X15, X15
	VFMADD231SS  X10, X14, X2
	VFMADD231SS  X11, X15, X6
	VMOVSHDUP    X14, X12
	VMOVSHDUP    X15, X13
	VFMADD231SS  X10, X12, X2
	VFMADD231SS  X11, X13, X6
	VPERMILPS    $0x0E, X14, X12
	VPERMILPS    $0x0E, X15, X13
	VFMADD231SS  X10, X12, X2
	VFMADD231SS  X11, X13, X6
	VPERMILPS    $0x0F, X14, X12
	VPERMILPS    $0x0F, X15, X13
	VFMADD231SS  X10, X12, X2
	VFMADD231SS  X11, X13, X6
	JMP          q4kgr4next2
q4kgr4gemv2: // GEMV order: one fold of the super-block's exact sums
	VPHADDD      X14, X14, X14
	VPHADDD      X14, X14, X14
	VPHADDD      X15, X15, X15
	VPHADDD      X15, X15, X15
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    X15, X15
	VFMADD231SS  X10, X14, X2
	VFMADD231SS  X11, X15, X6
q4kgr4next2:
	VMOVDQU      384(SP), Y14
	VPHADDD      416(SP), Y14, Y14
	VMOVDQU      448(SP), Y15
	VPHADDD      480(SP), Y15, Y15
	VPHADDD      Y15, Y14, Y14
	VEXTRACTI128 $1, Y14, X15
	VPADDD       X15, X14, X14
	VMOVDQU      260(DI)(R13*1), X15
	VPHADDW      276(DI)(R13*1), X15, X15
	VPMADDWD     X15, X8, X15
	VBROADCASTSS 0(DI)(R13*1), X10
	VMULPS       X10, X9, X10
	VMOVSHDUP    X10, X11
	TESTQ        R14, R14
	JNZ          q4kgr4gemv3
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    X15, X15
	VFMADD231SS  X10, X14, X3
	VFMADD231SS  X11, X15, X7
	VMOVSHDUP    X14, X12
	VMOVSHDUP    X15, X13
	VFMADD231SS  X10, X12, X3
	VFMADD231SS  X11, X13, X7
	VPERMILPS    $0x0E, X14, X12
	VPERMILPS    $0x0E, X15, X13
	VFMADD231SS  X10, X12, X3
	VFMADD231SS  X11, X13, X7
	VPERMILPS    $0x0F, X14, X12
	VPERMILPS    $0x0F, X15, X13
	VFMADD231SS  X10, X12, X3
	VFMADD231SS  X11, X13, X7
	JMP          q4kgr4next3
q4kgr4gemv3: // GEMV order: one fold of the super-block's exact sums
	VPHADDD      X14, X14, X14
	VPHADDD      X14, X14, X14
	VPHADDD      X15, X15, X15
	VPHADDD      X15, X15, X15
	VCVTDQ2PS    X14, X14
	VCVTDQ2PS    X15, X15
	VFMADD231SS  X10, X14, X3
	VFMADD231SS  X11, X15, X7
q4kgr4next3:
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q4kgr4loop

q4kgr4done:
	MOVQ out+32(FP), AX
	VSUBSS X4, X0, X0
	VMOVSS X0, 0(AX)
	VSUBSS X5, X1, X1
	VMOVSS X1, 4(AX)
	VSUBSS X6, X2, X2
	VMOVSS X2, 8(AX)
	VSUBSS X7, X3, X3
	VMOVSS X3, 12(AX)
	VZEROUPPER
	RET
