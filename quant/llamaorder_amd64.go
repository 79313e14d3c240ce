package quant

import "golang.org/x/sys/cpu"

// The llama-order kernels, with AVX2 where the CPU has it (same bits as the references).
var (
	dotQ8_0Lanes = dotQ8_0LanesRef
	dotQ4_KGemv  = dotQ4_KGemvRef
	dotQ4_KGemm  = dotQ4_KGemmRef
)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C {
		dotQ8_0Lanes = func(w, a []byte, n int) float32 {
			if n < 32 {
				return 0
			}
			return dotQ8_0LanesAVX2(&w[0], &a[0], n/32)
		}
		formats[Q8_0].act = func(x []float32, dst []byte) {
			if len(x) >= qk {
				quantActQ8_0AVX2(&x[0], &dst[0], len(x)/qk)
			}
		}
	}
}

//go:noescape
func quantActQ8_0AVX2(x *float32, dst *byte, nb int)

//go:noescape
func dotQ8_0LanesAVX2(w, a *byte, nb int) float32
