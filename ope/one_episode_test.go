package ope_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/exact"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/rollout"
)

// A continuing log (one long episode of tinyMDP from state 0): the
// estimators that weigh episodes against each other (the IS family and
// mis, whose ratio at step t is counted over the episodes' steps t)
// refuse it by name; dr runs under the horizon estimand with the
// stationary ratio and lands on the exact T-step value from the logged
// start as fqe does; and at gamma < 1 the estimators that weigh step t by
// gamma^t warn that they rest on the episode's first steps.
func TestOneEpisode(t *testing.T) {
	pi0, err := policy.NewTabular([][]float64{tiny.pi0[0][:], tiny.pi0[1][:]})
	if err != nil {
		t.Fatal(err)
	}
	pi, err := policy.NewTabular([][]float64{tiny.pi[0][:], tiny.pi[1][:]})
	if err != nil {
		t.Fatal(err)
	}
	world := tinyTable{[2]float64{1, 0}}
	const T = 40000
	d, err := rollout.Sample(rand.New(rand.NewPCG(3, 0)), env.NewSampler(world), pi0, pi, 1, T)
	if err != nil {
		t.Fatal(err)
	}
	truth := exact.Value(world, pi, nil, T, 1)
	for _, name := range []string{"is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "mis"} {
		est, err := ope.New([]string{name}, ope.Options{Target: pi, Estimand: ope.Horizon})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := est[0].Estimate(d, 1); err == nil || !strings.Contains(err.Error(), "needs several episodes") {
			t.Errorf("%s on one episode: error %v, want a refusal", name, err)
		}
	}
	ests, err := ope.New([]string{"dr", "fqe"}, ope.Options{Target: pi, Estimand: ope.Horizon})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ests {
		r, err := e.Estimate(d, 1)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		// The count model of 40,000 steps: its error is about 0.005.
		if math.Abs(r.Value-truth) > 0.02 {
			t.Errorf("%s (%s): %.4f, the exact %d-step value %.4f", e.Name(), r.Learner, r.Value, T, truth)
		}
		if e.Name() == "dr" && r.Learner != "tabular/tabular" {
			t.Errorf("dr's models on one episode: %s, want the stationary ratio (tabular/tabular)", r.Learner)
		}
	}
	for _, name := range []string{"bch-tabular", "dr"} {
		est, err := ope.New([]string{name}, ope.Options{Target: pi, Estimand: ope.LongRun})
		if err != nil {
			t.Fatal(err)
		}
		for _, gamma := range []float64{1, 0.9} {
			r, err := est[0].Estimate(d, gamma)
			if err != nil {
				t.Fatalf("%s gamma %g: %v", name, gamma, err)
			}
			warned := strings.Contains(strings.Join(r.Warnings, "\n"), "first 10 steps")
			if warned != (gamma < 1) {
				t.Errorf("%s gamma %g: warnings %q", name, gamma, r.Warnings)
			}
		}
	}
}
