package evaluate_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// The whole evaluation ihope estimate runs, from a library: the default
// estimators of the horizon value (the estimand of several episodes) with
// their intervals, the warnings and the recommended estimate, on 50 Taxi
// episodes whose log carries the target's probabilities.
func ExampleEvaluator_Evaluate() {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, _ := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(taxi.New()), behavior, target, 50, 200)

	o := evaluate.Defaults()
	o.Bootstrap = 50
	ev, err := evaluate.New(o)
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := ev.Evaluate(d, "taxi", nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range rep.Estimates {
		if row.Estimate != nil && row.CILow != nil {
			fmt.Printf("%-15s %-8s %7.3f  [%.3f, %.3f]\n", row.Estimator, row.Estimand, *row.Estimate, *row.CILow, *row.CIHigh)
		}
	}
	if r := rep.Recommended[0]; r.Estimator != nil {
		fmt.Println("recommended:", *r.Estimator)
	}
	// rep.WriteJSON(os.Stdout) writes ihope estimate --json's bytes,
	// rep.WriteText its table.

	// Output:
	// naive           horizon   -0.309  [-0.353, -0.252]
	// wis-trajectory  horizon   -0.180  [-0.330, -0.030]
	// wis-stepwise    horizon   -0.122  [-0.210, -0.034]
	// mis             horizon   -0.154  [-0.184, -0.084]
	// recommended: mis
}
