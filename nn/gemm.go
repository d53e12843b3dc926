package nn

import "math"

// gemm sets the rows x cols matrix C = A B, where
//
//	A(i,q) = a[i*sa + q*sq]   (i < rows, q < kk)
//	B[q][j] = b[q*ldb + j]    (q < kk,   j < cols)
//	C[i][j] = c[i*ldc + j]
//
// so that sa = lda, sq = 1 multiplies by A and sa = 1, sq = lda by A^T.
// Every C[i][j] is accumulated from +0 with one fused multiply-add per q in
// increasing q, by the assembly kernel on 4x8 blocks and by gemmGo
// elsewhere, so the result does not depend on which path ran.
func gemm(rows, cols, kk int, a []float64, sa, sq int, b []float64, ldb int, c []float64, ldc int) {
	if rows == 0 || cols == 0 {
		return
	}
	if kk > 0 && (len(a) <= (rows-1)*sa+(kk-1)*sq || len(b) < (kk-1)*ldb+cols) || len(c) < (rows-1)*ldc+cols {
		panic("nn: gemm slice too short")
	}
	i := 0
	if useAVX2 && kk > 0 {
		for ; i+4 <= rows; i += 4 {
			j := 0
			for ; j+8 <= cols; j += 8 {
				kern4x8(kk, &a[i*sa], sa, sq, &b[j], ldb, &c[i*ldc+j], ldc)
			}
			if j < cols {
				gemmGo(i, i+4, j, cols, kk, a, sa, sq, b, ldb, c, ldc)
			}
		}
	}
	gemmGo(i, rows, 0, cols, kk, a, sa, sq, b, ldb, c, ldc)
}

// gemmGo computes the block rows [i0,i1) x cols [j0,j1) of gemm in Go.
func gemmGo(i0, i1, j0, j1, kk int, a []float64, sa, sq int, b []float64, ldb int, c []float64, ldc int) {
	for i := i0; i < i1; i++ {
		ci := c[i*ldc+j0 : i*ldc+j1]
		for j := range ci {
			ci[j] = 0
		}
		for q := 0; q < kk; q++ {
			aiq := a[i*sa+q*sq]
			bq := b[q*ldb+j0 : q*ldb+j1]
			bq = bq[:len(ci)]
			for j, bv := range bq {
				ci[j] = math.FMA(aiq, bv, ci[j])
			}
		}
	}
}
