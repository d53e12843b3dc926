package train

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/env/pendulum"
)

func BenchmarkReinforceIteration(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	init, _ := pendulum.NewPolicy(rng, 32, 0.5)
	r := Reinforce{Iterations: 1}
	for b.Loop() {
		if _, err := r.Run(rng, pendulum.Pendulum{}, init, nil); err != nil {
			b.Fatal(err)
		}
	}
}
