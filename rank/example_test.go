package rank_test

import (
	"fmt"
	"strings"

	"github.com/ihope-ope/ihope/rank"
)

// Three candidate policies with known values, and one estimator's
// estimates of them: it gets the best policy right but swaps the other
// two.
func Example() {
	names := []string{"pi14", "pi17", "pi19"}
	truth := []float64{-0.40, -0.20, -0.14}
	est := []float64{-0.18, -0.31, -0.13}
	var order []string
	for _, i := range rank.Order(est) {
		order = append(order, names[i])
	}
	fmt.Println(strings.Join(order, " > "))
	fmt.Printf("spearman %.2f, regret@1 %.2f\n", rank.Spearman(est, truth), rank.Regret(est, truth, 1))
	// Output:
	// pi19 > pi14 > pi17
	// spearman 0.50, regret@1 0.00
}

// Picking among six policies worth 1..6 by estimates that put the
// second best first: the single pick loses a fifth of the spread, the
// best of the top two loses nothing.
func ExampleRegret() {
	truths := []float64{1, 2, 3, 4, 5, 6}
	estimates := []float64{1.2, 1.9, 3.3, 3.8, 6.5, 6.1}
	for _, k := range []int{1, 2, 5} {
		fmt.Printf("regret@%d = %.2f\n", k, rank.Regret(estimates, truths, k))
	}
	// Output:
	// regret@1 = 0.20
	// regret@2 = 0.00
	// regret@5 = 0.00
}
