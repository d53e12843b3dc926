package ratio_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// Learn the density ratio on the 5-state ring from 200 logged episodes.
// Every policy that picks R with the same probability in every state has
// the uniform stationary distribution, so the true ratio is 1 everywhere.
func ExampleTabular_Fit() {
	m, err := ring.New(5)
	if err != nil {
		log.Fatal(err)
	}
	behavior, target := ring.Policy(5, 0.3), ring.Policy(5, 0.7)
	rng := rand.New(rand.NewPCG(1, 0))
	d, err := rollout.Sample(rng, sim.NewSampler(m), behavior, target, 200, 50)
	if err != nil {
		log.Fatal(err)
	}
	fit, err := ratio.Tabular{}.Fit(d, 1)
	if err != nil {
		log.Fatal(err)
	}
	model := fit.(*ratio.TabularModel)
	for s := range 5 {
		fmt.Printf("w(%d) = %.2f\n", s, model.Ratio(s))
	}
	fmt.Println("negative entries:", model.Negative)
	// Output:
	// w(0) = 1.00
	// w(1) = 1.04
	// w(2) = 1.03
	// w(3) = 0.97
	// w(4) = 0.96
	// negative entries: 0
}

// Solve a problem given by aggregated transition weights: 0 -> 1 with
// beta = 2 and 1 -> 0 with beta = 1/2 balance when 2 w(0) = w(1), and the
// normalisation (w(0) + w(1))/2 = 1 fixes the scale.
func ExampleTabular_Solve() {
	c := &ratio.Counts{
		NumStates: 2,
		Edges: []ratio.Edge{
			{From: 0, To: 1, Weight: 1, RatioWeight: 2},
			{From: 1, To: 0, Weight: 1, RatioWeight: 0.5},
		},
		Norm: []float64{1, 1},
	}
	model, err := ratio.Tabular{}.Solve(c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("w = %.4f, loss %.6f\n", model.W, model.Loss)
	// Output:
	// w = [0.6667 1.3333], loss 0.000000
}

// The weighted total-variation distance between w d_pi0 and d_pi.
func ExampleTV() {
	w := []float64{2, 0}
	dPi0 := []float64{0.5, 0.5}
	dPi := []float64{0.25, 0.75}
	fmt.Println(ratio.TV(w, dPi0, dPi))
	// Output:
	// 0.75
}
