package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/pointmass"
	"github.com/ihope-ope/ihope/value"
)

// pointMassErrors returns, over seeds 1..S of 200 episodes of 100 steps
// on the point mass (sim/pointmass, long run), the mean |error| of fqe
// with the selected class, of fqe with each fixed degree 2..6 (the best
// of them is the oracle class in hindsight), and the winners.
func pointMassErrors(t *testing.T, S int, gamma float64) (sel float64, fixed [5]float64, winners []string) {
	sys, target, behavior := pointmass.Problem()
	truth := pointmass.TruthDiscounted
	if gamma == 1 {
		truth = pointmass.TruthAverage
	}
	for seed := uint64(1); seed <= uint64(S); seed++ {
		d, err := sys.Sample(rand.New(rand.NewPCG(seed, 0)), behavior, target, 200, 100)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ope.FQE{Estimand: ope.LongRun, SelectSeed: seed}.Estimate(d, gamma)
		if err != nil {
			t.Fatal(err)
		}
		sel += math.Abs(r.Value-truth) / float64(S)
		winners = append(winners, r.ModelClass)
		best := r.Selection[0]
		for _, c := range r.Selection {
			if c.Score < best.Score {
				best = c
			}
		}
		if best.Model != r.ModelClass {
			t.Errorf("seed %d: ModelClass %s, but %s has the least held-out score (%v)", seed, r.ModelClass, best.Model, r.Selection)
		}
		for deg := 2; deg <= 6; deg++ {
			f, err := ope.FQE{Value: value.Linear{Degree: deg}, Estimand: ope.LongRun}.Estimate(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			fixed[deg-2] += math.Abs(f.Value-truth) / float64(S)
		}
	}
	return sel, fixed, winners
}

// fqe on the point mass (q not quadratic) chooses degree 3 or more and
// errs within 1.5 times the best fixed degree in hindsight (the oracle
// class), where degree 2, the class before selection, errs several times
// more.
func TestPointMassSelection(t *testing.T) {
	for _, gamma := range []float64{0.99, 1} {
		sel, fixed, winners := pointMassErrors(t, 3, gamma)
		oracle := math.Inf(1)
		for _, e := range fixed {
			oracle = math.Min(oracle, e)
		}
		for _, w := range winners {
			if w == "poly2" {
				t.Errorf("gamma %g: chose poly2 (%v)", gamma, winners)
			}
		}
		if sel > 1.5*oracle {
			t.Errorf("gamma %g: selected fqe errs %.4f, more than 1.5 x the oracle class's %.4f (fixed degrees 2..6: %.4f)", gamma, sel, oracle, fixed)
		}
		if fixed[0] < 2*sel {
			t.Errorf("gamma %g: degree 2 errs %.4f, not twice the selected %.4f: the world no longer tells classes apart", gamma, fixed[0], sel)
		}
	}
}

// The 20-seed table of docs/estimators.md (IHOPE_LONG=1): mean
// |error| of fqe, dr (selected, and with degree 2 before), mql, step-wise
// WIS and the oracle class.
func TestPointMassSelectionTable(t *testing.T) {
	if !testsets.Long() {
		t.Skip("IHOPE_LONG=1")
	}
	sys, target, behavior := pointmass.Problem()
	for _, gamma := range []float64{0.99, 1} {
		truth := pointmass.TruthDiscounted
		if gamma == 1 {
			truth = pointmass.TruthAverage
		}
		const S = 20
		var fqe2, fqeSel, dr2, drSel, mql, wis float64
		fixed := make([]float64, 5)
		wins := map[string]int{}
		for seed := uint64(1); seed <= S; seed++ {
			d, err := sys.Sample(rand.New(rand.NewPCG(seed, 0)), behavior, target, 200, 100)
			if err != nil {
				t.Fatal(err)
			}
			e := func(est ope.Estimator) float64 {
				r, err := est.Estimate(d, gamma)
				if err != nil {
					t.Fatal(err)
				}
				return math.Abs(r.Value-truth) / S
			}
			fqe2 += e(ope.FQE{Value: value.Linear{}, Estimand: ope.LongRun})
			sel := ope.FQE{Estimand: ope.LongRun, SelectSeed: seed}
			fqeSel += e(sel)
			if r, err := sel.Estimate(d, gamma); err == nil {
				wins[r.ModelClass]++
			}
			dr2 += e(ope.DR{Value: value.Linear{}, Estimand: ope.LongRun})
			drSel += e(ope.DR{Estimand: ope.LongRun, SelectSeed: seed})
			mql += e(ope.MinimaxQ{})
			wis += e(&ope.StepwiseWIS{})
			for deg := 2; deg <= 6; deg++ {
				fixed[deg-2] += e(ope.FQE{Value: value.Linear{Degree: deg}, Estimand: ope.LongRun})
			}
		}
		oracle := math.Inf(1)
		for _, x := range fixed {
			oracle = math.Min(oracle, x)
		}
		t.Logf("gamma %g | fqe %.4f (deg 2: %.4f) | dr %.4f (deg 2: %.4f) | mql %.4f | wis-stepwise %.4f | oracle class %.4f (fixed 2..6: %s) | winners %v",
			gamma, fqeSel, fqe2, drSel, dr2, mql, wis, oracle, fmt.Sprintf("%.4f", fixed), wins)
		if fqeSel > 1.5*oracle || drSel > 1.5*oracle {
			t.Errorf("gamma %g: fqe %.4f or dr %.4f beyond 1.5 x the oracle class %.4f", gamma, fqeSel, drSel, oracle)
		}
	}
}
