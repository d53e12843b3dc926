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

// refitResamples evaluates est on each of the B resamples ope.Bootstrap
// draws with seed (episodes drawn with replacement, in d.IDOrder(), from
// the stream PCG(seed, r+1)), rebuilding every resampled log: the slow
// computation the bootstrap's fast paths replace. With poisson, episode i
// appears PoissonCount(seed, id, r) times instead. It returns the
// successful estimates in resample order and the number of failures.
func refitResamples(d *dataset.Dataset, gamma float64, est ope.Estimator, B int, seed uint64, poisson bool) ([]float64, int) {
	order := d.IDOrder()
	var ok []float64
	failed := 0
	for r := range B {
		var idx []int
		if poisson {
			for i, id := range d.IDs {
				for range ope.PoissonCount(seed, id, r) {
					idx = append(idx, i)
				}
			}
		} else {
			rng := rand.New(rand.NewPCG(seed, uint64(r)+1))
			idx = make([]int, d.NumEpisodes())
			for i := range idx {
				idx[i] = order[rng.IntN(len(idx))]
			}
		}
		rd := d.Subset(idx)
		if d.NumTerminal() > 0 {
			rd.Horizon = d.MaxLen() // the log's horizon, as the bootstrap pads
		}
		res, err := est.Estimate(rd, gamma)
		if err != nil || math.IsNaN(res.Value) || math.IsInf(res.Value, 0) {
			failed++
			continue
		}
		ok = append(ok, res.Value)
	}
	return ok, failed
}

// The bootstrap's resample estimates, which the estimators whose
// statistics are sums take from weighted copies of their sums (and mis
// from its reweighted counts), equal Estimate on every rebuilt resample:
// two independent computations of every bootstrap replicate, on logs with
// steps the target never takes and with episodes of unequal lengths.
func TestBootstrapFastPathsMatchRefits(t *testing.T) {
	sets := append(taxiAndRing(t), namedData{"unequal-lengths", unequalData(t)})
	ests := []ope.Estimator{&ope.Naive{}, &ope.TrajectoryIS{}, &ope.TrajectoryWIS{},
		&ope.StepwiseIS{}, &ope.StepwiseWIS{}, ope.DensityRatio{Learner: ratio.Tabular{}}, ope.MIS{}}
	for _, set := range sets {
		for _, c := range []struct {
			gamma   float64
			poisson bool
		}{{1, false}, {0.95, false}, {0.95, true}} {
			bootstrapMatchesRefits(t, set.name, set.d, c.gamma, ests, c.poisson)
		}
	}
}

// bootstrapMatchesRefits checks ope.Bootstrap's resample estimates of
// every estimator against refitResamples.
func bootstrapMatchesRefits(t *testing.T, name string, d *dataset.Dataset, gamma float64, ests []ope.Estimator, poisson bool) {
	t.Helper()
	const B, seed = 10, 5
	b := ope.Bootstrap{Resamples: B, Seed: seed, Workers: 2, Poisson: poisson}
	ivs, err := b.Run(d, gamma, ests)
	if err != nil {
		t.Fatal(err)
	}
	for k, est := range ests {
		want, failed := refitResamples(d, gamma, est, B, seed, poisson)
		got := ivs[k]
		if got.Failures != failed || len(got.Estimates) != len(want) {
			t.Errorf("%s %s gamma %v: %d estimates and %d failures, refits %d and %d (%v)", name, est.Name(), gamma,
				len(got.Estimates), got.Failures, len(want), failed, got.FirstFailure)
			continue
		}
		if len(want) == 0 {
			t.Errorf("%s %s gamma %v: nothing compared", name, est.Name(), gamma)
		}
		// The tabular solves are iterative (relative residual 1e-12), so
		// two summation orders agree to about 1e-8.
		tol := 1e-12
		switch est.Name() {
		case "bch-tabular", "mwl", "mql", "dualdice", "model-based", "fqe", "dr":
			tol = 1e-7
		}
		for r := range want {
			if math.Abs(got.Estimates[r]-want[r]) > tol*math.Max(1, math.Abs(want[r])) {
				t.Errorf("%s %s gamma %v resample %d: bootstrap %.15g, refit %.15g", name, est.Name(), gamma, r, got.Estimates[r], want[r])
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

// BenchmarkBootstrapTaxi times 200 episode resamples of each estimator
// with a fast path on a Taxi log of 200 episodes of 400 steps.
func BenchmarkBootstrapTaxi(b *testing.B) {
	d := taxiData(b, 3, 200, 400)
	for _, est := range []ope.Estimator{&ope.Naive{}, &ope.TrajectoryWIS{}, &ope.StepwiseWIS{},
		ope.DensityRatio{Learner: ratio.Tabular{}}, ope.MIS{}} {
		b.Run(est.Name(), func(b *testing.B) {
			bs := ope.Bootstrap{Resamples: 200, Seed: 1, Workers: 2}
			for b.Loop() {
				if _, err := bs.Run(d, 0.99, []ope.Estimator{est}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
