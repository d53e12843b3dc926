package ope_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// BenchmarkTaxiEstimators runs every estimator but the on-policy oracle on
// the paper's default Taxi data (n = 200 episodes, T = 400, pi18 behavior,
// pi19 target): the authors' Python pipeline takes about 17 s for this.
func BenchmarkTaxiEstimators(b *testing.B) {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(taxi.New()), behavior, target, 200, 400)
	if err != nil {
		b.Fatal(err)
	}
	ests := []ope.Estimator{&ope.Naive{}, &ope.TrajectoryIS{}, &ope.TrajectoryWIS{}, &ope.StepwiseIS{},
		&ope.StepwiseWIS{}, &ope.ModelBased{Target: target}, ope.DensityRatio{Learner: ratio.Tabular{}}}
	for _, gamma := range []float64{1, 0.99} {
		name := "average"
		if gamma < 1 {
			name = "discounted"
		}
		b.Run(name+"/all", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, e := range ests {
					if _, err := e.Estimate(d, gamma); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(name+"/bch-tabular", func(b *testing.B) {
			b.ReportAllocs()
			e := ope.DensityRatio{Learner: ratio.Tabular{}}
			for b.Loop() {
				if _, err := e.Estimate(d, gamma); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTaxiValueEstimators times fqe (tabular) and dr (2 folds) on the
// same data under both estimands; the target is 50 ms each.
func BenchmarkTaxiValueEstimators(b *testing.B) {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(taxi.New()), behavior, target, 200, 400)
	if err != nil {
		b.Fatal(err)
	}
	for _, est := range []ope.Estimand{ope.Horizon, ope.LongRun} {
		for _, gamma := range []float64{1, 0.99} {
			ests, err := ope.New([]string{"fqe", "mis", "dr"}, ope.Options{Target: target, Estimand: est})
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range ests {
				if est == ope.LongRun && e.Name() == "mis" {
					continue
				}
				b.Run(fmt.Sprintf("%s/gamma=%g/%s", est, gamma, e.Name()), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, err := e.Estimate(d, gamma); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
