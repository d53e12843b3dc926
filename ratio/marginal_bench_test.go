package ratio

import (
	"testing"

	"github.com/ihope-ope/ihope/env/taxi"
)

// BenchmarkMarginalTaxi times Fit and StepRatios of the marginal ratios
// on the paper's default Taxi setting (200 episodes of 400 steps, pi18
// logs, pi19 target).
func BenchmarkMarginalTaxi(b *testing.B) {
	target, behavior := taxiPolicies(b)
	d := sample(b, 1, taxi.New(), behavior, target, 200, 400)
	b.ReportAllocs()
	for b.Loop() {
		m, err := Marginal{}.Fit(d, 1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.StepRatios(d); err != nil {
			b.Fatal(err)
		}
	}
}
