//go:build !amd64

package quant

// q8kSIMD reports whether the Q8_K quantizers have a SIMD version (q8k_amd64.go).
const q8kSIMD = false
