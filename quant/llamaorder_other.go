//go:build !amd64

package quant

var (
	dotQ8_0Lanes = dotQ8_0LanesRef
	dotQ4_KGemv  = dotQ4_KGemvRef
	dotQ4_KGemm  = dotQ4_KGemmRef
)
