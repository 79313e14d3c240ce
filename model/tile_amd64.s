#include "textflag.h"
#include "vexp_amd64.h"

// func tileScoresAVX2(kq, q, kt *float32, hd int)
// 64 scores in eight YMM accumulators; for each dk in order: acc += q[dk]·kt[dk][0:64].
TEXT ·tileScoresAVX2(SB), NOSPLIT, $0-32
	MOVQ   kq+0(FP), DI
	MOVQ   q+8(FP), SI
	MOVQ   kt+16(FP), DX
	MOVQ   hd+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
loop:
	VBROADCASTSS (SI), Y8
	VFMADD231PS  0(DX), Y8, Y0
	VFMADD231PS  32(DX), Y8, Y1
	VFMADD231PS  64(DX), Y8, Y2
	VFMADD231PS  96(DX), Y8, Y3
	VFMADD231PS  128(DX), Y8, Y4
	VFMADD231PS  160(DX), Y8, Y5
	VFMADD231PS  192(DX), Y8, Y6
	VFMADD231PS  224(DX), Y8, Y7
	ADDQ         $4, SI
	ADDQ         $256, DX
	DECQ         CX
	JNZ          loop
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// func tileAccumAVX2(out, p, vf *float32, hd, n int)
// For each cell tk in order: out[0:hd] += p[tk]·vf[tk][0:hd], 8 floats at a time.
TEXT ·tileAccumAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ vf+16(FP), DX
	MOVQ hd+24(FP), R8
	MOVQ n+32(FP), R9
cell:
	VBROADCASTSS (SI), Y8
	MOVQ         DI, AX
	MOVQ         R8, CX
inner:
	VMOVUPS     (AX), Y0
	VFMADD231PS (DX), Y8, Y0
	VMOVUPS     Y0, (AX)
	ADDQ        $32, AX
	ADDQ        $32, DX
	SUBQ        $8, CX
	JNZ         inner
	ADDQ        $4, SI
	DECQ        R9
	JNZ         cell
	VZEROUPPER
	RET

// func tileAccum32AVX2(out, p, vf *float32, strideBytes, n int)
// tileAccum for 32 output floats held in four registers across all n cells (same FMA
// order per element: cell by cell).
TEXT ·tileAccum32AVX2(SB), NOSPLIT, $0-40
	MOVQ    out+0(FP), DI
	MOVQ    p+8(FP), SI
	MOVQ    vf+16(FP), DX
	MOVQ    strideBytes+24(FP), R8
	MOVQ    n+32(FP), R9
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
cell:
	VBROADCASTSS (SI), Y8
	VFMADD231PS  0(DX), Y8, Y0
	VFMADD231PS  32(DX), Y8, Y1
	VFMADD231PS  64(DX), Y8, Y2
	VFMADD231PS  96(DX), Y8, Y3
	ADDQ         $4, SI
	ADDQ         R8, DX
	DECQ         R9
	JNZ          cell
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func softmaxTileAVX2(dst, x *float32, max float32, n16 int, sum0 float64) (sum float64, bad int)
// softmaxTile's vectors: dst[i] = ggml_v_expf(x[i] - max) for n16·16 floats, and
// sum = sum0 + each 16-float vector's _mm512_reduce_add_ps (halves folded 8, 4, 2, 1) in
// float64, in order. bad is non-zero when some lane fell outside VEXP8 (the caller then
// recomputes from x, which is not written).
TEXT ·softmaxTileAVX2(SB), NOSPLIT, $8-56
	MOVQ  dst+0(FP), DI
	MOVQ  x+8(FP), SI
	MOVQ  n16+24(FP), CX
	MOVSD sum0+32(FP), X0
	MOVSD X0, s-8(SP)
	XORQ  R9, R9

smtloop:
	VBROADCASTSS max+16(FP), Y1
	VMOVUPS      (SI), Y0
	VSUBPS       Y1, Y0, Y0
	VEXP8
	VMOVUPS      Y11, (DI)
	ORQ          AX, R9
	VBROADCASTSS max+16(FP), Y1
	VMOVUPS      32(SI), Y0
	VSUBPS       Y1, Y0, Y0
	VEXP8
	VMOVUPS      Y11, 32(DI)
	ORQ          AX, R9
	VMOVUPS      (DI), Y0
	VADDPS       32(DI), Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0x4E, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xB1, X0, X1
	VADDPS       X1, X0, X0
	VCVTSS2SD    X0, X0, X0
	VADDSD       s-8(SP), X0, X0
	VMOVSD       X0, s-8(SP)
	ADDQ         $64, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          smtloop
	MOVSD s-8(SP), X0
	MOVSD X0, sum+40(FP)
	MOVQ  R9, bad+48(FP)
	VZEROUPPER
	RET

DATA laneIdx<>+0(SB)/4, $0
DATA laneIdx<>+4(SB)/4, $1
DATA laneIdx<>+8(SB)/4, $2
DATA laneIdx<>+12(SB)/4, $3
DATA laneIdx<>+16(SB)/4, $4
DATA laneIdx<>+20(SB)/4, $5
DATA laneIdx<>+24(SB)/4, $6
DATA laneIdx<>+28(SB)/4, $7
GLOBL laneIdx<>(SB), RODATA|NOPTR, $32

// func scaleMaskMaxAVX2(kq *float32, scale float32, valid int) float32
// The faTileKV scores of a tile: kq[i] *= scale for i < valid, -Inf from valid on; returns
// their maximum.
TEXT ·scaleMaskMaxAVX2(SB), NOSPLIT, $0-28
	MOVQ         kq+0(FP), DI
	VBROADCASTSS scale+8(FP), Y1
	MOVQ         valid+16(FP), AX
	VMOVD        AX, X2
	VPBROADCASTD X2, Y2
	VMOVDQU      laneIdx<>(SB), Y3
	MOVL         $8, BX
	VMOVD        BX, X4
	VPBROADCASTD X4, Y4
	MOVL         $0xff800000, BX
	VMOVD        BX, X5
	VBROADCASTSS X5, Y5
	VMOVAPS      Y5, Y6
	MOVQ         $8, CX

smmloop:
	VMOVUPS   (DI), Y0
	VMULPS    Y1, Y0, Y0
	VPCMPGTD  Y3, Y2, Y7
	VBLENDVPS Y7, Y0, Y5, Y0
	VMOVUPS   Y0, (DI)
	VMAXPS    Y0, Y6, Y6
	VPADDD    Y4, Y3, Y3
	ADDQ      $32, DI
	DECQ      CX
	JNZ       smmloop
	VEXTRACTF128 $1, Y6, X7
	VMAXPS       X7, X6, X6
	VPERMILPS    $0x4E, X6, X7
	VMAXPS       X7, X6, X6
	VPERMILPS    $0xB1, X6, X7
	VMAXPS       X7, X6, X6
	VMOVSS       X6, ret+24(FP)
	VZEROUPPER
	RET
