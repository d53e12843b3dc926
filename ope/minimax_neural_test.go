package ope_test

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/lineargauss"
)

// The neural forms of mwl, dualdice and mql run from the registry
// (--ratio-model neural, --value-model neural, --train-seed), their rows
// say learner "neural", and the same seed gives bit-identical estimates
// while another seed gives others.
func TestMinimaxNeuralDeterministic(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(1, 7)), behavior, target, 4, 50)
	if err != nil {
		t.Fatal(err)
	}
	small := ope.Options{Estimand: ope.LongRun, RatioModel: "neural", ValueModel: "neural"}
	small.Minimax.Hidden, small.Minimax.BatchSize, small.Minimax.MaxIter, small.Minimax.EvalEvery = []int{8}, 32, 100, 20
	for _, gamma := range []float64{0.9, 1} {
		for _, name := range []string{"mwl", "dualdice", "mql"} {
			var vals []float64
			for _, seed := range []uint64{3, 3, 4} {
				o := small
				o.Seed = seed
				ests, err := ope.New([]string{name}, o)
				if err != nil {
					t.Fatal(err)
				}
				res, err := ests[0].Estimate(d, gamma)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if res.Learner != "neural" {
					t.Errorf("%s: learner %q, want neural", name, res.Learner)
				}
				vals = append(vals, res.Value)
			}
			if math.Float64bits(vals[0]) != math.Float64bits(vals[1]) || vals[0] == vals[2] {
				t.Errorf("gamma %g, %s: seeds 3, 3, 4 give %v", gamma, name, vals)
			}
		}
	}
}

// On the discrete-action linear-Gaussian problem the neural forms come
// within 0.15 of the truth and of their kernel forms (the first version,
// fresh minibatches of 256 and early stopping, was 0.48-0.86 off at
// n = 20: see value.MinimaxNeural). In CI n = 20 episodes of 100 steps
// at gamma = 0.9 with 64 features; with IHOPE_LONG=1
// docs/estimators.md's table (gamma 0.9 and 1, n = 20 and 160, default
// settings).
func TestMinimaxNeuralLearns(t *testing.T) {
	if !testsets.Stat() {
		t.Skip("statistical set: IHOPE_STAT=1 (CI runs it)")
	}
	gammas, ns, o := []float64{0.9}, []int{20}, ope.Options{Seed: 1}
	o.Minimax.Features = 64
	if os.Getenv("IHOPE_LONG") != "" {
		gammas, ns, o = []float64{0.9, 1}, []int{20, 160}, ope.Options{Seed: 1}
	}
	sys, target, behavior := lineargauss.DiscreteProblem()
	for _, gamma := range gammas {
		truth, err := sys.LongRun(target, gamma)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			d, err := sys.Sample(rand.New(rand.NewPCG(1, 7)), behavior, target, n, 100)
			if err != nil {
				t.Fatal(err)
			}
			naive := 0.0
			for _, r := range d.Reward {
				naive += r / float64(len(d.Reward))
			}
			const bar = 0.15
			est := neuralAndKernel(t, d, gamma, o)
			for _, name := range []string{"mwl", "dualdice", "mql"} {
				v := est[name]
				t.Logf("gamma %g, n %d: errors against the truth %.4f: %-9s neural %+.4f  kernel %+.4f  (mean reward %+.4f)",
					gamma, n, truth, name, v[0]-truth, v[1]-truth, naive-truth)
				if !(math.Abs(v[0]-truth) < bar) || !(math.Abs(v[0]-v[1]) < bar) {
					t.Errorf("gamma %g, n %d, %s: neural %v, kernel %v, truth %v: want the neural within %g of both", gamma, n, name, v[0], v[1], truth, bar)
				}
			}
		}
	}
}

// neuralAndKernel returns the neural and kernel estimates of mwl,
// dualdice and mql on d.
func neuralAndKernel(t *testing.T, d *dataset.Dataset, gamma float64, o ope.Options) map[string][2]float64 {
	t.Helper()
	names := []string{"mwl", "dualdice", "mql"}
	o.Estimand, o.RatioModel, o.ValueModel = ope.LongRun, "neural", "neural"
	out := map[string][2]float64{}
	for k, opts := range []ope.Options{o, {Estimand: ope.LongRun}} {
		ests, err := ope.New(names, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ests {
			res, err := e.Estimate(d, gamma)
			if err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			v := out[e.Name()]
			v[k] = res.Value
			out[e.Name()] = v
		}
	}
	return out
}
