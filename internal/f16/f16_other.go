//go:build !amd64

package f16

const useAsm = false

func toF16AVX2(dst *uint16, src *float32, n int) { panic("unreachable") }
func toF32AVX2(dst *float32, src *uint16, n int) { panic("unreachable") }
func madAVX2(y, x *uint16, n int, v float32)     { panic("unreachable") }
func madFMAAVX2(y, x *uint16, n int, v float32)  { panic("unreachable") }
func scaleAVX2(y *uint16, n int, v float32)      { panic("unreachable") }
func dotAVX2(a, b *uint16, n int) float64        { panic("unreachable") }

func madRowsAVX2(y, v *uint16, strideBytes, n int, ms, vs *float32, rows int) { panic("unreachable") }
