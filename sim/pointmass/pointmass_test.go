package pointmass_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/sim/pointmass"
)

// A small Monte Carlo with another seed agrees with the truth constants
// within 4 standard errors; under IHOPE_LONG the constants are
// recomputed from TruthRollouts to their printed digits.
func TestTruthConstants(t *testing.T) {
	sys, target, _ := pointmass.Problem()
	for _, c := range []struct {
		gamma, truth, se float64
	}{{0.99, pointmass.TruthDiscounted, pointmass.TruthDiscountedSE}, {1, pointmass.TruthAverage, pointmass.TruthAverageSE}} {
		r := pointmass.Rollouts{Episodes: 400, Burn: 300, Len: 300, Seed: 7}
		if testsets.Long() {
			r = pointmass.TruthRollouts
		}
		m, se, err := sys.Truth(target, c.gamma, r)
		if err != nil {
			t.Fatal(err)
		}
		if testsets.Long() {
			if math.Abs(m-c.truth) > 5e-7 || math.Abs(se-c.se) > 5e-7 {
				t.Errorf("gamma %g: truth %.6f ± %.6f, constants %.6f ± %.6f", c.gamma, m, se, c.truth, c.se)
			}
			continue
		}
		if tol := 4 * math.Hypot(se, c.se); math.Abs(m-c.truth) > tol {
			t.Errorf("gamma %g: %d rollouts give %.5f ± %.5f, the constant is %.5f", c.gamma, r.Episodes, m, se, c.truth)
		}
	}
}

// Sample: the same seed gives the same log; the target's rows are
// distributions; the velocity stays within the clip and reaches it.
func TestSample(t *testing.T) {
	sys, target, behavior := pointmass.Problem()
	d, err := sys.Sample(rand.New(rand.NewPCG(3, 0)), behavior, target, 20, 50)
	if err != nil {
		t.Fatal(err)
	}
	e, err := sys.Sample(rand.New(rand.NewPCG(3, 0)), behavior, target, 20, 50)
	if err != nil {
		t.Fatal(err)
	}
	clipped := 0
	for j := range d.NumSteps() {
		if d.Reward[j] != e.Reward[j] || d.Action[j] != e.Action[j] {
			t.Fatalf("step %d differs between two samples of one seed", j)
		}
		v := d.ObsAt(j)[1]
		if math.Abs(v) > sys.VMax {
			t.Fatalf("step %d: velocity %v beyond the clip %v", j, v, sys.VMax)
		}
		if math.Abs(v) == sys.VMax {
			clipped++
		}
		sum := 0.0
		for _, p := range d.TargetProbsAt(j) {
			sum += p
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("step %d: target row sums to %v", j, sum)
		}
	}
	if clipped == 0 {
		t.Error("the velocity never reaches the clip: q would be nearly quadratic")
	}
	if _, err := sys.Sample(rand.New(rand.NewPCG(3, 0)), behavior, target, 0, 5); err == nil {
		t.Error("0 episodes: no error")
	}
}
