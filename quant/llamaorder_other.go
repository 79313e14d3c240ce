//go:build !amd64

package quant

var dotQ8_0Lanes = dotQ8_0LanesRef
