package stream_test

import (
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/stream"
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
		full, err := dataset.ReadFile(whole)
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
	if err := stream.Movable("bch-neural"); err == nil || !strings.Contains(err.Error(), "no encoding") {
		t.Errorf("Movable: %v", err)
	}
}
