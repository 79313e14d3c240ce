#include "textflag.h"

// The Gated DeltaNet's per-row kernels (qwen3next_gdn.go): ggml_vec_dot_f32's AVX-512 sum
// (four 16-lane FMA accumulators over steps of 64, folded 0+2, 1+3, then 0+1, reduced as
// _mm512_reduce_add_ps) fused with the row's state update. n is a multiple of 64.

// func gdnDecayDotAVX512(row, k *float32, n int, eg float32) float32
// row[i] *= eg for every i; returns Σ row[i]·k[i].
TEXT ·gdnDecayDotAVX512(SB), NOSPLIT, $0-36
	MOVQ         row+0(FP), DI
	MOVQ         k+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS eg+24(FP), Z8
	VXORPS       Z0, Z0, Z0
	VXORPS       Z1, Z1, Z1
	VXORPS       Z2, Z2, Z2
	VXORPS       Z3, Z3, Z3
	SHRQ         $6, CX

decay:
	VMULPS      0(DI), Z8, Z4
	VMULPS      64(DI), Z8, Z5
	VMULPS      128(DI), Z8, Z6
	VMULPS      192(DI), Z8, Z7
	VMOVUPS     Z4, 0(DI)
	VMOVUPS     Z5, 64(DI)
	VMOVUPS     Z6, 128(DI)
	VMOVUPS     Z7, 192(DI)
	VFMADD231PS 0(SI), Z4, Z0
	VFMADD231PS 64(SI), Z5, Z1
	VFMADD231PS 128(SI), Z6, Z2
	VFMADD231PS 192(SI), Z7, Z3
	ADDQ        $256, DI
	ADDQ        $256, SI
	DECQ        CX
	JNZ         decay
	VADDPS        Z2, Z0, Z0
	VADDPS        Z3, Z1, Z1
	VADDPS        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VMOVHLPS      X0, X0, X1
	VADDPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VADDSS        X1, X0, X0
	VZEROUPPER
	MOVSS         X0, ret+32(FP)
	RET

// func gdnUpdateDotAVX512(row, k, q *float32, n int, d float32) float32
// row[i] = k[i]·d + row[i] (fused) for every i; returns Σ row[i]·q[i].
TEXT ·gdnUpdateDotAVX512(SB), NOSPLIT, $0-44
	MOVQ         row+0(FP), DI
	MOVQ         k+8(FP), SI
	MOVQ         q+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS d+32(FP), Z8
	VXORPS       Z0, Z0, Z0
	VXORPS       Z1, Z1, Z1
	VXORPS       Z2, Z2, Z2
	VXORPS       Z3, Z3, Z3
	SHRQ         $6, CX

update:
	VMOVUPS     0(DI), Z4
	VMOVUPS     64(DI), Z5
	VMOVUPS     128(DI), Z6
	VMOVUPS     192(DI), Z7
	VFMADD231PS 0(SI), Z8, Z4
	VFMADD231PS 64(SI), Z8, Z5
	VFMADD231PS 128(SI), Z8, Z6
	VFMADD231PS 192(SI), Z8, Z7
	VMOVUPS     Z4, 0(DI)
	VMOVUPS     Z5, 64(DI)
	VMOVUPS     Z6, 128(DI)
	VMOVUPS     Z7, 192(DI)
	VFMADD231PS 0(DX), Z4, Z0
	VFMADD231PS 64(DX), Z5, Z1
	VFMADD231PS 128(DX), Z6, Z2
	VFMADD231PS 192(DX), Z7, Z3
	ADDQ        $256, DI
	ADDQ        $256, SI
	ADDQ        $256, DX
	DECQ        CX
	JNZ         update
	VADDPS        Z2, Z0, Z0
	VADDPS        Z3, Z1, Z1
	VADDPS        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VMOVHLPS      X0, X0, X1
	VADDPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VADDSS        X1, X0, X0
	VZEROUPPER
	MOVSS         X0, ret+40(FP)
	RET

// func convTapsAVX512(out, in, w *float32, cd, k int)
// out[ch] = fma chain over the k taps (in and w rows cd floats apart), 16 channels at a time;
// cd is a multiple of 16.
TEXT ·convTapsAVX512(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ cd+24(FP), R8
	MOVQ k+32(FP), R9
	MOVQ R8, R10
	SHLQ $2, R10 // row stride in bytes
	SHRQ $4, R8  // blocks of 16 channels

block:
	VXORPS Z0, Z0, Z0
	MOVQ   SI, AX
	MOVQ   DX, BX
	MOVQ   R9, CX

tap:
	VMOVUPS     (AX), Z1
	VFMADD231PS (BX), Z1, Z0
	ADDQ        R10, AX
	ADDQ        R10, BX
	DECQ        CX
	JNZ         tap
	VMOVUPS     Z0, (DI)
	ADDQ        $64, DI
	ADDQ        $64, SI
	ADDQ        $64, DX
	DECQ        R8
	JNZ         block
	VZEROUPPER
	RET
