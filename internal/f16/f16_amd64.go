package f16

import "golang.org/x/sys/cpu"

var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasF16C && cpu.X86.HasFMA

//go:noescape
func toF16AVX2(dst *uint16, src *float32, n int)

//go:noescape
func toF32AVX2(dst *float32, src *uint16, n int)

//go:noescape
func madAVX2(y, x *uint16, n int, v float32)

//go:noescape
func madFMAAVX2(y, x *uint16, n int, v float32)

//go:noescape
func scaleAVX2(y *uint16, n int, v float32)

//go:noescape
func dotAVX2(a, b *uint16, n int) float64

//go:noescape
func madRowsAVX2(y, v *uint16, strideBytes, n int, ms, vs *float32, rows int)
