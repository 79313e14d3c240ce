// VEXP8 is ggml_v_expf on the 8 lanes of Y0 (see vexp8AVX2): the result in Y11, the lanes it
// does not cover (subnormal or overflowing results, NaN) as a bit mask in AX; those lanes of
// Y11 keep their input, so a caller computing in place can still recompute them. It
// clobbers Y1-Y15 and AX.
#define VEXP8 \
	MOVL    $0x4b400000, AX \
	VMOVD   AX, X1 \
	VBROADCASTSS X1, Y1 \
	MOVL    $0x3fb8aa3b, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VMOVAPS Y1, Y3 \
	VFMADD231PS Y2, Y0, Y3 \
	VSUBPS  Y1, Y3, Y4 \
	MOVL    $0x3f317200, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VMOVAPS Y0, Y5 \
	VFNMADD231PS Y2, Y4, Y5 \
	MOVL    $0x35bfbe8e, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VFNMADD231PS Y2, Y4, Y5 \
	VMULPS  Y5, Y5, Y6 \
	MOVL    $0x3d2b9f17, AX \
	VMOVD   AX, X7 \
	VBROADCASTSS X7, Y7 \
	MOVL    $0x3c072010, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VFMADD231PS Y5, Y2, Y7 \
	MOVL    $0x3efffedb, AX \
	VMOVD   AX, X8 \
	VBROADCASTSS X8, Y8 \
	MOVL    $0x3e2aaf33, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VFMADD231PS Y5, Y2, Y8 \
	VFMADD231PS Y6, Y7, Y8 \
	MOVL    $0x3f800000, AX \
	VMOVD   AX, X9 \
	VBROADCASTSS X9, Y9 \
	MOVL    $0x3f7ffff6, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VFMADD231PS Y5, Y2, Y9 \
	VFMADD231PS Y6, Y8, Y9 \
	VCVTPS2DQ Y4, Y10 \
	MOVL    $127, AX \
	VMOVD   AX, X11 \
	VPBROADCASTD X11, Y11 \
	VPADDD  Y11, Y10, Y10 \
	VPSLLD  $23, Y10, Y10 \
	VMULPS  Y10, Y9, Y11 \
	MOVL    $0xc2fc0000, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VCMPPS  $13, Y2, Y4, Y12 \
	MOVL    $0x42fe0000, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VCMPPS  $2, Y2, Y4, Y13 \
	VANDPS  Y13, Y12, Y12 \
	MOVL    $0xc3060000, AX \
	VMOVD   AX, X2 \
	VBROADCASTSS X2, Y2 \
	VCMPPS  $2, Y2, Y0, Y14 \
	VANDPS  Y12, Y11, Y11 \
	VORPS   Y14, Y12, Y15 \
	VBLENDVPS Y15, Y11, Y0, Y11 \
	VMOVMSKPS Y15, AX \
	XORL    $0xff, AX
