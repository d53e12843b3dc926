package stream_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/stream"
	"github.com/ihope-ope/ihope/value"
)

// fitted is a ratio learner that returns a model fitted before.
type fitted struct{ m ratio.Model }

func (fitted) Name() string                                         { return "neural" }
func (f fitted) Fit(*dataset.Dataset, float64) (ratio.Model, error) { return f.m, nil }

// bch-neural streams in two passes: the first draws a sample of whole
// episodes (ope.ReservoirEpisodes) and trains the ensemble on it, the
// second evaluates the networks at every step. The estimate equals the
// in-memory ensemble trained on the same sample and weighing every step
// of the concatenated log (its interquartile mean over the networks
// included), up to the order of summation; the members' own estimates
// too.
func TestStreamNeuralEqualsInMemory(t *testing.T) {
	for _, gamma := range []float64{1, 0.95} {
		d := linearGaussLog(t, 8, 30, 80)
		whole, glob := splitCSV(t, d, 10)
		full, err := logio.ReadFile(whole)
		if err != nil {
			t.Fatal(err)
		}
		const seed, reservoir = 5, 700
		opts := ope.Options{Seed: seed, Restarts: 4, Reservoir: reservoir, Neural: ratio.Neural{MaxIter: 150, BatchSize: 128}}
		res := run(t, glob, stream.Config{Estimators: []string{"bch-neural"}, Gamma: gamma, Resamples: 6, Seed: 1, Options: opts})
		got := res.Estimates[0]
		if got.Err != nil {
			t.Fatal(got.Err)
		}
		idx := ope.ReservoirEpisodes(full, seed, reservoir)
		if n := full.Subset(idx).NumSteps(); len(idx) != 9 || n != 720 {
			t.Fatalf("sample of %d episodes, %d steps", len(idx), n)
		}
		m, err := ratio.Ensemble{Learner: opts.Neural, Restarts: 4, Seed: seed}.Fit(full.Subset(idx), gamma)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ope.DensityRatio{Learner: fitted{m}}.Estimate(full, gamma)
		if err != nil {
			t.Fatal(err)
		}
		if r := rel(got.Result.Value, want.Value); r > 1e-12 {
			t.Errorf("gamma %v: stream %v, in memory %v (relative %.2g)", gamma, got.Result.Value, want.Value, r)
		}
		for k, w := range want.Restarts {
			if r := rel(got.Result.Restarts[k], w); r > 1e-12 {
				t.Errorf("gamma %v: restart %d: stream %v, in memory %v", gamma, k, got.Result.Restarts[k], w)
			}
		}
		if r := rel(got.Result.Transient, want.Transient); r > 1e-9 {
			t.Errorf("gamma %v: transient %v, in memory %v", gamma, got.Result.Transient, want.Transient)
		}
		if r := rel(got.Result.TransientSE, want.TransientSE); !(want.TransientSE > 0) || r > 1e-9 {
			t.Errorf("gamma %v: transient's SE %v, in memory %v", gamma, got.Result.TransientSE, want.TransientSE)
		}
		if ess := ope.KishESS(want.Weights); rel(got.Weights.ESS, ess) > 1e-9 {
			t.Errorf("gamma %v: ESS %v, in memory %v", gamma, got.Weights.ESS, ess)
		}
		if share := ope.MaxShare(want.Weights); got.Weights.MaxShare < share*(1-1e-9) {
			t.Errorf("gamma %v: max share %v below in memory %v", gamma, got.Weights.MaxShare, share)
		}
		if iv := got.Interval; iv == nil || iv.Failures != 0 || !(iv.Low <= got.Result.Value && got.Result.Value <= iv.High) {
			t.Errorf("gamma %v: interval %+v around %v", gamma, iv, got.Result.Value)
		}
		t.Logf("gamma %v: stream %v, in memory %v (relative %.2g); max share %.4g (in memory %.4g)", gamma, got.Result.Value, want.Value,
			rel(got.Result.Value, want.Value), got.Weights.MaxShare, ope.MaxShare(want.Weights))
	}
	if err := stream.Movable("bch-neural", ope.Options{}); err == nil || !strings.Contains(err.Error(), "no encoding") {
		t.Errorf("Movable: %v", err)
	}
}

// fittedValue is a value learner that returns a model fitted before.
type fittedValue struct{ m value.Model }

func (fittedValue) Name() string { return "neural" }
func (f fittedValue) Fit(*dataset.Dataset, float64, value.Target) (value.Model, error) {
	return f.m, nil
}

// fittedPair is a state-action ratio learner that returns a model
// fitted before.
type fittedPair struct {
	name string
	m    ratio.PairModel
}

func (f fittedPair) Name() string { return f.name }
func (f fittedPair) FitPairs(*dataset.Dataset, float64, value.Target) (ratio.PairModel, error) {
	return f.m, nil
}

// The neural forms of fqe (--value-model neural), mql (--value-model
// neural), mwl and dualdice (--ratio-model neural) stream as bch-neural
// does: trained at the end of the first pass on its sample of whole
// episodes, evaluated on every step in the second. The estimate equals
// the in-memory estimator whose model is fitted on the same sample
// (ope.ReservoirEpisodes) and evaluated on the whole concatenated log, up
// to the order of summation; so do the weights' ESS and largest share
// (mwl, dualdice), and the Poisson bootstrap's interval equals
// ope.Bootstrap's on that log with that model kept fixed (the stream's
// copies keep the model trained on the sample). mql's estimate in memory
// is startValue under the long-run estimand, which is fqe's with that
// estimand, so fqe stands in for it with mql's model. fqe's neural
// learner does not fit gamma = 1 (nor in memory).
func TestStreamNeuralFormsEqualInMemory(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(3, 0)), behavior, target, 30, 60)
	if err != nil {
		t.Fatal(err)
	}
	for e := 0; e < d.NumEpisodes(); e += 3 { // episodes whose last step has no transition
		d.HasFinal[e], d.HasFinalTarget[e] = false, false
		clear(d.FinalObs[e*d.StateDim : (e+1)*d.StateDim])
		clear(d.FinalTargetProbs[e*d.NumActions : (e+1)*d.NumActions])
	}
	whole, glob := splitCSV(t, d, 10)
	full, err := logio.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := full.NextObs(0, full.Len(0)-1); ok {
		t.Fatal("the first episode's last step has a next state")
	}
	const seed, reservoir, B, bseed = 5, 700, 8, 2
	idx := ope.ReservoirEpisodes(full, seed, reservoir)
	sample := full.Subset(idx)
	if len(idx) != 12 || sample.NumSteps() != 720 {
		t.Fatalf("sample of %d episodes, %d steps", len(idx), sample.NumSteps())
	}
	opts := ope.Options{Seed: seed, Reservoir: reservoir,
		ValueNeural: value.Neural{MaxIter: 300, BatchSize: 64, EvalEvery: 100},
		Minimax:     value.MinimaxNeural{MaxIter: 60, BatchSize: 128, EvalEvery: 20}}
	for _, c := range []struct {
		name  string
		ratio bool // --ratio-model neural, else --value-model neural
		est   ope.Estimand
		gamma float64
	}{
		{"fqe", false, ope.LongRun, 0.95},
		{"fqe", false, ope.LongRun, 0.9},
		{"mql", false, "", 1},
		{"mql", false, "", 0.95},
		{"mwl", true, "", 1},
		{"mwl", true, "", 0.95},
		{"dualdice", true, "", 1},
		{"dualdice", true, "", 0.95},
	} {
		t.Run(strings.Join(strings.Fields(fmt.Sprintf("%s %s gamma %v", c.name, c.est, c.gamma)), " "), func(t *testing.T) {
			o := opts
			o.Estimand = c.est
			if c.ratio {
				o.RatioModel = "neural"
			} else {
				o.ValueModel = "neural"
			}
			res := run(t, glob, stream.Config{Estimators: []string{c.name}, Gamma: c.gamma, Resamples: B, Seed: bseed, Options: o})
			got := res.Estimates[0]
			if got.Err != nil {
				t.Fatal(got.Err)
			}
			ests, err := ope.New([]string{c.name}, o)
			if err != nil {
				t.Fatal(err)
			}
			var mem ope.Estimator
			switch e := ests[0].(type) {
			case ope.FQE:
				m, err := e.Value.Fit(sample, c.gamma, e.Target)
				if err != nil {
					t.Fatal(err)
				}
				mem = ope.FQE{Value: fittedValue{m}, Target: e.Target, Estimand: e.Estimand}
			case ope.MinimaxQ:
				m, err := e.Value.Fit(sample, c.gamma, e.Target)
				if err != nil {
					t.Fatal(err)
				}
				mem = ope.FQE{Value: fittedValue{m}, Target: e.Target, Estimand: ope.LongRun}
			case ope.PairRatio:
				m, err := e.Learner.FitPairs(sample, c.gamma, e.Target)
				if err != nil {
					t.Fatal(err)
				}
				mem = ope.PairRatio{Learner: fittedPair{c.name, m}, Target: e.Target, Normalise: e.Normalise}
			default:
				t.Fatalf("%T", e)
			}
			want, err := mem.Estimate(full, c.gamma)
			if err != nil {
				t.Fatal(err)
			}
			if r := rel(got.Result.Value, want.Value); r > 1e-12 {
				t.Errorf("stream %v, in memory %v (relative %.2g)", got.Result.Value, want.Value, r)
			}
			if got.Result.Estimand != want.Estimand || got.Result.Learner != "neural" {
				t.Errorf("estimand %s (in memory %s), learner %q", got.Result.Estimand, want.Estimand, got.Result.Learner)
			}
			if w := want.Weights; w != nil {
				if ess := ope.KishESS(w); rel(got.Weights.ESS, ess) > 1e-9 {
					t.Errorf("ESS %v, in memory %v", got.Weights.ESS, ess)
				}
				if share := ope.MaxShare(w); rel(got.Weights.MaxShare, share) > 1e-9 {
					t.Errorf("max share %v, in memory %v", got.Weights.MaxShare, share)
				}
				if got.Weights.Units != len(w) {
					t.Errorf("%d units, in memory %d", got.Weights.Units, len(w))
				}
			}
			bs := ope.Bootstrap{Resamples: B, Seed: bseed, Poisson: true, Workers: 2}
			ivs, err := bs.Run(full, c.gamma, []ope.Estimator{mem})
			if err != nil {
				t.Fatal(err)
			}
			iv := got.Interval
			if iv == nil || iv.Method != ivs[0].Method || iv.Failures != ivs[0].Failures ||
				rel(iv.Low, ivs[0].Low) > 1e-12 || rel(iv.High, ivs[0].High) > 1e-12 {
				t.Errorf("stream interval %+v, in-memory Poisson bootstrap [%v, %v] %s", iv, ivs[0].Low, ivs[0].High, ivs[0].Method)
			}
			if !strings.Contains(strings.Join(got.Result.Warnings, "\n"), "trained on a sample of 12 episodes (720 steps)") {
				t.Errorf("warnings %q", got.Result.Warnings)
			}
			t.Logf("stream %v, in memory %v (relative %.2g); interval [%v, %v]", got.Result.Value, want.Value, rel(got.Result.Value, want.Value), iv.Low, iv.High)
		})
	}
	// fqe's neural learner fits no gamma = 1, streamed or not.
	res := run(t, glob, stream.Config{Estimators: []string{"fqe"}, Gamma: 1, Options: ope.Options{ValueModel: "neural", Reservoir: reservoir, Estimand: ope.LongRun}})
	if err := res.Estimates[0].Err; err == nil || !strings.Contains(err.Error(), "gamma = 1") {
		t.Errorf("fqe neural, gamma 1: %v", err)
	}
	// Nor the horizon value: its network is stationary.
	if _, err := stream.New(stream.Config{Estimators: []string{"fqe"}, Gamma: 0.95, Options: ope.Options{ValueModel: "neural", Reservoir: reservoir, Estimand: ope.Horizon}}); err == nil || !strings.Contains(err.Error(), "stationary") {
		t.Errorf("fqe neural under horizon: %v", err)
	}
	for _, name := range []string{"fqe", "mql", "mwl", "dualdice"} {
		if err := stream.Movable(name, ope.Options{ValueModel: "neural", RatioModel: "neural", Estimand: ope.LongRun}); err == nil || !strings.Contains(err.Error(), "no encoding") {
			t.Errorf("%s: Movable: %v", name, err)
		}
	}
}
