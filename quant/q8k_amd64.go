package quant

import "golang.org/x/sys/cpu"

// Q8_K activation quantizers with AVX-512 (F, BW) where the CPU has it: the bytes of
// quantRefQ8_K and quantQ8K4x8Ref for every input (q8k_test.go). Blocks the assembly leaves
// (amax Inf or NaN, or 127/amax overflowing) are quantized by the Go reference.
var q8kSIMD = cpu.X86.HasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

func init() {
	if q8kSIMD {
		formats[Q8_K].act = quantQ8KAVX512Row
		quantQ8K4x8 = quantQ8K4x8AVX512Row
	}
}

func quantQ8KAVX512Row(x []float32, dst []byte) { quantQ8KSIMD(x, dst, false, quantRefQ8_K) }

func quantQ8K4x8AVX512Row(x []float32, dst []byte) { quantQ8KSIMD(x, dst, true, quantQ8K4x8Ref) }

// quantQ8KSIMD runs the assembly over the blocks of x, and ref on those it stops at.
func quantQ8KSIMD(x []float32, dst []byte, posMax bool, ref func(x []float32, dst []byte)) {
	nb := len(x) / QK_K
	if nb*QK_K != len(x) || len(dst) < nb*q8kSize {
		ref(x, dst) // what the reference does with such buffers
		return
	}
	for i := 0; i < nb; {
		i += quantQ8KAVX512(&x[i*QK_K], &dst[i*q8kSize], nb-i, posMax)
		if i < nb {
			ref(x[i*QK_K:(i+1)*QK_K], dst[i*q8kSize:(i+1)*q8kSize])
			i++
		}
	}
}

//go:noescape
func quantQ8KAVX512(x *float32, dst *byte, nb int, posMax bool) int
