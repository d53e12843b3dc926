package evaluate_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// BenchmarkDefaultRealStates is ihope estimate without flags on a
// real-state log of 150,000 steps (the 1-d linear-Gaussian system, 150
// episodes of 1,000 steps): the default set of the horizon value with 200
// bootstrap resamples.
func BenchmarkDefaultRealStates(b *testing.B) {
	p := lineargauss.Problem1D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(1, 0)), p.System, p.Behavior, p.Target, 150, 1000)
	if err != nil {
		b.Fatal(err)
	}
	benchDefault(b, d)
}

// BenchmarkDefaultOneEpisode is ihope estimate without flags on one
// real-state episode of 150,000 steps (the 1-d linear-Gaussian system):
// the long-run default set (bch-kernel, bch-neural) with 200 resamples.
func BenchmarkDefaultOneEpisode(b *testing.B) {
	d, _ := gaussLog(b, 1, 150000, 1)
	benchDefault(b, d)
}

// benchDefault evaluates d with the default options, every row with an
// estimate to have its interval.
func benchDefault(b *testing.B, d *dataset.Dataset) {
	b.ReportAllocs()
	for b.Loop() {
		ev, err := evaluate.New(evaluate.Defaults())
		if err != nil {
			b.Fatal(err)
		}
		rep, err := ev.Evaluate(d, "bench", nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Estimates {
			if r.Estimate != nil && r.CILow == nil {
				b.Fatalf("%s: no interval", r.Estimator)
			}
		}
	}
}
