package figure_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/figure"
)

// Every figure draws an estimator with the same colour, marker and
// legend text.
func ExampleEstimatorStyle() {
	for _, name := range []string{"bch-tabular", "wis-stepwise", "on-policy"} {
		s := figure.EstimatorStyle(name)
		fmt.Printf("%-13s %-36q rgb(%d,%d,%d) dashed=%v\n", name, s.Label, s.Color.R, s.Color.G, s.Color.B, s.Dashed)
	}
	// Output:
	// bch-tabular   "density ratio, tabular (paper)"     rgb(200,0,40) dashed=false
	// wis-stepwise  "step-wise WIS"                      rgb(0,114,178) dashed=false
	// on-policy     "on-policy oracle (target rollouts)" rgb(0,0,0) dashed=true
}
