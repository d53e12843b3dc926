package cobs_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/sim/cobs"
)

// The exact truths of COBS's Graph: the expected discounted return of
// each policy level over the 16 steps of an episode, and the target's
// normalised value (ihope's horizon estimand).
func ExampleGraph() {
	g := cobs.NewDefaultGraph()
	for k := range cobs.NumLevels {
		pi := g.Policy(cobs.Level(k))
		fmt.Printf("P(A0) = %.3f: return %+.6f\n", cobs.Level(k), mdp.Return(g, pi, nil, cobs.GraphLength, cobs.GraphGamma))
	}
	fmt.Printf("target, normalised: %.6f\n", mdp.Value(g, g.Target(), nil, cobs.GraphLength, cobs.GraphGamma))
	// Output:
	// P(A0) = 0.001: return -6.891247
	// P(A0) = 0.200: return -4.143034
	// P(A0) = 0.400: return -1.381011
	// P(A0) = 0.600: return +1.381011
	// P(A0) = 0.800: return +4.143034
	// target, normalised: -0.300000
}

// The truths of the four worlds for their targets.
func Example() {
	g, mc, mf, mw := cobs.NewDefaultGraph(), cobs.NewToyMC(), cobs.NewModelFail(), cobs.NewModelWin()
	fmt.Printf("Graph     %.6f\n", mdp.Return(g, g.Target(), nil, cobs.GraphLength, cobs.GraphGamma))
	fmt.Printf("ToyMC     %.6f\n", mdp.Return(mc, mc.Target(), nil, cobs.ToyMCHorizon, cobs.ToyMCGamma))
	fmt.Printf("ModelFail %.6f\n", mdp.Return(mf, mf.Target(), nil, cobs.ModelFailHorizon, cobs.ModelGamma))
	fmt.Printf("ModelWin  %.6f\n", mdp.Return(mw, mw.Target(), nil, cobs.ModelWinHorizon, cobs.ModelGamma))
	// Output:
	// Graph     -4.143034
	// ToyMC     -91.894130
	// ModelFail -1.200000
	// ModelWin  1.200000
}
