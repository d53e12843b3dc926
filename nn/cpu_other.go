//go:build !amd64 || purego

package nn

// useAVX2 is false without the amd64 assembly; it is a variable so that
// the same tests compile everywhere.
var useAVX2 = false

func kern4x8(kk int, a *float64, sa, sq int, b *float64, ldb int, c *float64, ldc int, bias *float64) {
	panic("nn: no assembly kernels")
}

func expAVX2(dst, x *float64, n int)  { panic("nn: no assembly kernels") }
func tanhAVX2(dst, x *float64, n int) { panic("nn: no assembly kernels") }

func kern1x8(kk int, a *float64, sq int, b *float64, ldb int, c *float64, bias *float64) {
	panic("nn: no assembly kernels")
}

func kern16x1(kk int, a *float64, sq int, b *float64, ldb int, c *float64) {
	panic("nn: no assembly kernels")
}

func dot4x1(k4 int, a *float64, sa int, b *float64, lanes *[16]float64) {
	panic("nn: no assembly kernels")
}

func rbfRowAVX2(n4 int, x *float64, ld int, y *float64, d int, c float64, u *float64, v float64, acc *float64, lanes *[4]float64) {
	panic("nn: no assembly kernels")
}

func dtanhAVX2(d, a *float64, n int) { panic("nn: no assembly kernels") }
