#include "textflag.h"

// All kernels take n, a positive multiple of 8, and work 8 lanes at a time.
// VCVTPS2PH $0 rounds to nearest even, as ggml's conversions do.

// func toF16AVX2(dst *uint16, src *float32, n int)
TEXT ·toF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET

// func toF32AVX2(dst *float32, src *uint16, n int)
TEXT ·toF32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET

// func madAVX2(y, x *uint16, n int, v float32)
TEXT ·madAVX2(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS v+24(FP), Y2
loop:
	VCVTPH2PS (SI), Y0
	VCVTPH2PS (DI), Y1
	VMULPS    Y2, Y0, Y0
	VADDPS    Y0, Y1, Y1
	VCVTPS2PH $0, Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET

// func madFMAAVX2(y, x *uint16, n int, v float32)
TEXT ·madFMAAVX2(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS v+24(FP), Y2
loop:
	VCVTPH2PS   (SI), Y0
	VCVTPH2PS   (DI), Y1
	VFMADD231PS Y2, Y0, Y1
	VCVTPS2PH   $0, Y1, (DI)
	ADDQ        $16, SI
	ADDQ        $16, DI
	SUBQ        $8, CX
	JNZ         loop
	VZEROUPPER
	RET

// func scaleAVX2(y *uint16, n int, v float32)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ         y+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS v+16(FP), Y2
loop:
	VCVTPH2PS (DI), Y1
	VMULPS    Y2, Y1, Y1
	VCVTPS2PH $0, Y1, (DI)
	ADDQ      $16, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET

// func dotAVX2(a, b *uint16, n int) float64
TEXT ·dotAVX2(SB), NOSPLIT, $0-32
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPD Y4, Y4, Y4
loop:
	VCVTPH2PS    (SI), Y0
	VCVTPH2PS    (DI), Y1
	VMULPS       Y1, Y0, Y0
	VCVTPS2PD    X0, Y2
	VEXTRACTF128 $1, Y0, X3
	VCVTPS2PD    X3, Y3
	VADDPD       Y2, Y4, Y4
	VADDPD       Y3, Y4, Y4
	ADDQ         $16, SI
	ADDQ         $16, DI
	SUBQ         $8, CX
	JNZ          loop
	VEXTRACTF128 $1, Y4, X5
	VADDPD       X5, X4, X4
	VHADDPD      X4, X4, X4
	VZEROUPPER
	MOVSD        X4, ret+24(FP)
	RET

// func madRowsAVX2(y, v *uint16, strideBytes, n int, ms, vs *float32, rows int)
// For each row: y = f16(y·ms[j]); y = f16(fma(v_j, vs[j], y)), 8 halves at a time.
TEXT ·madRowsAVX2(SB), NOSPLIT, $0-56
	MOVQ v+8(FP), SI
	MOVQ strideBytes+16(FP), R8
	MOVQ ms+32(FP), R9
	MOVQ vs+40(FP), R10
	MOVQ rows+48(FP), R11
row:
	VBROADCASTSS (R9), Y2
	VBROADCASTSS (R10), Y3
	MOVQ         y+0(FP), DI
	MOVQ         SI, DX
	MOVQ         n+24(FP), CX
inner:
	VCVTPH2PS   (DI), Y0
	VMULPS      Y2, Y0, Y0
	VCVTPS2PH   $0, Y0, X0
	VCVTPH2PS   X0, Y0
	VCVTPH2PS   (DX), Y1
	VFMADD231PS Y3, Y1, Y0
	VCVTPS2PH   $0, Y0, (DI)
	ADDQ        $16, DI
	ADDQ        $16, DX
	SUBQ        $8, CX
	JNZ         inner
	ADDQ        R8, SI
	ADDQ        $4, R9
	ADDQ        $4, R10
	DECQ        R11
	JNZ         row
	VZEROUPPER
	RET
