#include "textflag.h"

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
