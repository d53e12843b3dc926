package ratio

import (
	"fmt"
	"testing"

	"github.com/ihope-ope/ihope/sim/taxi"
)

// BenchmarkMarginalTaxi times Fit and StepRatios of the marginal ratios
// on the paper's default Taxi setting (200 episodes of 400 steps, pi18
// logs, pi19 target), where the model takes its sparse form, and on 2500
// such episodes (1,000,000 steps), where it takes the dense one.
func BenchmarkMarginalTaxi(b *testing.B) {
	target, behavior := taxiPolicies(b)
	for _, n := range []int{200, 2500} {
		d := sample(b, 1, taxi.New(), behavior, target, n, 400)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
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
		})
	}
}
