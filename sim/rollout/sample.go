package rollout

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// Sample draws n episodes of T steps from e, acting with behavior and
// recording, for every logged action, its log-probability under behavior
// and target. Episode ids are "0", "1", ... The next state of every step,
// the last included, is recorded.
func Sample(rng *rand.Rand, e sim.Discrete, behavior, target policy.Discrete, n, T int) (*dataset.Dataset, error) {
	if n <= 0 || T <= 0 {
		return nil, fmt.Errorf("rollout: sample %d episodes of %d steps", n, T)
	}
	if behavior.NumActions() != e.NumActions() || target.NumActions() != e.NumActions() {
		return nil, fmt.Errorf("rollout: policies have %d and %d actions, environment %d",
			behavior.NumActions(), target.NumActions(), e.NumActions())
	}
	var b dataset.Builder
	b.Init(e.NumStates(), e.NumActions(), 0, 0)
	b.Grow(n * T)
	for i := range n {
		s := e.Reset(rng)
		for range T {
			a := behavior.Sample(rng, s)
			next, r := e.Step(rng, s, a)
			b.Add(dataset.Step{
				State: s, Action: a, Reward: r,
				HasNext: true, NextState: next,
				LogBehavior: math.Log(behavior.Prob(s, a)),
				LogTarget:   math.Log(target.Prob(s, a)),
			})
			s = next
		}
		b.EndEpisode(fmt.Sprint(i))
	}
	return b.Dataset()
}

// SampleContinuous draws n episodes of T steps from e, acting with
// behavior on the observations and recording, for every logged action, its
// log-density under behavior and target. The dataset's StateDim is
// e.ObsDim() and its ActionDim e.ActionDim(): the estimators see what the
// policies see, never the environment's internal state. Episode ids are
// "0", "1", ... and the next observation of every step, the last
// included, is recorded.
//
// An error is returned if the dimensions disagree or if a log-density is
// NaN or the behavior's log-density of its own draw is -Inf (a broken
// policy). The target's log-density may be -Inf (ratio 0).
func SampleContinuous(rng *rand.Rand, e sim.Continuous, behavior, target policy.Continuous, n, T int) (*dataset.Dataset, error) {
	if n <= 0 || T <= 0 {
		return nil, fmt.Errorf("rollout: sample %d episodes of %d steps", n, T)
	}
	if behavior.ActionDim() != e.ActionDim() || target.ActionDim() != e.ActionDim() {
		return nil, fmt.Errorf("rollout: policies have %d and %d action components, environment %d",
			behavior.ActionDim(), target.ActionDim(), e.ActionDim())
	}
	var b dataset.Builder
	b.Init(0, 0, e.ObsDim(), e.ActionDim())
	b.Grow(n * T)
	for i := range n {
		s := e.Reset(rng)
		obs := e.Observe(s)
		for t := range T {
			a := behavior.Sample(rng, obs)
			lb, lt := behavior.LogProb(obs, a), target.LogProb(obs, a)
			if math.IsNaN(lb) || math.IsInf(lb, 0) || math.IsNaN(lt) || math.IsInf(lt, 1) {
				return nil, fmt.Errorf("rollout: episode %d step %d: action %v has log-density %v under behavior and %v under target",
					i, t, a, lb, lt)
			}
			next, r := e.Step(rng, s, a)
			nextObs := e.Observe(next)
			b.Add(dataset.Step{
				State: -1, Obs: obs, Action: -1, ActionVec: a, Reward: r,
				HasNext: true, NextState: -1, NextObs: nextObs,
				LogBehavior: lb, LogTarget: lt,
			})
			s, obs = next, nextObs
		}
		b.EndEpisode(fmt.Sprint(i))
	}
	return b.Dataset()
}
