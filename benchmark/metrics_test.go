package benchmark_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ihope-ope/ihope/benchmark"
)

// TestRanks checks ranks with ties by hand.
func TestRanks(t *testing.T) {
	cases := []struct {
		x, want []float64
	}{
		{[]float64{30, 10, 20}, []float64{3, 1, 2}},
		// 10 and 10 span ranks 1 and 2: both get 1.5.
		{[]float64{10, 40, 10, 20}, []float64{1.5, 4, 1.5, 3}},
		// Three equal entries span ranks 2..4: all get 3.
		{[]float64{5, 7, 7, 7, 1}, []float64{2, 4, 4, 4, 1}},
		{[]float64{2, 2}, []float64{1.5, 1.5}},
		{nil, []float64{}},
	}
	for i, c := range cases {
		got := benchmark.Ranks(c.x)
		if len(got) != len(c.want) {
			t.Fatalf("case %d: %v, want %v", i, got, c.want)
		}
		for j := range got {
			if got[j] != c.want[j] {
				t.Errorf("case %d: %v, want %v", i, got, c.want)
				break
			}
		}
	}
}

// TestSpearmanByHand checks the rank correlation on cases worked by hand.
//
// Case "two swaps": the truths 1..5 and estimates 2, 1, 4, 3, 5 differ in
// rank by d = (1, -1, 1, -1, 0), so Spearman's formula without ties gives
// 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - 6*4/(5*24) = 0.8.
//
// Case "ties": truths 1, 2, 2, 3 have ranks 1, 2.5, 2.5, 4 and estimates
// 0.1, 0.3, 0.2, 0.4 ranks 1, 3, 2, 4. Around the mean rank 2.5 the
// deviations are (-1.5, 0, 0, 1.5) and (-1.5, 0.5, -0.5, 1.5), with
// cross-product 4.5 and squares 4.5 and 5: rho = 4.5 / sqrt(4.5*5) =
// 3/sqrt(10) = 0.948683...
func TestSpearmanByHand(t *testing.T) {
	cases := []struct {
		name              string
		estimates, truths []float64
		want              float64
	}{
		{"same order", []float64{-3, 0, 10}, []float64{0.1, 0.2, 0.3}, 1},
		{"reversed", []float64{5, 4, 3, 2, 1}, []float64{1, 2, 3, 4, 5}, -1},
		{"two swaps", []float64{2, 1, 4, 3, 5}, []float64{1, 2, 3, 4, 5}, 0.8},
		{"ties", []float64{0.1, 0.3, 0.2, 0.4}, []float64{1, 2, 2, 3}, 3 / math.Sqrt(10)},
		{"constant estimate", []float64{1, 1, 1}, []float64{1, 2, 3}, math.NaN()},
		{"one policy", []float64{1}, []float64{1}, math.NaN()},
		{"lengths differ", []float64{1, 2}, []float64{1, 2, 3}, math.NaN()},
	}
	for i, c := range cases {
		got := benchmark.Spearman(c.estimates, c.truths)
		if !same(got, c.want, 1e-15) {
			t.Errorf("case %d (%s): Spearman %v, want %v", i, c.name, got, c.want)
		}
	}
}

// TestRegretByHand checks the normalised regret@k on cases worked by
// hand. The family has true values 1, 2, 3, 4, 5 (best 5, worst 1, so
// regret is (5 - picked)/4).
//
//   - Estimates 2, 1, 4, 3, 5 rank the best policy first: regret@1 = 0.
//   - Reversed estimates pick the worst policy: regret@1 = (5-1)/4 = 1;
//     their top 2 are the policies worth 1 and 2: regret@2 = (5-2)/4 =
//     0.75; their top 5 is the whole family: regret@5 = 0.
//   - Estimates 0, 9, 8, 0, 0 pick the policy worth 2 first
//     (regret@1 = 3/4) and that worth 3 second (regret@2 = 2/4).
//   - Estimates 7, 0, 0, 7, 0 tie at the top between the policies worth 1
//     and 4: the tie goes against the estimator, regret@1 = (5-1)/4 = 1,
//     and regret@2 = (5-4)/4 = 0.25.
func TestRegretByHand(t *testing.T) {
	truths := []float64{1, 2, 3, 4, 5}
	cases := []struct {
		name      string
		estimates []float64
		k         int
		want      float64
	}{
		{"best first", []float64{2, 1, 4, 3, 5}, 1, 0},
		{"reversed @1", []float64{5, 4, 3, 2, 1}, 1, 1},
		{"reversed @2", []float64{5, 4, 3, 2, 1}, 2, 0.75},
		{"reversed @5", []float64{5, 4, 3, 2, 1}, 5, 0},
		{"reversed @9", []float64{5, 4, 3, 2, 1}, 9, 0},
		{"second @1", []float64{0, 9, 8, 0, 0}, 1, 0.75},
		{"second @2", []float64{0, 9, 8, 0, 0}, 2, 0.5},
		{"tie @1", []float64{7, 0, 0, 7, 0}, 1, 1},
		{"tie @2", []float64{7, 0, 0, 7, 0}, 2, 0.25},
	}
	for i, c := range cases {
		if got := benchmark.RegretAtK(c.estimates, truths, c.k); !same(got, c.want, 1e-15) {
			t.Errorf("case %d (%s): regret@%d %v, want %v", i, c.name, c.k, got, c.want)
		}
	}
	// No spread of values, no k, no family: undefined.
	for i, got := range []float64{
		benchmark.RegretAtK([]float64{1, 2}, []float64{3, 3}, 1),
		benchmark.RegretAtK([]float64{1, 2}, []float64{1, 2}, 0),
		benchmark.RegretAtK(nil, nil, 1),
		benchmark.RegretAtK([]float64{1}, []float64{1, 2}, 1),
	} {
		if !math.IsNaN(got) {
			t.Errorf("undefined case %d: %v, want NaN", i, got)
		}
	}
}

// same reports whether a and b agree within tol, NaN matching NaN.
func same(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}

// An estimator that gets the order of a family of five policies nearly
// right: it swaps two pairs of neighbours but ranks the best policy first.
func ExampleSpearman() {
	truths := []float64{0.1, 0.2, 0.3, 0.4, 0.5}
	estimates := []float64{0.25, 0.15, 0.41, 0.33, 0.6}
	fmt.Printf("Spearman %.2f, regret@1 %.2f, regret@5 %.2f\n",
		benchmark.Spearman(estimates, truths),
		benchmark.RegretAtK(estimates, truths, 1), benchmark.RegretAtK(estimates, truths, 5))
	// Output:
	// Spearman 0.80, regret@1 0.00, regret@5 0.00
}
