//go:build !amd64

package model

func tileScores(kq, q, kt []float32)        { tileScoresRef(kq, q, kt) }
func tileAccum(out, p, vf []float32, n int) { tileAccumRef(out, p, vf, n) }

func softmaxVecs(dst, x []float32, max float32, sum float64) (float64, bool) { return 0, false }

func scaleMaskMax(kq []float32, scale float32, valid int) float32 {
	return scaleMaskMaxRef(kq, scale, valid)
}
