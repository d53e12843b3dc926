package nn

import "math"

// gemm sets the rows x cols matrix C = 1 bias^T + A B, where
//
//	A(i,q) = a[i*sa + q*sq]   (i < rows, q < kk)
//	B[q][j] = b[q*ldb + j]    (q < kk,   j < cols)
//	C[i][j] = c[i*ldc + j]
//
// so that sa = lda, sq = 1 multiplies by A and sa = 1, sq = lda by A^T;
// bias (length cols) may be nil for 0.
//
// The order of the floating-point operations depends only on the shapes,
// never on whether the assembly kernels run, so both paths give the same
// bits. For a single column of contiguous dot products (cols = 1, sq = 1,
// ldb = 1) every C[i] is gemmDot's four-lane sum plus the bias; otherwise
// every C[i][j] is accumulated from bias[j] (or +0) with one fused
// multiply-add per q in increasing q.
func gemm(rows, cols, kk int, a []float64, sa, sq int, b []float64, ldb int, c []float64, ldc int, bias []float64) {
	if rows == 0 || cols == 0 {
		return
	}
	if kk > 0 && (len(a) <= (rows-1)*sa+(kk-1)*sq || len(b) < (kk-1)*ldb+cols) || len(c) < (rows-1)*ldc+cols ||
		bias != nil && len(bias) < cols {
		panic("nn: gemm slice too short")
	}
	if cols == 1 && sq == 1 && ldb == 1 {
		gemmDot(rows, kk, a, sa, b, c, ldc, bias)
		return
	}
	if !useAVX2 || kk == 0 {
		gemmGo(0, rows, 0, cols, kk, a, sa, sq, b, ldb, c, ldc, bias)
		return
	}
	if cols == 1 && sa == 1 && ldc == 1 && bias == nil {
		i := 0
		for ; i+16 <= rows; i += 16 {
			kern16x1(kk, &a[i], sq, &b[0], ldb, &c[i])
		}
		gemmGo(i, rows, 0, 1, kk, a, sa, sq, b, ldb, c, ldc, bias)
		return
	}
	j8 := cols &^ 7
	for i := 0; i < rows; {
		if i+4 <= rows {
			for j := 0; j < j8; j += 8 {
				kern4x8(kk, &a[i*sa], sa, sq, &b[j], ldb, &c[i*ldc+j], ldc, biasAt(bias, j))
			}
			if j8 < cols {
				gemmGo(i, i+4, j8, cols, kk, a, sa, sq, b, ldb, c, ldc, bias)
			}
			i += 4
			continue
		}
		for j := 0; j < j8; j += 8 {
			kern1x8(kk, &a[i*sa], sq, &b[j], ldb, &c[i*ldc+j], biasAt(bias, j))
		}
		if j8 < cols {
			gemmGo(i, i+1, j8, cols, kk, a, sa, sq, b, ldb, c, ldc, bias)
		}
		i++
	}
}

func biasAt(bias []float64, j int) *float64 {
	if bias == nil {
		return nil
	}
	return &bias[j]
}

// gemmGo computes the block rows [i0,i1) x cols [j0,j1) of gemm in Go,
// in the order of the assembly kernels.
func gemmGo(i0, i1, j0, j1, kk int, a []float64, sa, sq int, b []float64, ldb int, c []float64, ldc int, bias []float64) {
	for i := i0; i < i1; i++ {
		ci := c[i*ldc+j0 : i*ldc+j1]
		if bias != nil {
			copy(ci, bias[j0:j1])
		} else {
			clear(ci)
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

// gemmDot sets c[i*ldc] = bias[0] + sum_q a[i*sa+q] b[q] for i < rows:
// four lanes l = 0..3 accumulate the terms q = l mod 4 below kk rounded
// down to a multiple of 4 (fused, in increasing q, from +0), are summed as
// (l0 + l1) + (l2 + l3), the remaining terms are fused in and the bias is
// added last.
func gemmDot(rows, kk int, a []float64, sa int, b, c []float64, ldc int, bias []float64) {
	k4 := kk &^ 3
	b0 := 0.0
	if bias != nil {
		b0 = bias[0]
	}
	i := 0
	if useAVX2 && k4 > 0 {
		var lanes [16]float64
		for ; i+4 <= rows; i += 4 {
			dot4x1(k4, &a[i*sa], sa, &b[0], &lanes)
			for r := 0; r < 4; r++ {
				row := a[(i+r)*sa : (i+r)*sa+kk]
				c[(i+r)*ldc] = finishDot(lanes[4*r:4*r+4], row[k4:], b[k4:kk]) + b0
			}
		}
	}
	for ; i < rows; i++ {
		var l [4]float64
		row := a[i*sa : i*sa+kk]
		for q := 0; q < k4; q++ {
			l[q&3] = math.FMA(row[q], b[q], l[q&3])
		}
		c[i*ldc] = finishDot(l[:], row[k4:], b[k4:kk]) + b0
	}
}

func finishDot(l, a, b []float64) float64 {
	s := (l[0] + l[1]) + (l[2] + l[3])
	for q, v := range a {
		s = math.FMA(v, b[q], s)
	}
	return s
}
