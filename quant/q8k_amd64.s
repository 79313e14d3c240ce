#include "textflag.h"

// func quantQ8KAVX512(x *float32, dst *byte, nb int, posMax bool) int
//
// Quantizes up to nb blocks of 256 floats into Q8_K blocks (d float32, qs[256] int8,
// bsums[16] int16) with the bits of quantRefQ8_K (posMax false: iscale = -127/mx, mx the
// first element of largest magnitude) or quantQ8K4x8Ref (posMax true: iscale = -127/amax if
// some element equals +amax, else 127/amax). It stops before the first block whose amax is
// Inf or NaN or whose iscale is not finite (amax below ~3.7e-37) and returns the number of
// blocks written; the caller quantizes that block with the Go reference. In every other
// block |iscale·x| <= 127·(1+2^-23)^2 < 127.5, so VCVTPS2DQ (round to nearest even, the
// default MXCSR mode) equals nearest_int, no value needs the clamp to 127, and the packs'
// saturation never engages.
//
// Registers: Z16-Z31 the block; Z10 abs mask; Z11 the 4x4 dword transpose; Z12 0x80 bytes;
// Z13 zero; Z14 2048 (16·128) dwords; Z2 iscale; Z3-Z6 the packed quants.
TEXT ·quantQ8KAVX512(SB), NOSPLIT, $0-40
	MOVQ    x+0(FP), SI
	MOVQ    dst+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVBLZX posMax+24(FP), R8
	XORQ    R9, R9                 // blocks done
	MOVL    $0x7fffffff, AX
	VPBROADCASTD AX, Z10
	VMOVDQU32 q8kTranspose<>(SB), Z11
	MOVL    $0x80, AX
	VPBROADCASTB AX, Z12
	VPXORD  Z13, Z13, Z13
	MOVL    $2048, AX
	VPBROADCASTD AX, Z14
	TESTQ   CX, CX
	JLE     done

block:
	VMOVUPS 0(SI), Z16
	VMOVUPS 64(SI), Z17
	VMOVUPS 128(SI), Z18
	VMOVUPS 192(SI), Z19
	VMOVUPS 256(SI), Z20
	VMOVUPS 320(SI), Z21
	VMOVUPS 384(SI), Z22
	VMOVUPS 448(SI), Z23
	VMOVUPS 512(SI), Z24
	VMOVUPS 576(SI), Z25
	VMOVUPS 640(SI), Z26
	VMOVUPS 704(SI), Z27
	VMOVUPS 768(SI), Z28
	VMOVUPS 832(SI), Z29
	VMOVUPS 896(SI), Z30
	VMOVUPS 960(SI), Z31

	// amax as integer bits: the largest |x| bits (NaN above +Inf).
	VPANDD  Z10, Z16, Z0
	VPANDD  Z10, Z17, Z1
	VPANDD  Z10, Z18, Z7
	VPANDD  Z10, Z19, Z8
	VPANDD  Z10, Z20, Z3
	VPANDD  Z10, Z21, Z4
	VPANDD  Z10, Z22, Z5
	VPANDD  Z10, Z23, Z6
	VPMAXSD Z3, Z0, Z0
	VPMAXSD Z4, Z1, Z1
	VPMAXSD Z5, Z7, Z7
	VPMAXSD Z6, Z8, Z8
	VPANDD  Z10, Z24, Z3
	VPANDD  Z10, Z25, Z4
	VPANDD  Z10, Z26, Z5
	VPANDD  Z10, Z27, Z6
	VPMAXSD Z3, Z0, Z0
	VPMAXSD Z4, Z1, Z1
	VPMAXSD Z5, Z7, Z7
	VPMAXSD Z6, Z8, Z8
	VPANDD  Z10, Z28, Z3
	VPANDD  Z10, Z29, Z4
	VPANDD  Z10, Z30, Z5
	VPANDD  Z10, Z31, Z6
	VPMAXSD Z3, Z0, Z0
	VPMAXSD Z4, Z1, Z1
	VPMAXSD Z5, Z7, Z7
	VPMAXSD Z6, Z8, Z8
	VPMAXSD Z1, Z0, Z0
	VPMAXSD Z8, Z7, Z7
	VPMAXSD Z7, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPMAXSD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXSD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPMAXSD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPMAXSD X1, X0, X0         // every lane: amax bits
	VMOVD   X0, AX
	TESTL   AX, AX
	JZ      zero
	CMPL    AX, $0x7f800000
	JAE     done               // Inf or NaN: the reference does this block

	TESTQ   R8, R8
	JNZ     posmax

	// quantize_row_q8_K_ref: mx is the first element with |x| = amax; iscale = -127/mx.
	VPBROADCASTD X0, Z9
	XORQ    DX, DX
#define FIND(off, Z) \
	MOVQ    $off, DX; \
	VPANDD  Z10, Z, Z1; \
	VPCMPEQD Z9, Z1, K1; \
	KORTESTW K1, K1; \
	JNZ     found
	FIND(0, Z16)
	FIND(64, Z17)
	FIND(128, Z18)
	FIND(192, Z19)
	FIND(256, Z20)
	FIND(320, Z21)
	FIND(384, Z22)
	FIND(448, Z23)
	FIND(512, Z24)
	FIND(576, Z25)
	FIND(640, Z26)
	FIND(704, Z27)
	FIND(768, Z28)
	FIND(832, Z29)
	FIND(896, Z30)
	FIND(960, Z31)
#undef FIND
found:
	KMOVW   K1, BX
	BSFL    BX, BX
	LEAQ    (DX)(BX*4), DX
	VMOVSS  (SI)(DX*1), X1     // mx
	MOVL    $0xc2fe0000, AX    // -127
	VMOVD   AX, X2
	VDIVSS  X1, X2, X2         // iscale = -127/mx
	JMP     scaled

posmax:
	// ggml_quantize_mat_q8_K_4x8: iscale = -127/amax if the largest element (as signed
	// integer bits, which order positive floats) is +amax, else 127/amax.
	VPMAXSD Z17, Z16, Z1
	VPMAXSD Z19, Z18, Z7
	VPMAXSD Z21, Z20, Z8
	VPMAXSD Z23, Z22, Z9
	VPMAXSD Z24, Z1, Z1
	VPMAXSD Z25, Z7, Z7
	VPMAXSD Z26, Z8, Z8
	VPMAXSD Z27, Z9, Z9
	VPMAXSD Z28, Z1, Z1
	VPMAXSD Z29, Z7, Z7
	VPMAXSD Z30, Z8, Z8
	VPMAXSD Z31, Z9, Z9
	VPMAXSD Z7, Z1, Z1
	VPMAXSD Z9, Z8, Z8
	VPMAXSD Z8, Z1, Z1
	VEXTRACTI64X4 $1, Z1, Y7
	VPMAXSD Y7, Y1, Y1
	VEXTRACTI128 $1, Y1, X7
	VPMAXSD X7, X1, X1
	VPSHUFD $0x4e, X1, X7
	VPMAXSD X7, X1, X1
	VPSHUFD $0xb1, X1, X7
	VPMAXSD X7, X1, X1
	VMOVD   X1, BX
	MOVL    $0x42fe0000, DX    // 127
	MOVL    $0xc2fe0000, R10   // -127
	CMPL    BX, AX
	CMOVLEQ R10, DX
	VMOVD   DX, X2
	VDIVSS  X0, X2, X2         // iscale = ±127/amax

scaled:
	VMOVD   X2, AX
	ANDL    $0x7fffffff, AX
	CMPL    AX, $0x7f800000
	JAE     done               // iscale overflowed: the reference does this block
	MOVL    $0x3f800000, AX    // 1
	VMOVD   AX, X1
	VDIVSS  X2, X1, X1
	VMOVSS  X1, (DI)           // d = 1/iscale
	VBROADCASTSS X2, Z2

#define QUANT4(A, B, C, D, Q) \
	VMULPS  Z2, A, Z0; \
	VMULPS  Z2, B, Z1; \
	VMULPS  Z2, C, Z7; \
	VMULPS  Z2, D, Z8; \
	VCVTPS2DQ Z0, Z0; \
	VCVTPS2DQ Z1, Z1; \
	VCVTPS2DQ Z7, Z7; \
	VCVTPS2DQ Z8, Z8; \
	VPACKSSDW Z1, Z0, Z0; \
	VPACKSSDW Z8, Z7, Z7; \
	VPACKSSWB Z7, Z0, Z0; \
	VPERMD  Z0, Z11, Q
	QUANT4(Z16, Z17, Z18, Z19, Z3)
	QUANT4(Z20, Z21, Z22, Z23, Z4)
	QUANT4(Z24, Z25, Z26, Z27, Z5)
	QUANT4(Z28, Z29, Z30, Z31, Z6)
#undef QUANT4
	VMOVDQU32 Z3, 4(DI)
	VMOVDQU32 Z4, 68(DI)
	VMOVDQU32 Z5, 132(DI)
	VMOVDQU32 Z6, 196(DI)

	// bsums: VPSADBW of the quants biased by 128 sums each 8 bytes; pairs of qwords give
	// the 16-byte groups (+2048), gathered by the same transpose.
	VPXORD  Z12, Z3, Z0
	VPXORD  Z12, Z4, Z1
	VPXORD  Z12, Z5, Z7
	VPXORD  Z12, Z6, Z8
	VPSADBW Z13, Z0, Z0
	VPSADBW Z13, Z1, Z1
	VPSADBW Z13, Z7, Z7
	VPSADBW Z13, Z8, Z8
	VPSLLQ  $32, Z1, Z1
	VPSLLQ  $32, Z8, Z8
	VPORD   Z1, Z0, Z0         // lane l: [g_l a, g_4+l a, g_l b, g_4+l b]
	VPORD   Z8, Z7, Z7         // lane l: [g_8+l a, g_12+l a, g_8+l b, g_12+l b]
	VPSHUFD $0x4e, Z0, Z1
	VPSHUFD $0x4e, Z7, Z8
	VPADDD  Z1, Z0, Z0
	VPADDD  Z8, Z7, Z7
	VPUNPCKLQDQ Z7, Z0, Z0     // lane l: [g_l, g_4+l, g_8+l, g_12+l]
	VPERMD  Z0, Z11, Z0
	VPSUBD  Z14, Z0, Z0
	VPMOVDW Z0, Y0
	VMOVDQU Y0, 260(DI)
	JMP     next

zero:
	VMOVDQU32 Z13, 0(DI)
	VMOVDQU32 Z13, 64(DI)
	VMOVDQU32 Z13, 128(DI)
	VMOVDQU32 Z13, 192(DI)
	VMOVDQU Y13, 256(DI)
	MOVL    $0, 288(DI)

next:
	ADDQ    $1024, SI
	ADDQ    $292, DI
	INCQ    R9
	CMPQ    R9, CX
	JLT     block

done:
	VZEROUPPER
	MOVQ    R9, ret+32(FP)
	RET

// q8kTranspose: dword p takes dword 4·(p%4) + p/4 (a 4x4 transpose of 128-bit lanes' dwords).
DATA q8kTranspose<>+0(SB)/4, $0
DATA q8kTranspose<>+4(SB)/4, $4
DATA q8kTranspose<>+8(SB)/4, $8
DATA q8kTranspose<>+12(SB)/4, $12
DATA q8kTranspose<>+16(SB)/4, $1
DATA q8kTranspose<>+20(SB)/4, $5
DATA q8kTranspose<>+24(SB)/4, $9
DATA q8kTranspose<>+28(SB)/4, $13
DATA q8kTranspose<>+32(SB)/4, $2
DATA q8kTranspose<>+36(SB)/4, $6
DATA q8kTranspose<>+40(SB)/4, $10
DATA q8kTranspose<>+44(SB)/4, $14
DATA q8kTranspose<>+48(SB)/4, $3
DATA q8kTranspose<>+52(SB)/4, $7
DATA q8kTranspose<>+56(SB)/4, $11
DATA q8kTranspose<>+60(SB)/4, $15
GLOBL q8kTranspose<>(SB), RODATA|NOPTR, $64
