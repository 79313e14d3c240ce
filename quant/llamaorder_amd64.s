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

DATA permQ8<>+0(SB)/4, $0
DATA permQ8<>+4(SB)/4, $4
DATA permQ8<>+8(SB)/4, $1
DATA permQ8<>+12(SB)/4, $5
DATA permQ8<>+16(SB)/4, $2
DATA permQ8<>+20(SB)/4, $6
DATA permQ8<>+24(SB)/4, $3
DATA permQ8<>+28(SB)/4, $7
GLOBL permQ8<>(SB), RODATA|NOPTR, $32

// func quantActQ8_0AVX2(x *float32, dst *byte, nb int)
// ggml-cpu's x86 quantize_row_q8_0, block by block: amax by max_ps, d = amax/127 stored as
// F16, q = round-half-even(x·(127/amax)) packed with saturation (packs + the same permute).
TEXT ·quantActQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    dst+8(FP), DI
	MOVQ    nb+16(FP), CX
	MOVL    $0x7fffffff, AX
	VMOVD   AX, X15
	VPBROADCASTD X15, Y15 // abs mask
	MOVL    $0x42fe0000, AX // 127
	VMOVD   AX, X14
	VMOVDQU permQ8<>(SB), Y13
block:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS  Y15, Y0, Y4
	VANDPS  Y15, Y1, Y5
	VANDPS  Y15, Y2, Y6
	VANDPS  Y15, Y3, Y7
	VMAXPS  Y5, Y4, Y4
	VMAXPS  Y7, Y6, Y6
	VMAXPS  Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS  X5, X4, X4
	VMOVHLPS X4, X4, X5
	VMAXPS  X5, X4, X4
	VMOVSHDUP X4, X5
	VMAXSS  X5, X4, X4      // amax
	VDIVSS  X14, X4, X5     // d = amax / 127
	VCVTPS2PH $0, X5, X5
	VPEXTRW $0, X5, AX
	MOVW    AX, (DI)
	VXORPS  X6, X6, X6
	VUCOMISS X6, X4
	JEQ     zero
	VDIVSS  X4, X14, X6     // id = 127 / amax
zero:
	VBROADCASTSS X6, Y6
	VMULPS  Y6, Y0, Y0
	VMULPS  Y6, Y1, Y1
	VMULPS  Y6, Y2, Y2
	VMULPS  Y6, Y3, Y3
	VROUNDPS $0, Y0, Y0
	VROUNDPS $0, Y1, Y1
	VROUNDPS $0, Y2, Y2
	VROUNDPS $0, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD   Y0, Y13, Y0
	VMOVDQU  Y0, 2(DI)
	ADDQ     $128, SI
	ADDQ     $34, DI
	DECQ     CX
	JNZ      block
	VZEROUPPER
	RET
