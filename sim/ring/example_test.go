package ring_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/sim/ring"
)

// The variance of the trajectory-wise importance weight grows like
// A_rho^T, while the stationary ratio w(s) = 1 has none (Appendix B).
// T is the last step index: a trajectory has T+1 steps.
func ExampleWeightVariance() {
	const rho = 0.4 // behavior P(R) = 0.4, target P(R) = 0.6
	fmt.Printf("A = %.4f\n", ring.A(rho))
	for _, T := range []int{0, 10, 50, 100} {
		fmt.Printf("T = %3d: Var[w] = %.6g\n", T, ring.WeightVariance(rho, T))
	}
	// Output:
	// A = 1.1667
	// T =   0: Var[w] = 0.166667
	// T =  10: Var[w] = 4.45023
	// T =  50: Var[w] = 2594.89
	// T = 100: Var[w] = 5.77598e+06
}
