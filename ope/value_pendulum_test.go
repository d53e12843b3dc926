package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// valueStudy logs n episodes of T steps per seed and returns each
// estimator's errors against the truth, for the horizon estimand (the
// normalised T-step value, which the Monte Carlo truth of the target's own
// rollouts measures).
func valueStudy(t *testing.T, sys sim.Continuous, behavior, target policy.Continuous, truth float64, seeds, n, T int, gamma float64, names []string) map[string][]float64 {
	t.Helper()
	opts := ope.Options{TargetContinuous: target, Estimand: ope.Horizon, Seed: 1}
	ests, err := ope.New(names, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string][]float64{}
	for seed := range seeds {
		d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(seed)+1, 77)), sys, behavior, target, n, T)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ests {
			res, err := e.Estimate(d, gamma)
			if err != nil {
				t.Logf("seed %d: %s: %v", seed, e.Name(), err)
				errs[e.Name()] = append(errs[e.Name()], math.NaN())
				continue
			}
			errs[e.Name()] = append(errs[e.Name()], res.Value-truth)
		}
	}
	return errs
}

func rmse(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s / float64(len(v)))
}

func report(t *testing.T, title string, names []string, errs map[string][]float64) {
	t.Helper()
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "\n  %-12s RMSE %.4f", name, rmse(errs[name]))
	}
	t.Logf("%s:%s", title, b.String())
}

// On the linear-Gaussian system, where q is quadratic in (s, a) and the
// default features represent it exactly, fqe (LSTD-Q) and dr beat
// step-wise WIS on the T-step value, average reward and discounted.
func TestValueEstimatorsLinearGaussian(t *testing.T) {
	p := lineargauss.Problem1D()
	names := []string{"wis-stepwise", "fqe", "dr"}
	const n, T, seeds = 40, 50, 10
	for _, gamma := range []float64{1, 0.9} {
		truth, _ := p.System.Value(p.Target, gamma, T)
		errs := valueStudy(t, p.System, p.Behavior, p.Target, truth, seeds, n, T, gamma, names)
		report(t, fmt.Sprintf("linear-Gaussian 1-d, gamma %g, n %d, T %d, truth %.4f", gamma, n, T, truth), names, errs)
		for _, name := range []string{"fqe", "dr"} {
			if rmse(errs[name]) >= rmse(errs["wis-stepwise"]) {
				t.Errorf("gamma %g: %s RMSE %.4f not below step-wise WIS's %.4f", gamma, name, rmse(errs[name]), rmse(errs["wis-stepwise"]))
			}
		}
	}
}

// Pendulum at the paper's default (n = 150 episodes of T = 1000 steps,
// behavior pi+ with alpha = 1), average and discounted reward, with
// IHOPE_LONG=1: the table docs/estimators.md quotes.
func TestValueEstimatorsPendulumLong(t *testing.T) {
	if os.Getenv("IHOPE_LONG") != "1" {
		t.Skip("set IHOPE_LONG=1 to run (a few minutes)")
	}
	world, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	behavior, err := pendulum.Behavior(1)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"wis-stepwise", "fqe", "dr"}
	const n, T, seeds = 150, 1000, 5
	for _, gamma := range []float64{1, 0.99} {
		truth, se, err := rollout.Evaluate(rand.New(rand.NewPCG(2018, 12)), world, target, 20000, T, gamma)
		if err != nil {
			t.Fatal(err)
		}
		errs := valueStudy(t, world, behavior, target, truth, seeds, n, T, gamma, names)
		report(t, fmt.Sprintf("Pendulum, gamma %g, n %d, T %d, truth %.4f +- %.4f", gamma, n, T, truth, se), names, errs)
	}
}
