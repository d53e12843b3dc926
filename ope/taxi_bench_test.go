package ope_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/env/taxi"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/rollout"
)

// BenchmarkTaxiEstimators runs every estimator but the on-policy oracle on
// the paper's default Taxi data (n = 200 episodes, T = 400, pi18 behavior,
// pi19 target): the authors' Python pipeline takes about 17 s for this.
func BenchmarkTaxiEstimators(b *testing.B) {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), env.NewSampler(taxi.New()), behavior, target, 200, 400)
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
