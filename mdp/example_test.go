package mdp_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// The true average reward per step of the paper's Taxi target policy over
// 400 steps from the reset distribution.
func ExampleValue() {
	pi, err := taxi.Policy(taxi.DefaultTarget) // pi19
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.5f\n", mdp.Value(taxi.New(), pi, nil, 400, 1))
	// Output: -0.14118
}

// The stationary density ratio of the Taxi target against its behavior.
func ExampleRatio() {
	m := taxi.New()
	target, _ := taxi.Policy(taxi.DefaultTarget)
	behavior, _ := taxi.Policy(taxi.DefaultBehavior)
	w, err := mdp.Ratio(m, target, behavior, 1)
	if err != nil {
		panic(err)
	}
	d0, _ := mdp.Visitation(m, behavior, 1)
	mean := 0.0 // E_{d_pi0}[w] = 1
	for s := range w {
		mean += d0[s] * w[s]
	}
	fmt.Printf("%d states, E[w] = %.6f\n", len(w), mean)
	// Output: 2000 states, E[w] = 1.000000
}
