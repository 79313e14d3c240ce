//go:build !amd64

package model

// vexpRow sets dst[i] = vexpf(src[i]).
func vexpRow(dst, src []float32) {
	for i, x := range src[:len(dst)] {
		dst[i] = vexpf(x)
	}
}
