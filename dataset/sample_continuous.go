package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/policy"
)

// SampleContinuous draws n episodes of T steps from e, acting with
// behavior on the observations and recording, for every logged action, its
// log-density under behavior and target. Steps carry Obs, NextObs and
// ActionVec; State, NextState and Action are -1. The dataset's StateDim is
// e.ObsDim(): the estimators see what the policies see, never the
// environment's internal state. Episode ids are "0", "1", ... and the next
// observation of every step, the last included, is recorded; the NextObs
// of a step and the Obs of the step after it share one slice.
//
// An error is returned if the dimensions disagree or if a log-density is
// NaN or the behavior's log-density of its own draw is -Inf (a broken
// policy). The target's log-density may be -Inf (ratio 0).
func SampleContinuous(rng *rand.Rand, e env.Continuous, behavior, target policy.Continuous, n, T int) (*Dataset, error) {
	if n <= 0 || T <= 0 {
		return nil, fmt.Errorf("dataset: sample %d episodes of %d steps", n, T)
	}
	if behavior.ActionDim() != e.ActionDim() || target.ActionDim() != e.ActionDim() {
		return nil, fmt.Errorf("dataset: policies have %d and %d action components, environment %d",
			behavior.ActionDim(), target.ActionDim(), e.ActionDim())
	}
	d := &Dataset{StateDim: e.ObsDim()}
	d.Episodes = make([]Episode, n)
	steps := make([]Step, n*T)
	for i := range d.Episodes {
		ep := steps[i*T : (i+1)*T : (i+1)*T]
		s := e.Reset(rng)
		obs := e.Observe(s)
		for t := range ep {
			a := behavior.Sample(rng, obs)
			lb, lt := behavior.LogProb(obs, a), target.LogProb(obs, a)
			if math.IsNaN(lb) || math.IsInf(lb, 0) || math.IsNaN(lt) || math.IsInf(lt, 1) {
				return nil, fmt.Errorf("dataset: episode %d step %d: action %v has log-density %v under behavior and %v under target",
					i, t, a, lb, lt)
			}
			next, r := e.Step(rng, s, a)
			nextObs := e.Observe(next)
			ep[t] = Step{
				State: -1, Obs: obs, Action: -1, ActionVec: a, Reward: r,
				HasNext: true, NextState: -1, NextObs: nextObs,
				LogBehavior: lb, LogTarget: lt,
			}
			s, obs = next, nextObs
		}
		d.Episodes[i] = Episode{ID: fmt.Sprint(i), Steps: ep}
	}
	return d, nil
}
