package behavior_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/ihope-ope/ihope/behavior"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// A log without behavior probabilities: fit them by counts, each
// episode's from the other episodes' actions, and hand them to the
// estimators.
func ExampleCrossFit() {
	const logs = "episode,t,state,action,reward,target_prob\n" +
		"a,0,0,0,1,0.5\na,1,0,0,1,0.5\n" +
		"b,0,0,1,0,0.5\nb,1,1,0,0,0.5\n"
	d, err := logio.ReadCSV(strings.NewReader(logs), "logs.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("logged:", d.HasBehavior())
	lp, err := behavior.CrossFit(behavior.Counts{}, d, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for j, l := range lp {
		fmt.Printf("step %d: state %d, action %d, pi0 %.4f\n", j, d.State[j], d.Action[j], math.Exp(l))
	}
	fitted, err := d.WithBehavior(lp)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("fitted:", fitted.HasBehavior())
	// Output:
	// logged: false
	// step 0: state 0, action 0, pi0 0.2500
	// step 1: state 0, action 0, pi0 0.2500
	// step 2: state 0, action 1, pi0 0.1667
	// step 3: state 1, action 0, pi0 0.5000
	// fitted: true
}
