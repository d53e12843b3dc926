package ope_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// Every registered estimator that runs on these logs and the target's
// action distribution, with bootstrap intervals, as ihope estimate
// computes them (the estimand is the 200-step value, the truth's;
// bch-tabular, mwl, mql and dualdice target the long-run value, -0.122,
// whatever the estimand asked for).
func ExampleApplicable() {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, _ := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(taxi.New()), behavior, target, 50, 200)

	fmt.Printf("%-15s %.3f\n", "truth (exact)", mdp.Value(taxi.New(), target, nil, 200, 1))
	opts := ope.Options{Seed: 1, Target: target} // the target's whole distribution: model-based, fqe, dr run too
	names := ope.Applicable(d, opts)
	ests, _ := ope.New(names, opts)
	ivs, _ := (&ope.Bootstrap{Resamples: 50, Seed: 1}).Run(d, 1, ests)
	for i, est := range ests {
		res, _ := est.Estimate(d, 1)
		fmt.Printf("%-15s %.3f  [%.3f, %.3f]\n", est.Name(), res.Value, ivs[i].Low, ivs[i].High)
	}
	// Output:
	// truth (exact)   -0.161
	// naive           -0.309  [-0.363, -0.253]
	// is-trajectory   -0.078  [-0.167, -0.000]
	// wis-trajectory  -0.180  [-0.361, -0.021]
	// is-stepwise     -0.091  [-0.150, -0.041]
	// wis-stepwise    -0.122  [-0.229, -0.038]
	// model-based     -0.172  [-0.230, -0.132]
	// fqe             -0.172  [-0.230, -0.132]
	// mis             -0.154  [-0.193, -0.085]
	// bch-tabular     -0.198  [-0.264, -0.110]
	// dr              -0.186  [-0.253, -0.118]
	// mwl             -0.127  [-0.174, -0.084]
	// mql             -0.127  [-0.174, -0.084]
	// dualdice        -0.127  [-0.174, -0.084]
}
