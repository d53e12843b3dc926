package ope_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// BenchmarkMinimaxTaxi times mwl, dualdice and mql (fit and estimate)
// on the paper's Taxi setting, n = 200 episodes of T = 400 steps (80,000
// transitions), behavior pi18, target pi19. The target is at most 100 ms
// each on the 2-core reference machine.
func BenchmarkMinimaxTaxi(b *testing.B) {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(taxi.New()), behavior, target, 200, 400)
	if err != nil {
		b.Fatal(err)
	}
	benchEstimators(b, d, ope.Options{Target: target}, []float64{1, 0.99})
}

// BenchmarkMinimaxKernel times the closed-form kernel fits on 150,000
// transitions of the discrete-action linear-Gaussian problem (150
// episodes of 1000 steps). The target is at most 5 s each.
func BenchmarkMinimaxKernel(b *testing.B) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(1, 0)), behavior, target, 150, 1000)
	if err != nil {
		b.Fatal(err)
	}
	benchEstimators(b, d, ope.Options{}, []float64{0.99})
}

func benchEstimators(b *testing.B, d *dataset.Dataset, o ope.Options, gammas []float64) {
	for _, name := range []string{"mwl", "dualdice", "mql"} {
		ests, err := ope.New([]string{name}, o)
		if err != nil {
			b.Fatal(err)
		}
		for _, gamma := range gammas {
			b.Run(fmt.Sprintf("%s/gamma=%v", name, gamma), func(b *testing.B) {
				for b.Loop() {
					if _, err := ests[0].Estimate(d, gamma); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkMinimaxNeural times the neural forms (--ratio-model neural,
// --value-model neural, default settings, train seed 1) on the same
// 150,000 transitions as BenchmarkMinimaxKernel: training is MaxIter
// steps on samples of BatchSize transitions whatever n, and passes over
// the data scale, normalise (w) or profile (q) and evaluate it. Run it with -benchtime=1x: one fit takes seconds.
func BenchmarkMinimaxNeural(b *testing.B) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(1, 0)), behavior, target, 150, 1000)
	if err != nil {
		b.Fatal(err)
	}
	benchEstimators(b, d, ope.Options{Seed: 1, RatioModel: "neural", ValueModel: "neural"}, []float64{0.99})
}
