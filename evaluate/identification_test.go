package evaluate_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// On discounted Pendulum (the paper's logs, 150 episodes of 1,000 steps,
// gamma = 0.99, truth -1.451), where the kernel loss does not locate the
// value (docs/methods.md), bch-kernel's identification range is more than
// twice as wide as its interval and the row says so, on at least 3 of 4
// seeds; the range holds the truth on at least 3 of 4.
func TestIdentificationRangePendulum(t *testing.T) {
	if !testsets.Stat() {
		t.Skip("statistical set: IHOPE_STAT=1 (CI runs it)")
	}
	const truth = -1.451
	world, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	behavior, err := pendulum.Behavior(1)
	if err != nil {
		t.Fatal(err)
	}
	warned, held := 0, 0
	for seed := range 4 {
		d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(seed)+1, 91)), world, behavior, target, 150, 1000)
		if err != nil {
			t.Fatal(err)
		}
		o := evaluate.Defaults()
		o.Estimators, o.Gamma, o.Estimand, o.Bootstrap = []string{"bch-kernel"}, 0.99, "long-run", 40
		ev, err := evaluate.New(o)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ev.Evaluate(d, "pendulum", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Estimates[0]
		if r.IdentificationLow == nil || r.CILow == nil {
			t.Fatalf("seed %d: row %+v", seed, r)
		}
		lo, hi := *r.IdentificationLow, *r.IdentificationHigh
		t.Logf("seed %d: estimate %.3f, interval [%.3f, %.3f], identification range [%.3f, %.3f]", seed, *r.Estimate, *r.CILow, *r.CIHigh, lo, hi)
		if hasWarning(rep, "the ratios of its class that pass the flow test") {
			warned++
		}
		if lo <= truth && truth <= hi {
			held++
		}
	}
	if warned < 3 || held < 3 {
		t.Errorf("the range warned on %d of 4 seeds and held the truth on %d", warned, held)
	}
}
