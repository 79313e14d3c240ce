//go:build !amd64

package model

func tileScores(kq, q, kt []float32)        { tileScoresRef(kq, q, kt) }
func tileAccum(out, p, vf []float32, n int) { tileAccumRef(out, p, vf, n) }
