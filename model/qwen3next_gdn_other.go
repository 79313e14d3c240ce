//go:build !amd64

package model

func gdnDecayDot(row, k []float32, eg float32) float32    { return gdnDecayDotRef(row, k, eg) }
func gdnUpdateDot(row, k, q []float32, d float32) float32 { return gdnUpdateDotRef(row, k, q, d) }

func convTaps(out, in, w []float32, cd, k int) { convTapsRef(out, in, w, cd, k) }
