package ope_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// The on-policy oracle of a continuous world rolls the target out; on the
// linear-Gaussian system its average agrees with the exact T-step value.
func ExampleOnPolicy_continuous() {
	p := lineargauss.Problem1D()
	exact, _ := p.System.Value(p.Target, 1, 50)
	oracle := &ope.OnPolicy{Sim: rollout.SimulatorContinuous{Env: p.System, Target: p.Target}, Seed: 1, Episodes: 2000, Horizon: 50}
	res, err := oracle.Estimate(nil, 1) // no logged data needed with Episodes and Horizon set
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %.3f (exact %.3f)\n", oracle.Name(), res.Value, exact)
	// Output:
	// on-policy: -0.254 (exact -0.253)
}
