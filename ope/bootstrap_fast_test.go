package ope_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// namedData is a dataset with a name for subtests.
type namedData struct {
	name string
	d    *dataset.Dataset
}

// taxiAndRing returns a Taxi log and a ring log whose target never takes
// L, so that some logged steps have target probability 0 (LogTarget =
// -Inf): the logs the bootstrap's fast paths are checked on.
func taxiAndRing(t *testing.T) []namedData {
	m, _ := ring.New(5)
	ringData, err := rollout.Sample(rand.New(rand.NewPCG(2, 0)), sim.NewSampler(m), ring.Policy(5, 0.5), ring.Policy(5, 1), 40, 6)
	if err != nil {
		t.Fatal(err)
	}
	return []namedData{{"taxi", taxiData(t, 11, 60, 100)}, {"ring-zero-target", ringData}}
}

// A prepared reweighting gives the same estimate as Estimate on the
// resampled dataset: two independent computations of every bootstrap
// replicate.
func TestReweightMatchesEstimate(t *testing.T) {
	sets := taxiAndRing(t)
	ests := []ope.Estimator{&ope.Naive{}, &ope.TrajectoryIS{}, &ope.TrajectoryWIS{},
		&ope.StepwiseIS{}, &ope.StepwiseWIS{}, ope.DensityRatio{Learner: ratio.Tabular{}}, ope.MIS{}}
	for _, set := range sets {
		for _, gamma := range []float64{1, 0.95} {
			for _, est := range ests {
				f, err := est.(ope.Reweighter).Prepare(set.d, gamma)
				if err != nil {
					if _, err2 := est.Estimate(set.d, gamma); err2 == nil {
						t.Errorf("%s %s gamma %v: Prepare fails (%v) but Estimate does not", set.name, est.Name(), gamma, err)
					}
					continue
				}
				rng := rand.New(rand.NewPCG(5, 5))
				compared := 0
				for r := range 10 {
					n := set.d.NumEpisodes()
					idx := make([]int, n)
					mult := make([]int, n)
					for i := range idx {
						idx[i] = rng.IntN(n)
						mult[idx[i]]++
					}
					got, err := f(mult)
					want, err2 := est.Estimate(set.d.Subset(idx), gamma)
					if err != nil || err2 != nil {
						if err2 == nil && err != ope.ErrReweight {
							t.Errorf("%s %s gamma %v resample %d: %v", set.name, est.Name(), gamma, r, err)
						}
						continue
					}
					compared++
					tol := 1e-12
					if est.Name() == "bch-tabular" {
						tol = 1e-7
					}
					if math.Abs(got-want.Value) > tol*math.Max(1, math.Abs(want.Value)) {
						t.Errorf("%s %s gamma %v resample %d: reweighted %.15g, resampled %.15g", set.name, est.Name(), gamma, r, got, want.Value)
					}
				}
				if compared == 0 {
					t.Errorf("%s %s gamma %v: nothing compared", set.name, est.Name(), gamma)
				}
			}
		}
	}
}

// unequalData returns Taxi logs with episodes of different lengths.
func unequalData(t *testing.T) *dataset.Dataset {
	full := taxiData(t, 12, 40, 80)
	eps := full.Episodes()
	for i := range eps {
		eps[i].Steps = eps[i].Steps[:20+(i*7)%61]
	}
	d, err := dataset.New(full.NumStates, full.NumActions, eps)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// With unequal lengths the prepared reweighting still matches Estimate.
func TestReweightUnequalLengths(t *testing.T) {
	d := unequalData(t)
	for _, gamma := range []float64{1, 0.9} {
		for _, est := range []ope.Estimator{&ope.Naive{}, &ope.TrajectoryWIS{}, &ope.StepwiseIS{}, &ope.StepwiseWIS{}, ope.DensityRatio{Learner: ratio.Tabular{}}} {
			f, err := est.(ope.Reweighter).Prepare(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			for r := range 5 {
				idx := make([]int, d.NumEpisodes())
				mult := make([]int, d.NumEpisodes())
				for i := range idx {
					idx[i] = rng.IntN(len(idx))
					mult[idx[i]]++
				}
				got, err := f(mult)
				want, err2 := est.Estimate(d.Subset(idx), gamma)
				if err != nil || err2 != nil {
					t.Fatalf("%s: %v %v", est.Name(), err, err2)
				}
				// bch-tabular solves iteratively (relative residual 1e-12),
				// so two summation orders agree to about 1e-8.
				tol := 1e-12
				if est.Name() == "bch-tabular" {
					tol = 1e-7
				}
				if math.Abs(got-want.Value) > tol {
					t.Errorf("%s gamma %v resample %d: %.15g vs %.15g", est.Name(), gamma, r, got, want.Value)
				}
			}
		}
	}
}

// A constant reward is estimated exactly by every self-normalised
// estimator, whatever the episode lengths and weights.
func TestConstantRewardUnequalLengths(t *testing.T) {
	d := unequalData(t)
	for j := range d.Reward {
		d.Reward[j] = -2.5
	}
	for _, gamma := range []float64{1, 0.9} {
		for _, est := range []ope.Estimator{&ope.Naive{}, &ope.TrajectoryWIS{}, &ope.StepwiseWIS{}, ope.DensityRatio{Learner: ratio.Tabular{}}} {
			res, err := est.Estimate(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(res.Value+2.5) > 1e-12 {
				t.Errorf("%s gamma %v: %.15g, want -2.5", est.Name(), gamma, res.Value)
			}
			sum := 0.0
			for _, w := range res.Weights {
				sum += w
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("%s gamma %v: weights sum to %v", est.Name(), gamma, sum)
			}
		}
	}
}
