package synthetic

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The policies: SCOPE-RL's examples log with its base policy made
// epsilon-greedy with epsilon = 0.3 and evaluate the base policy itself
// (epsilon = 0) and the uniform policy (epsilon = 1). TargetEpsilons is
// the family of targets, the first the default; it must not be modified.
const BehaviorEpsilon = 0.3

var TargetEpsilons = []float64{0, 0.1, 0.5, 1}

// Policy is SCOPE-RL's EpsilonGreedyHead around the myopic greedy policy
// argmax_a r(s, a): with probability Epsilon a uniform action, otherwise
// the greedy one, so the greedy action has probability
// 1 - Epsilon + Epsilon/10 and every other one Epsilon/10.
type Policy struct {
	env     *Env
	Epsilon float64
}

// EpsilonGreedy returns the policy with exploration eps. It panics unless
// 0 <= eps <= 1.
func (e *Env) EpsilonGreedy(eps float64) Policy {
	if !(eps >= 0 && eps <= 1) {
		panic(fmt.Sprintf("synthetic: exploration %v outside [0, 1]", eps))
	}
	return Policy{env: e, Epsilon: eps}
}

// Greedy returns the action of largest reward in state s (the lowest such
// action on ties): a one-step lookahead on the known reward function.
func (e *Env) Greedy(s []float64) int {
	best, bestR := 0, math.Inf(-1)
	for a := range NumActions {
		if r := e.Reward(s, a); r > bestR {
			best, bestR = a, r
		}
	}
	return best
}

// Prob returns pi(a | s).
func (p Policy) Prob(s []float64, a int) float64 {
	q := p.Epsilon / NumActions
	if a == p.env.Greedy(s) {
		q += 1 - p.Epsilon
	}
	return q
}

// Sample draws an action in state s.
func (p Policy) Sample(rng *rand.Rand, s []float64) int {
	if p.Epsilon > 0 && rng.Float64() < p.Epsilon {
		return rng.IntN(NumActions)
	}
	return p.env.Greedy(s)
}

// Evaluate estimates by on-policy Monte Carlo the expected return
// E[sum_{t<T} gamma^t r_t] of p from the reset distribution over n
// episodes, and the standard error of that mean.
func (e *Env) Evaluate(rng *rand.Rand, p Policy, n, T int, gamma float64) (mean, se float64) {
	if n < 2 || T < 1 {
		panic(fmt.Sprintf("synthetic: evaluate %d episodes of %d steps", n, T))
	}
	m2 := 0.0
	for i := range n {
		s := e.Reset(rng)
		v, g := 0.0, 1.0
		for range T {
			var r float64
			s, r = e.Step(s, p.Sample(rng, s))
			v += g * r
			g *= gamma
		}
		d := v - mean
		mean += d / float64(i+1)
		m2 += d * (v - mean)
	}
	return mean, math.Sqrt(m2 / float64(n-1) / float64(n))
}

// ExpectedReward returns sum_a pi(a | s) r(s, a), the expected reward of
// a step of p from s.
func (p Policy) ExpectedReward(s []float64) float64 {
	greedy := p.env.Greedy(s)
	v := 0.0
	for a := range NumActions {
		q := p.Epsilon / NumActions
		if a == greedy {
			q += 1 - p.Epsilon
		}
		if q > 0 {
			v += q * p.env.Reward(s, a)
		}
	}
	return v
}

// PreciseValue estimates the expected return of p like Evaluate, but adds at
// each visited state the expected reward of the step, sum_a pi(a|s)
// r(s, a), instead of the reward of the action drawn: the same
// expectation (E[r_t | s_t] is that sum), with the variance of the reward
// draw removed. It is the estimator behind the package's pinned truths.
func (e *Env) PreciseValue(rng *rand.Rand, p Policy, n, T int, gamma float64) (mean, se float64) {
	if n < 2 || T < 1 {
		panic(fmt.Sprintf("synthetic: value from %d episodes of %d steps", n, T))
	}
	m2 := 0.0
	for i := range n {
		s := e.Reset(rng)
		v, g := 0.0, 1.0
		for t := range T {
			v += g * p.ExpectedReward(s)
			g *= gamma
			if t < T-1 {
				s, _ = e.Step(s, p.Sample(rng, s))
			}
		}
		d := v - mean
		mean += d / float64(i+1)
		m2 += d * (v - mean)
	}
	return mean, math.Sqrt(m2 / float64(n-1) / float64(n))
}

// A Truth is a policy's expected return over Horizon steps (gamma = 1)
// from the reset distribution of New(Seed), estimated by PreciseValue from
// 4,000,000 episodes, with its standard error.
type Truth struct {
	Epsilon    float64
	Return, SE float64
}

// Truths are the pinned truths of the target family (TargetEpsilons) and
// the behavior (BehaviorEpsilon, last); IHOPE_LONG=1 go test recomputes
// them. They must not be modified.
var Truths = []Truth{
	{0, 9.428664, 0.000128},
	{0.1, 8.521306, 0.000237},
	{0.5, 5.164010, 0.000341},
	{1, 1.519935, 0.000314},
	{BehaviorEpsilon, 6.792034, 0.000318},
}
