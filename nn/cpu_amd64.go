//go:build amd64 && !purego

package nn

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels. It is a variable so that tests can
// compare them with the Go code.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kern4x8 sets the 4x8 block C[i][j] = sum_{q<kk} A(i,q) B[q][j] with
// A(i,q) = a[i*sa+q*sq], B row-major with stride ldb and C row-major with
// stride ldc (strides in elements). Accumulation is one fused
// multiply-add per q, in order q = 0, 1, ..., starting from +0.
//
//go:noescape
func kern4x8(kk int, a *float64, sa, sq int, b *float64, ldb int, c *float64, ldc int)

// expAVX2 is ExpTo on n elements, n a multiple of 4.
//
//go:noescape
func expAVX2(dst, x *float64, n int)

// tanhAVX2 is TanhTo on n elements, n a multiple of 4.
//
//go:noescape
func tanhAVX2(dst, x *float64, n int)
