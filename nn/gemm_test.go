package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 0))
	for k, tc := range []struct{ rows, cols, kk int }{
		{1, 1, 1}, {4, 8, 1}, {4, 8, 0}, {5, 9, 3}, {8, 16, 64}, {13, 19, 7}, {64, 64, 512}, {3, 64, 2},
		{37, 1, 70}, {64, 1, 512}, {512, 1, 64}, {6, 1, 3}, {2, 64, 512}, {7, 17, 5},
	} {
		for _, trans := range []bool{false, true} {
			// A is rows x kk (or kk x rows when transposed), stored with padding.
			lda := tc.kk + 3
			sa, sq := lda, 1
			if trans {
				lda = tc.rows + 2
				sa, sq = 1, lda
			}
			a := make([]float64, (max(tc.rows, tc.kk)+1)*lda)
			for i := range a {
				a[i] = rng.NormFloat64()
			}
			ldb := tc.cols + k%2 // even cases pack B, covering the dot-product path
			b := make([]float64, max(tc.kk, 1)*ldb)
			for i := range b {
				b[i] = rng.NormFloat64()
			}
			var bias []float64
			if trans { // cover both
				bias = make([]float64, tc.cols)
				for i := range bias {
					bias[i] = rng.NormFloat64()
				}
			}
			ldc := tc.cols + 5*(k%2)
			c := make([]float64, tc.rows*ldc)
			for i := range c {
				c[i] = math.NaN() // must be overwritten
			}
			gemm(tc.rows, tc.cols, tc.kk, a, sa, sq, b, ldb, c, ldc, bias)
			plain := make([]float64, len(c))
			withGo(func() { gemm(tc.rows, tc.cols, tc.kk, a, sa, sq, b, ldb, plain, ldc, bias) })
			for i := 0; i < tc.rows; i++ {
				for j := 0; j < tc.cols; j++ {
					want := 0.0
					if bias != nil {
						want = bias[j]
					}
					for q := 0; q < tc.kk; q++ {
						want += a[i*sa+q*sq] * b[q*ldb+j]
					}
					got := c[i*ldc+j]
					if math.Float64bits(got) != math.Float64bits(plain[i*ldc+j]) {
						t.Fatalf("case %d trans=%v C[%d][%d]: assembly %v, Go %v", k, trans, i, j, got, plain[i*ldc+j])
					}
					if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
						t.Fatalf("case %d trans=%v C[%d][%d] = %v, want %v", k, trans, i, j, got, want)
					}
				}
			}
		}
	}
}
