package evaluate_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pointmass"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/stream"
)

// One protocol: every registered estimator that streams gives, on a log
// in memory and on the same log as one shard, the same estimate and the
// same interval to 1e-12 (relative), on discrete and real states, under
// both estimands (IHOPE_STAT=1: and two discounts). The list is the registry's
// (stream.Streamable), not kept by hand: an estimator added to it is
// tested here.
func TestMemoryEqualsOneShard(t *testing.T) {
	pi19, _ := taxi.Policy("pi19")
	pi18, _ := taxi.Policy("pi18")
	discrete, err := rollout.Sample(rand.New(rand.NewPCG(3, 0)), sim.NewSampler(taxi.New()), pi18, pi19, 24, 60)
	if err != nil {
		t.Fatal(err)
	}
	p := lineargauss.Problem1D()
	real, err := rollout.SampleContinuous(rand.New(rand.NewPCG(4, 0)), p.System, p.Behavior, p.Target, 24, 60)
	if err != nil {
		t.Fatal(err)
	}
	sys, target, behavior := pointmass.Problem()
	actions, err := sys.Sample(rand.New(rand.NewPCG(5, 0)), behavior, target, 24, 60)
	if err != nil {
		t.Fatal(err)
	}
	gammas := []float64{0.95} // IHOPE_STAT=1: the average reward too
	resamples := 10           // IHOPE_STAT=1: 40
	if testsets.Stat() {
		gammas, resamples = append(gammas, 1), 40
	}
	tested := map[string]int{}
	for _, log := range []struct {
		name    string
		d       *dataset.Dataset
		targets []evaluate.Target // the target's whole distribution, for the tabular learners
	}{
		{"taxi", discrete, []evaluate.Target{{Policy: pi19, File: "pi19"}}},
		{"linear-Gaussian (real actions)", real, nil},
		{"point mass (discrete actions)", actions, nil},
	} {
		file := filepath.Join(t.TempDir(), "log.parquet")
		if err := logio.WriteFile(file, log.d); err != nil {
			t.Fatal(err)
		}
		for _, estimand := range []string{"horizon", "long-run"} {
			for _, gamma := range gammas {
				for _, name := range streamed() {
					o := evaluate.Defaults()
					o.Estimators, o.Gamma, o.Estimand, o.Bootstrap, o.Seed = []string{name}, gamma, estimand, resamples, 5
					ev, err := evaluate.New(o)
					if err != nil {
						t.Fatal(err)
					}
					shard, err := ev.EvaluateShards([]string{file}, logio.ReadOptions{}, file, log.targets, nil)
					if err != nil {
						continue // it does not stream on this log (a form that does not, or an estimand it does not give)
					}
					mem, err := ev.Evaluate(log.d, file, log.targets, nil)
					if err != nil {
						t.Errorf("%s %s %s γ %g: in memory: %v", log.name, name, estimand, gamma, err)
						continue
					}
					a, b := mem.Estimates[0], shard.Estimates[0]
					if b.Estimate == nil {
						continue // it failed as one shard; in memory it may not
					}
					if a.Model != b.Model && strings.HasPrefix(a.Model, b.Model+"/") {
						// In memory bch-kernel tests its loss against fqe's
						// fitted value ("kernel/linear"), which a stream has
						// only after its second pass (ope.DensityRatio.ValueTest).
						continue
					}
					tested[name]++

					if a.Estimate == nil || rel(*a.Estimate, *b.Estimate) > 1e-12 {
						t.Errorf("%s %s %s γ %g: estimate %v in memory, %v as one shard", log.name, name, estimand, gamma, ptr(a.Estimate), ptr(b.Estimate))
						continue
					}
					if a.CILow == nil || b.CILow == nil || rel(*a.CILow, *b.CILow) > 1e-12 || rel(*a.CIHigh, *b.CIHigh) > 1e-12 {
						t.Errorf("%s %s %s γ %g: interval [%v, %v] in memory, [%v, %v] as one shard", log.name, name, estimand, gamma,
							ptr(a.CILow), ptr(a.CIHigh), ptr(b.CILow), ptr(b.CIHigh))
					}
				}
			}
		}
	}
	for _, name := range streamed() {
		if tested[name] == 0 {
			t.Errorf("%s streams but was compared on none of the logs", name)
		}
	}
	t.Logf("compared: %v", tested)
}

// streamed lists the estimators that stream with statistics that are sums
// (stream.Streamable), leaving out those whose streamed statistics hold a
// model trained in the process (bch-neural: stream.Movable refuses it),
// which in memory retrain on every resample.
func streamed() []string {
	var out []string
	for _, name := range stream.Streamable() {
		if stream.Movable(name, ope.Options{}) == nil {
			out = append(out, name)
		}
	}
	return out
}

func rel(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}

func ptr(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
