package gridwalk_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/sim/gridwalk"
)

// The exact truths of the GridWalk target family: dice_rl's on-policy
// value (the normalised discounted reward of 100-step trajectories,
// gamma = 0.99) of each alpha, and the behavior's.
func Example() {
	g, err := gridwalk.New(gridwalk.DefaultLength)
	if err != nil {
		panic(err)
	}
	for _, alpha := range append(gridwalk.TargetAlphas, gridwalk.BehaviorAlpha) {
		v := mdp.Value(g, g.Policy(alpha), nil, gridwalk.Horizon, gridwalk.Gamma)
		fmt.Printf("alpha %.2f (epsilon %.2f): %.6f\n", alpha, gridwalk.Epsilon(alpha), v)
	}
	// Output:
	// alpha 1.00 (epsilon 0.10): 0.909220
	// alpha 0.95 (epsilon 0.13): 0.902730
	// alpha 0.90 (epsilon 0.16): 0.895781
	// alpha 0.85 (epsilon 0.19): 0.888328
	// alpha 0.80 (epsilon 0.22): 0.880318
	// alpha 0.75 (epsilon 0.25): 0.871691
	// alpha 0.00 (epsilon 0.70): 0.593356
}
