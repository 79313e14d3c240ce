#include "textflag.h"

// func vexp8AVX2(dst, src *float32) (bad int)
// ggml_v_expf on 8 lanes with the same fused multiply-adds; 2^n is applied by a multiply,
// which equals _mm512_scalef_ps while the result is a normal float (-126 <= n <= 127).
// Lanes with x <= -134 give 0 (n <= -193, as ggml flushes). It returns the mask of lanes
// outside both cases (subnormal or overflowing results, NaN), which the caller recomputes.
TEXT ·vexp8AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	VMOVUPS (SI), Y0
	MOVL    $0x4b400000, AX // 0x1.8p23
	VMOVD   AX, X1
	VBROADCASTSS X1, Y1
	MOVL    $0x3fb8aa3b, AX // log2(e)
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2
	VMOVAPS Y1, Y3
	VFMADD231PS Y2, Y0, Y3 // z = x*log2e + r
	VSUBPS  Y1, Y3, Y4     // n = z - r
	MOVL    $0x3f317200, AX // ln2 hi
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2
	VMOVAPS Y0, Y5
	VFNMADD231PS Y2, Y4, Y5 // t = x - n*hi
	MOVL    $0x35bfbe8e, AX // ln2 lo
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2
	VFNMADD231PS Y2, Y4, Y5 // b = t - n*lo
	VMULPS  Y5, Y5, Y6      // u = b*b
	MOVL    $0x3d2b9f17, AX
	VMOVD   AX, X7
	VBROADCASTSS X7, Y7     // c2
	MOVL    $0x3c072010, AX
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2     // c1
	VFMADD231PS Y5, Y2, Y7  // p1 = c1*b + c2
	MOVL    $0x3efffedb, AX
	VMOVD   AX, X8
	VBROADCASTSS X8, Y8     // c4
	MOVL    $0x3e2aaf33, AX
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2     // c3
	VFMADD231PS Y5, Y2, Y8  // p2 = c3*b + c4
	VFMADD231PS Y6, Y7, Y8  // q = p1*u + p2
	MOVL    $0x3f800000, AX
	VMOVD   AX, X9
	VBROADCASTSS X9, Y9     // 1
	MOVL    $0x3f7ffff6, AX
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2     // c5
	VFMADD231PS Y5, Y2, Y9  // p3 = c5*b + 1
	VFMADD231PS Y6, Y8, Y9  // j = q*u + p3
	VCVTPS2DQ Y4, Y10       // n as int32 (n is integral)
	MOVL    $127, AX
	VMOVD   AX, X11
	VPBROADCASTD X11, Y11
	VPADDD  Y11, Y10, Y10
	VPSLLD  $23, Y10, Y10   // 2^n
	VMULPS  Y10, Y9, Y11    // j * 2^n
	MOVL    $0xc2fc0000, AX // -126
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2
	VCMPPS  $13, Y2, Y4, Y12 // n >= -126
	MOVL    $0x42fe0000, AX  // 127
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2
	VCMPPS  $2, Y2, Y4, Y13  // n <= 127
	VANDPS  Y13, Y12, Y12    // valid
	MOVL    $0xc3060000, AX  // -134
	VMOVD   AX, X2
	VBROADCASTSS X2, Y2
	VCMPPS  $2, Y2, Y0, Y14  // x <= -134: result 0
	VANDPS  Y12, Y11, Y11
	VMOVUPS Y11, (DI)
	VORPS   Y14, Y12, Y15
	VMOVMSKPS Y15, AX
	XORL    $0xff, AX
	MOVQ    AX, bad+16(FP)
	VZEROUPPER
	RET
