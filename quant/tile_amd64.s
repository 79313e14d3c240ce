#include "textflag.h"

// One weight row's block against a column quad (two pairs of activation rows), at
// R12 = the packed block: wq/ws are the row's quants and scale; acc0/acc1 accumulate
// pairs 0|1 and 2|3. Per lane: s = Σ (w+128)·a − 128·Σa (exact), acc = fma(dw·da, s, acc),
// as dotQ8_0LanesRef.
#define TILEROW(wq, ws, acc0, acc1, zw, zs, t0, d0, t1, d1) \
	VBROADCASTI64X4 wq, zw \
	VPXORD          Z31, zw, zw \
	VPBROADCASTW    ws, Y30 \
	VCVTPH2PS       Y30, zs \
	VMOVDQU32       256(R12), t0 \
	VPDPBUSD        0(R12), zw, t0 \
	VCVTDQ2PS       t0, t0 \
	VMULPS          128(R12), zs, d0 \
	VFMADD231PS     d0, t0, acc0 \
	VMOVDQU32       320(R12), t1 \
	VPDPBUSD        64(R12), zw, t1 \
	VCVTDQ2PS       t1, t1 \
	VMULPS          192(R12), zs, d1 \
	VFMADD231PS     d1, t1, acc1

// hsum_float_8 of both 8-lane halves of acc (rows a and b of a pair), stored at oa and ob.
#define TILESUM(acc, xacc, oa, ob) \
	VSHUFF32X4  $0xB1, acc, acc, Z30 \
	VADDPS      Z30, acc, acc \
	VPERMILPS   $0x4E, acc, Z30 \
	VADDPS      Z30, acc, acc \
	VPERMILPS   $0xB1, acc, Z30 \
	VADDPS      Z30, acc, acc \
	VMOVSS      xacc, oa \
	VEXTRACTF32X4 $2, acc, X30 \
	VMOVSS      X30, ob

// func tileQ8_0VNNI(w *byte, rb int, p *byte, nb, nq int, out *float32, ldo int)
TEXT ·tileQ8_0VNNI(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ rb+8(FP), R8
	MOVQ p+16(FP), R12
	MOVQ nq+32(FP), R10
	MOVQ out+40(FP), DX
	MOVQ ldo+48(FP), R11
	SHLQ $2, R11
	LEAQ (R8)(R8*2), R9
	LEAQ (R11)(R11*2), R13
	MOVL $0x80, AX
	VPBROADCASTB AX, Z31

tq8quad:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ SI, BX
	MOVQ nb+24(FP), CX

tq8block:
	TILEROW(2(BX), (BX), Z0, Z1, Z8, Z9, Z10, Z11, Z12, Z13)
	TILEROW(2(BX)(R8*1), (BX)(R8*1), Z2, Z3, Z14, Z15, Z16, Z17, Z18, Z19)
	TILEROW(2(BX)(R8*2), (BX)(R8*2), Z4, Z5, Z20, Z21, Z22, Z23, Z24, Z25)
	TILEROW(2(BX)(R9*1), (BX)(R9*1), Z6, Z7, Z26, Z27, Z28, Z29, Z10, Z11)
	ADDQ $34, BX
	ADDQ $384, R12
	DECQ CX
	JNZ  tq8block

	// acc[row][pair]: Z(2·row + pair); pair p holds columns 2p and 2p+1.
	TILESUM(Z0, X0, 0(DX), 0(DX)(R11*1))
	TILESUM(Z1, X1, 0(DX)(R11*2), 0(DX)(R13*1))
	TILESUM(Z2, X2, 4(DX), 4(DX)(R11*1))
	TILESUM(Z3, X3, 4(DX)(R11*2), 4(DX)(R13*1))
	TILESUM(Z4, X4, 8(DX), 8(DX)(R11*1))
	TILESUM(Z5, X5, 8(DX)(R11*2), 8(DX)(R13*1))
	TILESUM(Z6, X6, 12(DX), 12(DX)(R11*1))
	TILESUM(Z7, X7, 12(DX)(R11*2), 12(DX)(R13*1))
	LEAQ (DX)(R11*4), DX
	DECQ R10
	JNZ  tq8quad
	VZEROUPPER
	RET

// One activation row's block at src into the packed block at DI, as row i of its quad
// (packQ8_0Tiles): quants, the scale over 8 lanes, −128 × each 4-quant lane's sum.
#define PACKROW(src, qoff, doff, coff) \
	VMOVDQU      2(src), Y0 \
	VMOVDQU      Y0, qoff(DI) \
	VPXORD       Y1, Y1, Y1 \
	VPDPBUSD     Y0, Y15, Y1 \
	VPSLLD       $7, Y1, Y1 \
	VPSUBD       Y1, Y14, Y1 \
	VMOVDQU      Y1, coff(DI) \
	VPBROADCASTW (src), X2 \
	VCVTPH2PS    X2, Y2 \
	VMOVDQU      Y2, doff(DI)

// func packQ8_0VNNI(act *byte, ab, nq, nb int, dst *byte)
// packQ8_0Tiles for nq full column quads (4·nq activation rows of ab bytes at act).
TEXT ·packQ8_0VNNI(SB), NOSPLIT, $0-40
	MOVQ act+0(FP), SI
	MOVQ ab+8(FP), R8
	MOVQ nq+16(FP), R10
	MOVQ dst+32(FP), DI
	LEAQ (R8)(R8*2), R9
	MOVL $0x01010101, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15 // unsigned ones: VPDPBUSD sums each lane's 4 signed quants
	VPXORD Y14, Y14, Y14

pq8quad:
	MOVQ SI, BX
	MOVQ nb+24(FP), CX

pq8block:
	LEAQ (BX)(R8*1), R11
	LEAQ (BX)(R8*2), R12
	LEAQ (BX)(R9*1), R13
	PACKROW(BX, 0, 128, 256)
	PACKROW(R11, 32, 160, 288)
	PACKROW(R12, 64, 192, 320)
	PACKROW(R13, 96, 224, 352)
	ADDQ $34, BX
	ADDQ $384, DI
	DECQ CX
	JNZ  pq8block
	LEAQ (SI)(R8*4), SI
	DECQ R10
	JNZ  pq8quad
	VZEROUPPER
	RET
