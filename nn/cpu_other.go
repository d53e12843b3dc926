//go:build !amd64 || purego

package nn

// useAVX2 is false without the amd64 assembly; it is a variable so that
// the same tests compile everywhere.
var useAVX2 = false

func kern4x8(kk int, a *float64, sa, sq int, b *float64, ldb int, c *float64, ldc int) {
	panic("nn: no assembly kernels")
}

func expAVX2(dst, x *float64, n int)  { panic("nn: no assembly kernels") }
func tanhAVX2(dst, x *float64, n int) { panic("nn: no assembly kernels") }
