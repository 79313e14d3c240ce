package model

import "golang.org/x/sys/cpu"

var vexpAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func vexp8AVX2(dst, src *float32) (bad int)

// vexpRow sets dst[i] = vexpf(src[i]), 8 lanes at a time where the CPU allows.
func vexpRow(dst, src []float32) {
	n := len(src)
	dst = dst[:n]
	i := 0
	if vexpAsm {
		for ; i+8 <= n; i += 8 {
			if bad := vexp8AVX2(&dst[i], &src[i]); bad != 0 {
				for l := 0; l < 8; l++ {
					if bad>>l&1 != 0 {
						dst[i+l] = vexpf(src[i+l])
					}
				}
			}
		}
	}
	for ; i < n; i++ {
		dst[i] = vexpf(src[i])
	}
}
