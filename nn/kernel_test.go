package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRBFRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 0))
	for k, tc := range []struct{ n, d int }{{1, 1}, {3, 2}, {4, 2}, {13, 3}, {511, 2}, {64, 1}} {
		ld := tc.n + 3
		x := make([]float64, tc.d*ld)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		y := make([]float64, tc.d)
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		u := make([]float64, tc.n)
		acc := make([]float64, tc.n)
		for j := range u {
			u[j] = rng.NormFloat64()
			acc[j] = rng.NormFloat64()
		}
		const c, v = -0.7, 1.3
		acc0 := append([]float64(nil), acc...)
		accGo := append([]float64(nil), acc...)
		got := RBFRow(tc.n, x, ld, y, c, u, v, acc)
		var gotGo float64
		withGo(func() { gotGo = RBFRow(tc.n, x, ld, y, c, u, v, accGo) })
		if got != gotGo {
			t.Errorf("case %d: assembly %v, Go %v", k, got, gotGo)
		}
		want := 0.0
		for j := 0; j < tc.n; j++ {
			s := 0.0
			for q := 0; q < tc.d; q++ {
				s += (x[q*ld+j] - y[q]) * (x[q*ld+j] - y[q])
			}
			kj := math.Exp(c * s)
			want += kj * u[j]
			if a := acc0[j] + kj*v; math.Abs(acc[j]-a) > 1e-14*(1+math.Abs(a)) || acc[j] != accGo[j] {
				t.Fatalf("case %d: acc[%d] = %v (Go %v), want %v", k, j, acc[j], accGo[j], a)
			}
		}
		if math.Abs(got-want) > 1e-13*(1+math.Abs(want)) {
			t.Errorf("case %d: RBFRow = %v, want %v", k, got, want)
		}
	}
}
