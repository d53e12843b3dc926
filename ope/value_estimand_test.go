package ope_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/value"
)

// A stationary value model read at the start states gives the long-run
// value, not the T-step one. fqe and dr refuse it where the horizon value
// is asked for, in memory and over a stream, and run it under the long
// run; a finite-horizon learner runs under the horizon. Before, the neural
// learner's stationary values were reported as the horizon value (1.114
// on 20-step cart-pole logs whose rewards are at most 1).
func TestStationaryValueUnderHorizon(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(6, 0)), behavior, target, 12, 40)
	if err != nil {
		t.Fatal(err)
	}
	const gamma = 0.9
	small := value.Neural{MaxIter: 40, BatchSize: 64, EvalEvery: 20}
	for _, c := range []struct {
		name    string
		e       ope.Estimator
		refused bool
	}{
		{"fqe neural horizon", ope.FQE{Value: small, Estimand: ope.Horizon}, true},
		{"fqe neural default estimand", ope.FQE{Value: small}, true},
		{"fqe stationary linear horizon", ope.FQE{Value: value.Linear{}, Estimand: ope.Horizon}, true},
		{"dr neural horizon", ope.DR{Value: small, Estimand: ope.Horizon}, true},
		{"fqe mql horizon", ope.FQE{Value: value.MQL{}, Estimand: ope.Horizon}, true},
		{"fqe finite linear horizon", ope.FQE{Value: value.Linear{Finite: true}, Estimand: ope.Horizon}, false},
		{"fqe neural long-run", ope.FQE{Value: small, Estimand: ope.LongRun}, false},
		{"dr neural long-run", ope.DR{Value: small, Estimand: ope.LongRun}, false},
	} {
		res, err := c.e.Estimate(d, gamma)
		if c.refused {
			if !errors.Is(err, ope.ErrStationaryHorizon) || !strings.Contains(err.Error(), "--estimand long-run") {
				t.Errorf("%s: got %v, %v; want a refusal that names the stationary model and the long run", c.name, res.Value, err)
			}
			continue
		}
		if err != nil || math.IsNaN(res.Value) {
			t.Errorf("%s: %v, %v", c.name, res.Value, err)
		}
	}
	// The other way round: a finite-horizon model has no long-run value.
	for _, e := range []ope.Estimator{ope.FQE{Value: value.Linear{Finite: true}, Estimand: ope.LongRun}, ope.DR{Value: value.Linear{Finite: true}, Estimand: ope.LongRun}} {
		if _, err := e.Estimate(d, gamma); err == nil || !strings.Contains(err.Error(), "finite-horizon values") {
			t.Errorf("%s with a finite-horizon model under the long run: %v", e.Name(), err)
		}
	}
	if _, err := (ope.FQE{Value: small, Estimand: ope.Horizon}).NewSums(gamma, 1); !errors.Is(err, ope.ErrStationaryHorizon) {
		t.Errorf("streamed fqe with the neural learner under horizon: %v, want a refusal", err)
	}
	if _, err := (ope.FQE{Value: small, Estimand: ope.LongRun}).NewSums(gamma, 1); err != nil {
		t.Errorf("streamed fqe with the neural learner under the long run: %v", err)
	}
}
