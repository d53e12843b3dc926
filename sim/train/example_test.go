package train_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/sim/train"
)

// Learn the paper's Taxi target pi_* (1000 iterations) and pi_+ (950)
// along one run, and score them by their exact average reward over 400
// steps.
func ExampleQLearning_Run() {
	m := taxi.New()
	rng := rand.New(rand.NewPCG(1, 0))
	snapshots := []int{950, 1000}
	pis, err := train.QLearning{}.Run(rng, sim.NewSampler(m), snapshots)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, pi := range pis {
		fmt.Printf("iteration %d: average reward %.3f\n", snapshots[i], mdp.Value(m, pi, nil, 400, 1))
	}
	// Output:
	// iteration 950: average reward -0.256
	// iteration 1000: average reward -0.128
}
