#include "textflag.h"
#include "vexp_amd64.h"

// func vexp8AVX2(dst, src *float32) (bad int)
// ggml_v_expf on 8 lanes with the same fused multiply-adds; 2^n is applied by a multiply,
// which equals _mm512_scalef_ps while the result is a normal float (-126 <= n <= 127).
// Lanes with x <= -134 give 0 (n <= -193, as ggml flushes). It returns the mask of lanes
// outside both cases (subnormal or overflowing results, NaN), which the caller recomputes;
// dst keeps their inputs, so dst may be src.
TEXT ·vexp8AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	VMOVUPS (SI), Y0
	VEXP8
	VMOVUPS Y11, (DI)
	MOVQ    AX, bad+16(FP)
	VZEROUPPER
	RET
