package model

import "golang.org/x/sys/cpu"

var tileAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func tileScoresAVX2(kq, q, kt *float32, hd int)

//go:noescape
func tileAccumAVX2(out, p, vf *float32, hd, n int)

//go:noescape
func tileAccum32AVX2(out, p, vf *float32, strideBytes, n int)

func tileScores(kq, q, kt []float32) {
	if tileAsm && len(q) > 0 {
		_ = kt[len(q)*faTileKV-1]
		_ = kq[faTileKV-1]
		tileScoresAVX2(&kq[0], &q[0], &kt[0], len(q))
		return
	}
	tileScoresRef(kq, q, kt)
}

func tileAccum(out, p, vf []float32, n int) {
	hd := len(out)
	if tileAsm && hd%32 == 0 && n > 0 {
		_ = vf[n*hd-1]
		_ = p[n-1]
		for c := 0; c < hd; c += 32 { // 32 outputs stay in registers over all cells
			tileAccum32AVX2(&out[c], &p[0], &vf[c], hd*4, n)
		}
		return
	}
	if tileAsm && hd%8 == 0 && n > 0 {
		_ = vf[n*hd-1]
		_ = p[n-1]
		tileAccumAVX2(&out[0], &p[0], &vf[0], hd, n)
		return
	}
	tileAccumRef(out, p, vf, n)
}

//go:noescape
func softmaxTileAVX2(dst, x *float32, max float32, n16 int, sum0 float64) (sum float64, bad int)

//go:noescape
func scaleMaskMaxAVX2(kq *float32, scale float32, valid int) float32

// softmaxVecs is softmaxTile's loop over len(x)/16 whole vectors with the exponentials
// written to dst and the sum continued from sum; ok is false (dst undefined, x untouched)
// where a lane needs the scalar fallback or the CPU lacks AVX2.
func softmaxVecs(dst, x []float32, max float32, sum float64) (float64, bool) {
	n := len(x) / simdWidth
	if !tileAsm || n == 0 {
		return 0, false
	}
	_ = dst[n*simdWidth-1]
	s, bad := softmaxTileAVX2(&dst[0], &x[0], max, n, sum)
	return s, bad == 0
}

// scaleMaskMax scales a tile's faTileKV scores, masks those from valid on to -Inf, and
// returns their maximum.
func scaleMaskMax(kq []float32, scale float32, valid int) float32 {
	if tileAsm {
		_ = kq[faTileKV-1]
		return scaleMaskMaxAVX2(&kq[0], scale, valid)
	}
	return scaleMaskMaxRef(kq, scale, valid)
}
