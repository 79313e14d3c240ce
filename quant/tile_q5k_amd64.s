#include "textflag.h"

// Constants of the Q5_K tile kernel (tile_q5k.go describes the packed layout). In the
// header, lane r of a 128-bit lane holds weight row r; 4r+c indexes an output (row r,
// activation row c).

// low nibbles
DATA q5tNib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q5tNib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q5tNib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q5tNib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q5tNib<>+32(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q5tNib<>+40(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q5tNib<>+48(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q5tNib<>+56(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q5tNib<>(SB), RODATA|NOPTR, $64

// bit 4 (the fifth bit of a quant)
DATA q5tB4<>+0(SB)/8, $0x1010101010101010
DATA q5tB4<>+8(SB)/8, $0x1010101010101010
DATA q5tB4<>+16(SB)/8, $0x1010101010101010
DATA q5tB4<>+24(SB)/8, $0x1010101010101010
DATA q5tB4<>+32(SB)/8, $0x1010101010101010
DATA q5tB4<>+40(SB)/8, $0x1010101010101010
DATA q5tB4<>+48(SB)/8, $0x1010101010101010
DATA q5tB4<>+56(SB)/8, $0x1010101010101010
GLOBL q5tB4<>(SB), RODATA|NOPTR, $64

// word shifts (right) of qs: low nibbles in the low 256 bits, high in the high
DATA q5tSq<>+0(SB)/8, $0x0000000000000000
DATA q5tSq<>+8(SB)/8, $0x0000000000000000
DATA q5tSq<>+16(SB)/8, $0x0000000000000000
DATA q5tSq<>+24(SB)/8, $0x0000000000000000
DATA q5tSq<>+32(SB)/8, $0x0004000400040004
DATA q5tSq<>+40(SB)/8, $0x0004000400040004
DATA q5tSq<>+48(SB)/8, $0x0004000400040004
DATA q5tSq<>+56(SB)/8, $0x0004000400040004
GLOBL q5tSq<>(SB), RODATA|NOPTR, $64

// word shifts (right) of qh: bit 2j of both halves is then sub-block 2j's, 2j+1's fifth bit
DATA q5tSh<>+0(SB)/8, $0x0000000000000000
DATA q5tSh<>+8(SB)/8, $0x0000000000000000
DATA q5tSh<>+16(SB)/8, $0x0000000000000000
DATA q5tSh<>+24(SB)/8, $0x0000000000000000
DATA q5tSh<>+32(SB)/8, $0x0001000100010001
DATA q5tSh<>+40(SB)/8, $0x0001000100010001
DATA q5tSh<>+48(SB)/8, $0x0001000100010001
DATA q5tSh<>+56(SB)/8, $0x0001000100010001
GLOBL q5tSh<>(SB), RODATA|NOPTR, $64

// VPERMW indices: word 4r+c takes row r's dmin (word 1 of 128-bit lane r)
DATA q5tDIdx<>+0(SB)/8, $0x0001000100010001
DATA q5tDIdx<>+8(SB)/8, $0x0009000900090009
DATA q5tDIdx<>+16(SB)/8, $0x0011001100110011
DATA q5tDIdx<>+24(SB)/8, $0x0019001900190019
DATA q5tDIdx<>+32(SB)/8, $0x0000000000000000
DATA q5tDIdx<>+40(SB)/8, $0x0000000000000000
DATA q5tDIdx<>+48(SB)/8, $0x0000000000000000
DATA q5tDIdx<>+56(SB)/8, $0x0000000000000000
GLOBL q5tDIdx<>(SB), RODATA|NOPTR, $64

// bytes: s0-s3, s8-s11, s4-s7, s8-s11 (s = the 12 scale bytes at 4)
DATA q5tShufA<>+0(SB)/8, $0x0f0e0d0c07060504
DATA q5tShufA<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA q5tShufA<>+16(SB)/8, $0x0f0e0d0c07060504
DATA q5tShufA<>+24(SB)/8, $0x0f0e0d0c0b0a0908
DATA q5tShufA<>+32(SB)/8, $0x0f0e0d0c07060504
DATA q5tShufA<>+40(SB)/8, $0x0f0e0d0c0b0a0908
DATA q5tShufA<>+48(SB)/8, $0x0f0e0d0c07060504
DATA q5tShufA<>+56(SB)/8, $0x0f0e0d0c0b0a0908
GLOBL q5tShufA<>(SB), RODATA|NOPTR, $64

// scales 0-3, low bits of scales 4-7, mins 0-3
DATA q5tMaskA<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q5tMaskA<>+8(SB)/8, $0x000000003f3f3f3f
DATA q5tMaskA<>+16(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q5tMaskA<>+24(SB)/8, $0x000000003f3f3f3f
DATA q5tMaskA<>+32(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q5tMaskA<>+40(SB)/8, $0x000000003f3f3f3f
DATA q5tMaskA<>+48(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA q5tMaskA<>+56(SB)/8, $0x000000003f3f3f3f
GLOBL q5tMaskA<>(SB), RODATA|NOPTR, $64

// low bits of mins 4-7 (from s8-s11 >> 4)
DATA q5tMaskB<>+0(SB)/8, $0x0000000000000000
DATA q5tMaskB<>+8(SB)/8, $0x0f0f0f0f00000000
DATA q5tMaskB<>+16(SB)/8, $0x0000000000000000
DATA q5tMaskB<>+24(SB)/8, $0x0f0f0f0f00000000
DATA q5tMaskB<>+32(SB)/8, $0x0000000000000000
DATA q5tMaskB<>+40(SB)/8, $0x0f0f0f0f00000000
DATA q5tMaskB<>+48(SB)/8, $0x0000000000000000
DATA q5tMaskB<>+56(SB)/8, $0x0f0f0f0f00000000
GLOBL q5tMaskB<>(SB), RODATA|NOPTR, $64

// s0-s3 at bytes 4-7, s4-s7 at bytes 12-15 (their top two bits: high bits of scales, mins 4-7)
DATA q5tShufB<>+0(SB)/8, $0x0706050480808080
DATA q5tShufB<>+8(SB)/8, $0x0b0a090880808080
DATA q5tShufB<>+16(SB)/8, $0x0706050480808080
DATA q5tShufB<>+24(SB)/8, $0x0b0a090880808080
DATA q5tShufB<>+32(SB)/8, $0x0706050480808080
DATA q5tShufB<>+40(SB)/8, $0x0b0a090880808080
DATA q5tShufB<>+48(SB)/8, $0x0706050480808080
DATA q5tShufB<>+56(SB)/8, $0x0b0a090880808080
GLOBL q5tShufB<>(SB), RODATA|NOPTR, $64

// top two bits
DATA q5tC0<>+0(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q5tC0<>+8(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q5tC0<>+16(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q5tC0<>+24(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q5tC0<>+32(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q5tC0<>+40(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q5tC0<>+48(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA q5tC0<>+56(SB)/8, $0xc0c0c0c0c0c0c0c0
GLOBL q5tC0<>(SB), RODATA|NOPTR, $64

// VPSHUFB: for sub-block pair j (64 bytes each), scale 2j as int16 in the low 256 bits, 2j+1 in the high
DATA q5tSc<>+0(SB)/8, $0x8000800080008000
DATA q5tSc<>+8(SB)/8, $0x8000800080008000
DATA q5tSc<>+16(SB)/8, $0x8000800080008000
DATA q5tSc<>+24(SB)/8, $0x8000800080008000
DATA q5tSc<>+32(SB)/8, $0x8001800180018001
DATA q5tSc<>+40(SB)/8, $0x8001800180018001
DATA q5tSc<>+48(SB)/8, $0x8001800180018001
DATA q5tSc<>+56(SB)/8, $0x8001800180018001
DATA q5tSc<>+64(SB)/8, $0x8002800280028002
DATA q5tSc<>+72(SB)/8, $0x8002800280028002
DATA q5tSc<>+80(SB)/8, $0x8002800280028002
DATA q5tSc<>+88(SB)/8, $0x8002800280028002
DATA q5tSc<>+96(SB)/8, $0x8003800380038003
DATA q5tSc<>+104(SB)/8, $0x8003800380038003
DATA q5tSc<>+112(SB)/8, $0x8003800380038003
DATA q5tSc<>+120(SB)/8, $0x8003800380038003
DATA q5tSc<>+128(SB)/8, $0x8004800480048004
DATA q5tSc<>+136(SB)/8, $0x8004800480048004
DATA q5tSc<>+144(SB)/8, $0x8004800480048004
DATA q5tSc<>+152(SB)/8, $0x8004800480048004
DATA q5tSc<>+160(SB)/8, $0x8005800580058005
DATA q5tSc<>+168(SB)/8, $0x8005800580058005
DATA q5tSc<>+176(SB)/8, $0x8005800580058005
DATA q5tSc<>+184(SB)/8, $0x8005800580058005
DATA q5tSc<>+192(SB)/8, $0x8006800680068006
DATA q5tSc<>+200(SB)/8, $0x8006800680068006
DATA q5tSc<>+208(SB)/8, $0x8006800680068006
DATA q5tSc<>+216(SB)/8, $0x8006800680068006
DATA q5tSc<>+224(SB)/8, $0x8007800780078007
DATA q5tSc<>+232(SB)/8, $0x8007800780078007
DATA q5tSc<>+240(SB)/8, $0x8007800780078007
DATA q5tSc<>+248(SB)/8, $0x8007800780078007
GLOBL q5tSc<>(SB), RODATA|NOPTR, $256

// VPSHUFB: for pair k of mins (64 bytes each), every int32 lane holds mins 2k, 2k+1 as int16
DATA q5tMin<>+0(SB)/8, $0x8009800880098008
DATA q5tMin<>+8(SB)/8, $0x8009800880098008
DATA q5tMin<>+16(SB)/8, $0x8009800880098008
DATA q5tMin<>+24(SB)/8, $0x8009800880098008
DATA q5tMin<>+32(SB)/8, $0x8009800880098008
DATA q5tMin<>+40(SB)/8, $0x8009800880098008
DATA q5tMin<>+48(SB)/8, $0x8009800880098008
DATA q5tMin<>+56(SB)/8, $0x8009800880098008
DATA q5tMin<>+64(SB)/8, $0x800b800a800b800a
DATA q5tMin<>+72(SB)/8, $0x800b800a800b800a
DATA q5tMin<>+80(SB)/8, $0x800b800a800b800a
DATA q5tMin<>+88(SB)/8, $0x800b800a800b800a
DATA q5tMin<>+96(SB)/8, $0x800b800a800b800a
DATA q5tMin<>+104(SB)/8, $0x800b800a800b800a
DATA q5tMin<>+112(SB)/8, $0x800b800a800b800a
DATA q5tMin<>+120(SB)/8, $0x800b800a800b800a
DATA q5tMin<>+128(SB)/8, $0x800d800c800d800c
DATA q5tMin<>+136(SB)/8, $0x800d800c800d800c
DATA q5tMin<>+144(SB)/8, $0x800d800c800d800c
DATA q5tMin<>+152(SB)/8, $0x800d800c800d800c
DATA q5tMin<>+160(SB)/8, $0x800d800c800d800c
DATA q5tMin<>+168(SB)/8, $0x800d800c800d800c
DATA q5tMin<>+176(SB)/8, $0x800d800c800d800c
DATA q5tMin<>+184(SB)/8, $0x800d800c800d800c
DATA q5tMin<>+192(SB)/8, $0x800f800e800f800e
DATA q5tMin<>+200(SB)/8, $0x800f800e800f800e
DATA q5tMin<>+208(SB)/8, $0x800f800e800f800e
DATA q5tMin<>+216(SB)/8, $0x800f800e800f800e
DATA q5tMin<>+224(SB)/8, $0x800f800e800f800e
DATA q5tMin<>+232(SB)/8, $0x800f800e800f800e
DATA q5tMin<>+240(SB)/8, $0x800f800e800f800e
DATA q5tMin<>+248(SB)/8, $0x800f800e800f800e
GLOBL q5tMin<>(SB), RODATA|NOPTR, $256

// VPERMD indices: lane 4c+r takes lane 4r+c
DATA q5tTr<>+0(SB)/8, $0x0000000400000000
DATA q5tTr<>+8(SB)/8, $0x0000000c00000008
DATA q5tTr<>+16(SB)/8, $0x0000000500000001
DATA q5tTr<>+24(SB)/8, $0x0000000d00000009
DATA q5tTr<>+32(SB)/8, $0x0000000600000002
DATA q5tTr<>+40(SB)/8, $0x0000000e0000000a
DATA q5tTr<>+48(SB)/8, $0x0000000700000003
DATA q5tTr<>+56(SB)/8, $0x0000000f0000000b
GLOBL q5tTr<>(SB), RODATA|NOPTR, $64

// One super-block's header for the 4 weight rows at BX (R8 = row bytes, R9 = 3·R8): Z25 =
// lane r's eight 6-bit scales then eight mins as bytes; and the mins' fold: Z28 (lane 4r+c)
// = fma(−(dmin·d_a), float(Σ_k m[k]·B[k]), Z28), with dmin·d_a as the reference's product.
#define Q5THEAD \
	VMOVDQU32      (BX), X20 \
	VINSERTI32X4   $1, (BX)(R8*1), Z20, Z20 \
	VINSERTI32X4   $2, (BX)(R8*2), Z20, Z20 \
	VINSERTI32X4   $3, (BX)(R9*1), Z20, Z20 \
	VPERMW         Z20, Z26, Z21 \
	VCVTPH2PS      Y21, Z23 \
	VMULPS         1280(R12), Z23, Z23 \
	VPSHUFB        q5tShufA<>(SB), Z20, Z25 \
	VPSRLW         $4, Z25, Z24 \
	VPANDD         q5tMaskA<>(SB), Z25, Z25 \
	VPANDD         q5tMaskB<>(SB), Z24, Z24 \
	VPSHUFB        q5tShufB<>(SB), Z20, Z21 \
	VPANDD         q5tC0<>(SB), Z21, Z21 \
	VPSRLW         $2, Z21, Z21 \
	VPTERNLOGD     $0xFE, Z21, Z24, Z25 \
	VPSHUFB        q5tMin<>+0(SB), Z25, Z21 \
	VPMADDWD       1024(R12), Z21, Z22 \
	VPSHUFB        q5tMin<>+64(SB), Z25, Z21 \
	VPDPWSSD       1088(R12), Z21, Z22 \
	VPSHUFB        q5tMin<>+128(SB), Z25, Z21 \
	VPDPWSSD       1152(R12), Z21, Z22 \
	VPSHUFB        q5tMin<>+192(SB), Z25, Z21 \
	VPDPWSSD       1216(R12), Z21, Z22 \
	VCVTDQ2PS      Z22, Z22 \
	VFNMADD231PS   Z23, Z22, Z28

// One super-block of the weight row at DI (its scales and mins broadcast from lane SEL of
// Z25) against the column quad's packed super-block at R12, folded into F0 (activation rows
// 0|1: lanes 0-7 row 0's eight float lanes, 8-15 row 1's) and F1 (rows 2|3). Z13-Z16 = the
// int16 scales of sub-block pairs 0-3 (pair j: elements 64j..64j+63, scale 2j in the low
// half, 2j+1 in the high), Z18 = d (float32), Z19 = qh with the high half shifted right by
// one. Z17 = 64 five-bit quants (sub-blocks 2j, 2j+1: the activations' bytes 64j..64j+63);
// Z8-Z11 = activation row c's int32 lanes, 0-7 from even sub-blocks and 8-15 from odd ones
// (the halves are summed before the fold: exact).
#define Q5TROW(SEL, F0, F1) \
	VSHUFI32X4      SEL, Z25, Z25, Z24 \
	VPSHUFB         q5tSc<>+0(SB), Z24, Z13 \
	VPSHUFB         q5tSc<>+64(SB), Z24, Z14 \
	VPSHUFB         q5tSc<>+128(SB), Z24, Z15 \
	VPSHUFB         q5tSc<>+192(SB), Z24, Z16 \
	VPBROADCASTW    0(DI), Y18 \
	VCVTPH2PS       Y18, Z18 \
	VBROADCASTI64X4 16(DI), Z19 \
	VPSRLVW         Z27, Z19, Z19 \
	VBROADCASTI64X4 48(DI), Z21 \
	VPSRLVW         Z29, Z21, Z21 \
	VPSLLW          $4, Z19, Z17 \
	VPANDD          Z30, Z17, Z17 \
	VPTERNLOGD      $0xF8, Z31, Z21, Z17 \
	VPMADDUBSW      0(R12), Z17, Z22 \
	VPMADDWD        Z13, Z22, Z8 \
	VPMADDUBSW      256(R12), Z17, Z22 \
	VPMADDWD        Z13, Z22, Z9 \
	VPMADDUBSW      512(R12), Z17, Z22 \
	VPMADDWD        Z13, Z22, Z10 \
	VPMADDUBSW      768(R12), Z17, Z22 \
	VPMADDWD        Z13, Z22, Z11 \
	VBROADCASTI64X4 80(DI), Z21 \
	VPSRLVW         Z29, Z21, Z21 \
	VPSLLW          $2, Z19, Z17 \
	VPANDD          Z30, Z17, Z17 \
	VPTERNLOGD      $0xF8, Z31, Z21, Z17 \
	VPMADDUBSW      64(R12), Z17, Z22 \
	VPDPWSSD        Z14, Z22, Z8 \
	VPMADDUBSW      320(R12), Z17, Z22 \
	VPDPWSSD        Z14, Z22, Z9 \
	VPMADDUBSW      576(R12), Z17, Z22 \
	VPDPWSSD        Z14, Z22, Z10 \
	VPMADDUBSW      832(R12), Z17, Z22 \
	VPDPWSSD        Z14, Z22, Z11 \
	VBROADCASTI64X4 112(DI), Z21 \
	VPSRLVW         Z29, Z21, Z21 \
	VPANDD          Z30, Z19, Z17 \
	VPTERNLOGD      $0xF8, Z31, Z21, Z17 \
	VPMADDUBSW      128(R12), Z17, Z22 \
	VPDPWSSD        Z15, Z22, Z8 \
	VPMADDUBSW      384(R12), Z17, Z22 \
	VPDPWSSD        Z15, Z22, Z9 \
	VPMADDUBSW      640(R12), Z17, Z22 \
	VPDPWSSD        Z15, Z22, Z10 \
	VPMADDUBSW      896(R12), Z17, Z22 \
	VPDPWSSD        Z15, Z22, Z11 \
	VBROADCASTI64X4 144(DI), Z21 \
	VPSRLVW         Z29, Z21, Z21 \
	VPSRLW          $2, Z19, Z17 \
	VPANDD          Z30, Z17, Z17 \
	VPTERNLOGD      $0xF8, Z31, Z21, Z17 \
	VPMADDUBSW      192(R12), Z17, Z22 \
	VPDPWSSD        Z16, Z22, Z8 \
	VPMADDUBSW      448(R12), Z17, Z22 \
	VPDPWSSD        Z16, Z22, Z9 \
	VPMADDUBSW      704(R12), Z17, Z22 \
	VPDPWSSD        Z16, Z22, Z10 \
	VPMADDUBSW      960(R12), Z17, Z22 \
	VPDPWSSD        Z16, Z22, Z11 \
	VSHUFI64X2      $0x44, Z9, Z8, Z12 \
	VSHUFI64X2      $0xEE, Z9, Z8, Z13 \
	VPADDD          Z13, Z12, Z12 \
	VCVTDQ2PS       Z12, Z12 \
	VMULPS          1344(R12), Z18, Z13 \
	VFMADD231PS     Z13, Z12, F0 \
	VSHUFI64X2      $0x44, Z11, Z10, Z14 \
	VSHUFI64X2      $0xEE, Z11, Z10, Z15 \
	VPADDD          Z15, Z14, Z14 \
	VCVTDQ2PS       Z14, Z14 \
	VMULPS          1408(R12), Z18, Z15 \
	VFMADD231PS     Z15, Z14, F1

// func tileQ5_KVNNI(w *byte, rb int, p *byte, nsb, nq int, out *float32, ldo int)
// Per super-block, lane l of output (r, c): acc = fma(d·d_a, float(lane), acc), 16 outputs'
// eight lanes in Z0-Z7 (Z(2r+c/2)), and the mins' fold in Z28; then hsum_float_8 of each
// acc plus its summs.
TEXT ·tileQ5_KVNNI(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ rb+8(FP), R8
	MOVQ p+16(FP), R12
	MOVQ nq+32(FP), R10
	MOVQ out+40(FP), DX
	MOVQ ldo+48(FP), R11
	SHLQ $2, R11
	LEAQ (R8)(R8*2), R9
	LEAQ (R11)(R11*2), R13
	VMOVDQU64 q5tNib<>(SB), Z31
	VMOVDQU64 q5tB4<>(SB), Z30
	VMOVDQU64 q5tSq<>(SB), Z29
	VMOVDQU64 q5tSh<>(SB), Z27
	VMOVDQU64 q5tDIdx<>(SB), Z26

q5tquad:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z28, Z28, Z28
	MOVQ   SI, BX
	MOVQ   nsb+24(FP), CX

q5tsb:
	Q5THEAD
	MOVQ BX, DI
	Q5TROW($0x00, Z0, Z1)
	LEAQ (BX)(R8*1), DI
	Q5TROW($0x55, Z2, Z3)
	LEAQ (BX)(R8*2), DI
	Q5TROW($0xAA, Z4, Z5)
	LEAQ (BX)(R9*1), DI
	Q5TROW($0xFF, Z6, Z7)
	ADDQ $176, BX
	ADDQ $1472, R12
	DECQ CX
	JNZ  q5tsb

	// hsum_float_8: Z8-Z11 (row r) get, in 128-bit lane c, output (r, c)'s lanes 0-3 plus
	// lanes 4-7; then (s0+s2)+(s1+s3), row r at lane r of 128-bit lane c; plus summs.
	VSHUFF32X4 $0x88, Z1, Z0, Z12
	VSHUFF32X4 $0xDD, Z1, Z0, Z13
	VADDPS     Z13, Z12, Z8
	VSHUFF32X4 $0x88, Z3, Z2, Z12
	VSHUFF32X4 $0xDD, Z3, Z2, Z13
	VADDPS     Z13, Z12, Z9
	VSHUFF32X4 $0x88, Z5, Z4, Z12
	VSHUFF32X4 $0xDD, Z5, Z4, Z13
	VADDPS     Z13, Z12, Z10
	VSHUFF32X4 $0x88, Z7, Z6, Z12
	VSHUFF32X4 $0xDD, Z7, Z6, Z13
	VADDPS     Z13, Z12, Z11
	VUNPCKLPS  Z9, Z8, Z12
	VUNPCKHPS  Z9, Z8, Z13
	VADDPS     Z13, Z12, Z12
	VUNPCKLPS  Z11, Z10, Z14
	VUNPCKHPS  Z11, Z10, Z15
	VADDPS     Z15, Z14, Z14
	VUNPCKLPD  Z14, Z12, Z15
	VUNPCKHPD  Z14, Z12, Z16
	VADDPS     Z16, Z15, Z15
	VMOVDQU64  q5tTr<>(SB), Z24
	VPERMD     Z28, Z24, Z28
	VADDPS     Z28, Z15, Z15
	VMOVUPS       X15, (DX)
	VEXTRACTF32X4 $1, Z15, (DX)(R11*1)
	VEXTRACTF32X4 $2, Z15, (DX)(R11*2)
	VEXTRACTF32X4 $3, Z15, (DX)(R13*1)
	LEAQ (DX)(R11*4), DX
	DECQ R10
	JNZ  q5tquad
	VZEROUPPER
	RET
