package ope_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// The paper's estimator on its Taxi world: 200 episodes of 400 steps under
// the authors' pi18, evaluating pi19, against the exact value.
func ExampleDensityRatio_tabular() {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	m := taxi.New()
	d, _ := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(m), behavior, target, 200, 400)

	est := ope.DensityRatio{Learner: ratio.Tabular{}}
	res, _ := est.Estimate(d, 1)
	wis, _ := (&ope.StepwiseWIS{}).Estimate(d, 1)
	fmt.Printf("exact        %.4f\n", mdp.Value(m, target, nil, 400, 1))
	fmt.Printf("bch-tabular  %.4f\n", res.Value)
	fmt.Printf("wis-stepwise %.4f\n", wis.Value)
	// Output:
	// exact        -0.1412
	// bch-tabular  -0.1434
	// wis-stepwise -0.1741
}
