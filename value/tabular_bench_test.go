package value

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// BenchmarkTabularTaxi times Fit and Values on the paper's default Taxi
// setting: 200 episodes of 400 steps logged by pi18, target pi19 (2000
// states, 80,000 transitions). The targets are about 30 ms for a
// stationary fit and 50 ms for a finite-horizon one (H = 400), Values
// included.
func BenchmarkTabularTaxi(b *testing.B) {
	m := taxi.New()
	pi, err := taxi.Policy(taxi.DefaultTarget)
	if err != nil {
		b.Fatal(err)
	}
	pi0, err := taxi.Policy(taxi.DefaultBehavior)
	if err != nil {
		b.Fatal(err)
	}
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(m), pi0, pi, 200, 400)
	if err != nil {
		b.Fatal(err)
	}
	for _, finite := range []bool{false, true} {
		for _, gamma := range []float64{0.99, 1} {
			name := fmt.Sprintf("stationary/gamma=%v", gamma)
			if finite {
				name = fmt.Sprintf("finite/gamma=%v", gamma)
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				var it int
				for b.Loop() {
					mod, err := Tabular{Finite: finite}.Fit(d, gamma, Target{Policy: pi})
					if err != nil {
						b.Fatal(err)
					}
					if _, _, _, err := mod.Values(d); err != nil {
						b.Fatal(err)
					}
					it = mod.(*TabularModel).Iterations
				}
				b.ReportMetric(float64(it), "iters")
			})
		}
	}
}
