package ope_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/value"
)

// A continuing log (one long episode of tinyMDP from state 0): the
// estimators that weigh episodes against each other (the IS family and
// mis, whose ratio at step t is counted over the episodes' steps t)
// refuse it by name; dr runs under the horizon estimand with the
// stationary ratio and lands on the exact T-step value from the logged
// start as fqe does; and at gamma < 1 the estimators that weigh step t by
// gamma^t warn that they rest on the episode's first steps.
func TestOneEpisode(t *testing.T) {
	pi0, pi := tinyPolicies(t)
	world := tinyTable{[2]float64{1, 0}}
	const T = 40000
	d, err := rollout.Sample(rand.New(rand.NewPCG(3, 0)), sim.NewSampler(world), pi0, pi, 1, T)
	if err != nil {
		t.Fatal(err)
	}
	truth := mdp.Value(world, pi, nil, T, 1)
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

// spikeRatio is a ratio learner whose w is 1e6 on the first episode's
// steps and 1 elsewhere: weights that collapse onto one episode's steps
// (a spike at one step alone would be tamed by the horizon form's
// normalisation at each t).
type spikeRatio struct{}

func (spikeRatio) Name() string { return "spike" }
func (spikeRatio) Fit(*dataset.Dataset, float64) (ratio.Model, error) {
	return spikeModel{}, nil
}

type spikeModel struct{}

func (spikeModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	w := make([]float64, d.NumSteps())
	for j := range w {
		w[j] = 1
	}
	lo, hi := d.Span(0)
	for j := lo; j < hi; j++ {
		w[j] = 1e6
	}
	return w, nil
}

// dr warns when its correction's weights collapse onto a few steps, and
// not with its default ratio on a log that supports it.
func TestDRCorrectionCollapse(t *testing.T) {
	pi0, pi := tinyPolicies(t)
	d, err := rollout.Sample(rand.New(rand.NewPCG(4, 0)), sim.NewSampler(tinyTable{[2]float64{0.5, 0.5}}), pi0, pi, 400, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ratio ratio.Learner
		warn  bool
	}{{nil, false}, {spikeRatio{}, true}} {
		for _, est := range []ope.Estimand{ope.Horizon, ope.LongRun} {
			r, err := ope.DR{Ratio: c.ratio, Target: value.Target{Policy: pi}, Estimand: est}.Estimate(d, 1)
			if err != nil {
				t.Fatal(err)
			}
			if warned := strings.Contains(strings.Join(r.Warnings, "\n"), "ratio's weights collapse"); warned != c.warn {
				t.Errorf("ratio %v, %s: warnings %q", c.ratio, est, r.Warnings)
			}
		}
	}
}

// The streamed bch-tabular keeps the ESS of the in-memory one on a long
// discounted episode, where gamma^2t underflows for the late steps (it
// used to lose it: Inf * 0 in its per-state sum of squares), and gives
// the same one-episode warning.
func TestRatioSumsLongEpisode(t *testing.T) {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(taxi.New()), behavior, target, 1, 20000)
	if err != nil {
		t.Fatal(err)
	}
	e := ope.DensityRatio{Learner: ratio.Tabular{}}
	mem, err := e.Estimate(d, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	got, ws, err := sumsOf(t, e, d, 0.9, 0, 1, nil).Finish(0)
	if err != nil {
		t.Fatal(err)
	}
	want := ope.KishESS(mem.Weights)
	if !relClose(got.Value, mem.Value, 1e-12) || !relClose(ws.ESS, want, 1e-9) {
		t.Errorf("stream %.15g (ESS %v), in memory %.15g (ESS %v)", got.Value, ws.ESS, mem.Value, want)
	}
	if !strings.Contains(strings.Join(got.Warnings, "\n"), "one episode with gamma = 0.9") {
		t.Errorf("stream warnings %q", got.Warnings)
	}
}
