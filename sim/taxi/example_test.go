package taxi_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// Drive the paper's target policy pi19 and a behavior that mixes it with
// pi18, and compare their average rewards over 400 steps.
func ExamplePolicy() {
	target, err := taxi.Policy(taxi.DefaultTarget)
	if err != nil {
		panic(err)
	}
	other, _ := taxi.Policy(taxi.DefaultBehavior)
	behavior, _ := policy.Mixture(0.5, target, other) // 0.5 pi19 + 0.5 pi18

	sampler := sim.NewSampler(taxi.New())
	rng := rand.New(rand.NewPCG(1, 0))
	for _, pi := range []policy.Discrete{target, behavior} {
		total, steps := 0.0, 0
		for episode := 0; episode < 20; episode++ {
			s := sampler.Reset(rng)
			for t := 0; t < 400; t++ {
				var r float64
				s, r = sampler.Step(rng, s, pi.Sample(rng, s))
				total += r
				steps++
			}
		}
		fmt.Printf("%.2f\n", total/float64(steps))
	}
	x, y := taxi.Corner(3)
	fmt.Println("corner 3 is at", x, y)
	// Output:
	// -0.17
	// -0.20
	// corner 3 is at 4 4
}
