package ratio

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// BenchmarkTabularTaxi times Fit (aggregation and solve) on the paper's
// default Taxi setting: 200 episodes of 400 steps logged by pi18, target
// pi19 (2000 states, 80,000 transitions). The target is at most 30 ms per
// fit on the 2-core reference machine.
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
	for _, bc := range []struct {
		gamma float64
		l     Tabular
	}{
		{1, Tabular{}},
		{0.99, Tabular{}},
		{0.99, Tabular{NonNegative: true}},
	} {
		name := fmt.Sprintf("gamma=%v", bc.gamma)
		if bc.l.NonNegative {
			name += "/nonneg"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var it int
			for b.Loop() {
				mod, err := fitTabular(bc.l, d, bc.gamma)
				if err != nil {
					b.Fatal(err)
				}
				it = mod.Iterations
			}
			b.ReportMetric(float64(it), "iters")
		})
	}
}
