package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/policy"
)

// Sample draws n episodes of T steps from e, acting with behavior and
// recording, for every logged action, its log-probability under behavior
// and target. Episode ids are "0", "1", ... The next state of every step,
// the last included, is recorded.
func Sample(rng *rand.Rand, e env.Discrete, behavior, target policy.Discrete, n, T int) (*Dataset, error) {
	if n <= 0 || T <= 0 {
		return nil, fmt.Errorf("dataset: sample %d episodes of %d steps", n, T)
	}
	if behavior.NumActions() != e.NumActions() || target.NumActions() != e.NumActions() {
		return nil, fmt.Errorf("dataset: policies have %d and %d actions, environment %d",
			behavior.NumActions(), target.NumActions(), e.NumActions())
	}
	d := &Dataset{NumStates: e.NumStates(), NumActions: e.NumActions()}
	d.Episodes = make([]Episode, n)
	steps := make([]Step, n*T) // one allocation for all episodes
	for i := range d.Episodes {
		ep := steps[i*T : (i+1)*T : (i+1)*T]
		s := e.Reset(rng)
		for t := range ep {
			a := behavior.Sample(rng, s)
			next, r := e.Step(rng, s, a)
			ep[t] = Step{
				State: s, Action: a, Reward: r,
				HasNext: true, NextState: next,
				LogBehavior: math.Log(behavior.Prob(s, a)),
				LogTarget:   math.Log(target.Prob(s, a)),
			}
			s = next
		}
		d.Episodes[i] = Episode{ID: fmt.Sprint(i), Steps: ep}
	}
	return d, nil
}
