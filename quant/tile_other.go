//go:build !amd64

package quant

var tilerQ8_0 *Tiler
