package sumo_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/sim/sumo"
)

// A linear softmax policy on one light: a weight of 1 on the number of
// cars waiting to go straight from the north makes the north-south
// straight phase likelier when they queue.
func ExampleLinearSoftmax() {
	w := make([]float64, sumo.NumPhases*sumo.NumFeatures)
	w[0*sumo.NumFeatures+0] = 1 // phase 0, count 0 (north, straight lanes)
	pol, err := sumo.NewLinearSoftmax(1, w, 10, 0.05)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := make([]float64, pol.NumActions())
	for _, north := range []float64{0, 10, 20} {
		obs := []float64{north, 0, 0, 0, 0, 0, 0, 0}
		pol.Probs(obs, p)
		fmt.Printf("%2.0f cars: %.4f\n", north, p)
	}
	// Output:
	//  0 cars: [0.2500 0.2500 0.2500 0.2500]
	// 10 cars: [0.4641 0.1786 0.1786 0.1786]
	// 20 cars: [0.6882 0.1039 0.1039 0.1039]
}

// The signal states of the four actions over a light's 16 links: for the
// approaches from the north, east, south and west, the right turn, the
// two straight lanes and the left turn.
func ExampleGreenState() {
	for a := range sumo.NumPhases {
		fmt.Println(a, sumo.GreenState(a), sumo.YellowState(a))
	}
	// Output:
	// 0 GGGrrrrrGGGrrrrr yyyrrrrryyyrrrrr
	// 1 rrrGrrrrrrrGrrrr rrryrrrrrrryrrrr
	// 2 rrrrGGGrrrrrGGGr rrrryyyrrrrryyyr
	// 3 rrrrrrrGrrrrrrrG rrrrrrryrrrrrrry
}
