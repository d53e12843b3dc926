package rank

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// The cases are worked by hand in the comments.
func TestSpearmanRegret(t *testing.T) {
	cases := []struct {
		est, truth []float64
		rho        float64   // NaN: undefined
		regret     []float64 // regret@1, @2, ...
	}{
		// Four policies, true values A 1, B 0.5, C 0.2, D 0: true ranks
		// 1 2 3 4. The estimates rank B 1, A 2, D 3, C 4, so the rank
		// differences are 1, -1, -1, 1 and rho = 1 - 6*4/(4*15) = 0.6.
		// The top pick is B: regret@1 = (1 - 0.5)/(1 - 0) = 0.5; A is in
		// the top 2, so regret@2 = regret@3 = 0.
		{[]float64{0.3, 0.6, 0.1, 0.2}, []float64{1, 0.5, 0.2, 0}, 0.6, []float64{0.5, 0, 0, 0}},
		// The right order, whatever the scale: rho 1, no regret.
		{[]float64{-3, -4, -10}, []float64{0.2, 0.1, 0}, 1, []float64{0, 0, 0}},
		// The reverse order: rho -1; the pick is the worst, regret@1 1;
		// the top 2 hold the middle one, (0.2 - 0.1)/(0.2 - 0) = 0.5.
		{[]float64{0, 1, 2}, []float64{0.2, 0.1, 0}, -1, []float64{1, 0.5, 0}},
		// A and B tie in the estimates at the top: ranks 1.5, 1.5, 3
		// against true ranks 1, 3, 2; centred, (-0.5, -0.5, 1) and
		// (-1, 1, 0), whose product sums to 0: rho = 0. The tie at the
		// cut of the top 1 counts the worse of A and B (B, value 0):
		// regret@1 = (1 - 0)/(1 - 0) = 1; both are in the top 2.
		{[]float64{0.5, 0.5, 0.1}, []float64{1, 0, 0.5}, 0, []float64{1, 0, 0}},
		// Equal true values: no order to match (rho NaN), and every
		// pick is the best (regret 0).
		{[]float64{1, 2}, []float64{3, 3}, math.NaN(), []float64{0, 0}},
		// One policy: no correlation; its pick is the best.
		{[]float64{1}, []float64{2}, math.NaN(), []float64{0}},
		// A failed estimate.
		{[]float64{1, math.NaN()}, []float64{2, 1}, math.NaN(), []float64{math.NaN(), math.NaN()}},
	}
	for i, c := range cases {
		if got := Spearman(c.est, c.truth); !same(got, c.rho) {
			t.Errorf("case %d: Spearman = %v, want %v", i, got, c.rho)
		}
		for k, want := range c.regret {
			if got := Regret(c.est, c.truth, k+1); !same(got, want) {
				t.Errorf("case %d: regret@%d = %v, want %v", i, k+1, got, want)
			}
		}
	}
}

func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return scalar.EqualWithinAbs(a, b, 1e-12)
}

// Without ties Spearman's rho is 1 - 6 sum d^2 / (n (n^2 - 1)).
func TestSpearmanFormula(t *testing.T) {
	x := []float64{3.1, -2, 0.5, 7, 1.2, -0.4}
	y := []float64{1, 0.2, -5, 3, 0.9, 0.1}
	rx, ry := Ranks(x), Ranks(y)
	sum := 0.0
	for i := range rx {
		d := rx[i] - ry[i]
		sum += d * d
	}
	n := float64(len(x))
	want := 1 - 6*sum/(n*(n*n-1))
	if got := Spearman(x, y); !scalar.EqualWithinAbs(got, want, 1e-12) {
		t.Errorf("Spearman = %v, want %v", got, want)
	}
}

func TestOrderRanks(t *testing.T) {
	cases := []struct {
		v     []float64
		order []int
		ranks []float64
	}{
		{[]float64{0.1, 0.3, 0.2}, []int{1, 2, 0}, []float64{3, 1, 2}},
		{[]float64{2, 5, 5, 1}, []int{1, 2, 0, 3}, []float64{3, 1.5, 1.5, 4}},
		{[]float64{1, 1, 1}, []int{0, 1, 2}, []float64{2, 2, 2}},
		{nil, []int{}, []float64{}},
	}
	for i, c := range cases {
		if got := Order(c.v); !slices.Equal(got, c.order) {
			t.Errorf("case %d: Order = %v, want %v", i, got, c.order)
		}
		if got := Ranks(c.v); !slices.Equal(got, c.ranks) {
			t.Errorf("case %d: Ranks = %v, want %v", i, got, c.ranks)
		}
	}
	if got := Order([]float64{math.NaN(), 1, 2}); !slices.Equal(got, []int{2, 1, 0}) {
		t.Errorf("Order with NaN = %v, want [2 1 0]", got)
	}
}
