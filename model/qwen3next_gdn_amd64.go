package model

import "golang.org/x/sys/cpu"

var gdnAsm = cpu.X86.HasAVX512F

//go:noescape
func gdnDecayDotAVX512(row, k *float32, n int, eg float32) float32

//go:noescape
func gdnUpdateDotAVX512(row, k, q *float32, n int, d float32) float32

func gdnDecayDot(row, k []float32, eg float32) float32 {
	if gdnAsm && len(row) > 0 && len(row)%64 == 0 {
		_ = k[len(row)-1]
		return gdnDecayDotAVX512(&row[0], &k[0], len(row), eg)
	}
	return gdnDecayDotRef(row, k, eg)
}

func gdnUpdateDot(row, k, q []float32, d float32) float32 {
	if gdnAsm && len(row) > 0 && len(row)%64 == 0 {
		_, _ = k[len(row)-1], q[len(row)-1]
		return gdnUpdateDotAVX512(&row[0], &k[0], &q[0], len(row), d)
	}
	return gdnUpdateDotRef(row, k, q, d)
}

//go:noescape
func convTapsAVX512(out, in, w *float32, cd, k int)

func convTaps(out, in, w []float32, cd, k int) {
	if gdnAsm && cd > 0 && cd%16 == 0 && k > 0 {
		_, _, _ = out[cd-1], in[(k-1)*cd+cd-1], w[k*cd-1]
		convTapsAVX512(&out[0], &in[0], &w[0], cd, k)
		return
	}
	convTapsRef(out, in, w, cd, k)
}
