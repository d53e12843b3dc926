//go:build amd64 && !purego

package nn

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels. It is a variable so that tests can
// compare them with the Go code.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kern4x8 sets the 4x8 block C[i][j] = bias[j] + sum_{q<kk} A(i,q) B[q][j]
// with A(i,q) = a[i*sa+q*sq], B row-major with stride ldb and C row-major
// with stride ldc (strides in elements). Accumulation is one fused
// multiply-add per q, in order q = 0, 1, ..., starting from bias[j], or
// from +0 if bias is nil.
//
//go:noescape
func kern4x8(kk int, a *float64, sa, sq int, b *float64, ldb int, c *float64, ldc int, bias *float64)

// expAVX2 is ExpTo on n elements, n a multiple of 4.
//
//go:noescape
func expAVX2(dst, x *float64, n int)

// tanhAVX2 is TanhTo on n elements, n a multiple of 4.
//
//go:noescape
func tanhAVX2(dst, x *float64, n int)

// kern1x8 is kern4x8 for one row:
// C[0][j] = bias[j] + sum_q a[q*sq] B[q][j], j < 8.
//
//go:noescape
func kern1x8(kk int, a *float64, sq int, b *float64, ldb int, c *float64, bias *float64)

// kern16x1 computes one column for 16 rows stored contiguously:
// c[i] = sum_q a[q*sq+i] b[q*ldb], i < 16, fused in increasing q.
//
//go:noescape
func kern16x1(kk int, a *float64, sq int, b *float64, ldb int, c *float64)

// dot4x1 computes, for the 4 rows r of A at a + r*sa, the lanes
// lanes[4r+l] = sum over q < k4, q = l mod 4, of A[r][q] b[q], fused in
// increasing q (k4 a multiple of 4).
//
//go:noescape
func dot4x1(k4 int, a *float64, sa int, b *float64, lanes *[16]float64)

// rbfRowAVX2 is the vector part of RBFRow on n4 columns (a multiple of 4);
// it leaves the four lane sums of k_j u_j in lanes.
//
//go:noescape
func rbfRowAVX2(n4 int, x *float64, ld int, y *float64, d int, c float64, u *float64, v float64, acc *float64, lanes *[4]float64)

// dtanhAVX2 sets d[i] *= 1 - a[i]^2 (one fused multiply-add, one
// multiplication) for n elements, n a multiple of 4.
//
//go:noescape
func dtanhAVX2(d, a *float64, n int)
