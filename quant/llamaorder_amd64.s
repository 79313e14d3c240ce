#include "textflag.h"

DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

// func dotQ8_0LanesAVX2(w, a *byte, nb int) float32
// Eight lanes of four products each (|w|·sign(a, w) with VPMADDUBSW then VPMADDWD: the
// pair sums stay below 2^15 for int8 activations in [-127, 127]), scaled by d_w·d_a with
// one fused multiply-add per block, then hsum_float_8 - llama.cpp's order exactly.
TEXT ·dotQ8_0LanesAVX2(SB), NOSPLIT, $0-28
	MOVQ    w+0(FP), SI
	MOVQ    a+8(FP), DI
	MOVQ    nb+16(FP), CX
	VXORPS  Y7, Y7, Y7
	VMOVDQU ones16<>(SB), Y8
loop:
	VMOVDQU    2(SI), Y0
	VMOVDQU    2(DI), Y1
	VPSIGNB    Y0, Y0, Y2
	VPSIGNB    Y0, Y1, Y3
	VPMADDUBSW Y3, Y2, Y4
	VPMADDWD   Y8, Y4, Y4
	VCVTDQ2PS  Y4, Y4
	MOVWLZX    (SI), AX
	MOVWLZX    (DI), BX
	VMOVD      AX, X5
	VMOVD      BX, X6
	VCVTPH2PS  X5, X5
	VCVTPH2PS  X6, X6
	VMULSS     X6, X5, X5
	VBROADCASTSS X5, Y5
	VFMADD231PS Y4, Y5, Y7
	ADDQ       $34, SI
	ADDQ       $34, DI
	DECQ       CX
	JNZ        loop
	VEXTRACTF128 $1, Y7, X0
	VADDPS     X7, X0, X0
	VMOVHLPS   X0, X0, X1
	VADDPS     X1, X0, X0
	VMOVSHDUP  X0, X1
	VADDSS     X1, X0, X0
	VZEROUPPER
	MOVSS      X0, ret+24(FP)
	RET
