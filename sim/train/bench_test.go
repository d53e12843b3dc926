package train

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// BenchmarkQLearningTaxi times one full run of the paper's recipe on Taxi:
// 1000 iterations of 5000 steps, with snapshots at 950 and 1000.
func BenchmarkQLearningTaxi(b *testing.B) {
	e := sim.NewSampler(taxi.New())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := (QLearning{}).Run(rand.New(rand.NewPCG(uint64(i), 0)), e, []int{950, 1000}); err != nil {
			b.Fatal(err)
		}
	}
}
