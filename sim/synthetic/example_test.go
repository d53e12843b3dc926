package synthetic_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/sim/synthetic"
)

// The pinned truth of the default target (the myopic greedy policy) on
// SCOPE-RL's synthetic world, and a quick on-policy check of it.
func Example() {
	e := synthetic.New(synthetic.Seed)
	truth := synthetic.Truths[0]
	rng := rand.New(rand.NewPCG(1, 2))
	mean, se := e.Evaluate(rng, e.EpsilonGreedy(truth.Epsilon), 2000, synthetic.Horizon, synthetic.Gamma)
	fmt.Printf("truth %.4f ± %.4f; 2000 rollouts within 4 standard errors: %v\n",
		truth.Return, truth.SE, math.Abs(mean-truth.Return) < 4*math.Hypot(se, truth.SE))
	// Output:
	// truth 9.4287 ± 0.0001; 2000 rollouts within 4 standard errors: true
}
