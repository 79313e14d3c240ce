package model

import "golang.org/x/sys/cpu"

var tileAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func tileScoresAVX2(kq, q, kt *float32, hd int)

//go:noescape
func tileAccumAVX2(out, p, vf *float32, hd, n int)

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
	if tileAsm && hd%8 == 0 && n > 0 {
		_ = vf[n*hd-1]
		_ = p[n-1]
		tileAccumAVX2(&out[0], &p[0], &vf[0], hd, n)
		return
	}
	tileAccumRef(out, p, vf, n)
}
