package rollout

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// Return rolls out pi in e for T steps from a reset and returns
// sum_{t<T} g0 gamma^t r_t: with g0 = 1/sum_{t<T} gamma^t, the rollout's
// normalised discounted reward. Draws come from rng: reset, then per step
// the action and the transition.
func Return(rng *rand.Rand, e sim.Discrete, pi policy.Discrete, T int, g0, gamma float64) float64 {
	v, g := 0.0, g0
	s := e.Reset(rng)
	for range T {
		next, r := e.Step(rng, s, pi.Sample(rng, s))
		v += g * r
		g *= gamma
		s = next
	}
	return v
}

// ReturnContinuous is Return for a world with real observations: the
// policy acts on e.Observe(s), as when data are logged.
func ReturnContinuous(rng *rand.Rand, e sim.Continuous, pi policy.Continuous, T int, g0, gamma float64) float64 {
	v, g := 0.0, g0
	s := e.Reset(rng)
	for range T {
		next, r := e.Step(rng, s, pi.Sample(rng, e.Observe(s)))
		v += g * r
		g *= gamma
		s = next
	}
	return v
}

// Evaluate estimates by on-policy Monte Carlo the normalised T-step value
// of p on e,
//
//	R = E[ sum_{t<T} gamma_t r_t ],  gamma_t = gamma^t / sum_{s<T} gamma^s,
//
// (gamma = 1: the average reward per step), from n episodes started from
// e's reset distribution. It returns the mean over episodes and its
// standard error (the standard deviation of the per-episode values over
// sqrt(n)). Draws come from rng in episode order: reset, then per step the
// action and the transition.
func Evaluate(rng *rand.Rand, e sim.Continuous, p policy.Continuous, n, T int, gamma float64) (mean, se float64, err error) {
	if n <= 0 || T <= 0 {
		return 0, 0, fmt.Errorf("rollout: evaluate %d episodes of %d steps", n, T)
	}
	if !(gamma > 0 && gamma <= 1) {
		return 0, 0, fmt.Errorf("rollout: evaluate: discount %v outside (0, 1]", gamma)
	}
	if p.ActionDim() != e.ActionDim() {
		return 0, 0, fmt.Errorf("rollout: evaluate: policy has %d action components, environment %d", p.ActionDim(), e.ActionDim())
	}
	norm := float64(T)
	if gamma < 1 {
		norm = -math.Expm1(float64(T)*math.Log(gamma)) / (1 - gamma)
	}
	// Welford's running mean and sum of squared deviations. The sum is
	// divided by norm at the end (not multiplied by 1/norm per step), as
	// the policy trainers have always done.
	m2 := 0.0
	for i := range n {
		s := e.Reset(rng)
		v, w := 0.0, 1.0
		for range T {
			a := p.Sample(rng, e.Observe(s))
			next, r := e.Step(rng, s, a)
			v += w * r
			w *= gamma
			s = next
		}
		v /= norm
		d := v - mean
		mean += d / float64(i+1)
		m2 += d * (v - mean)
	}
	if n > 1 {
		se = math.Sqrt(m2 / float64(n-1) / float64(n))
	}
	if math.IsNaN(mean) || math.IsInf(mean, 0) {
		return 0, 0, fmt.Errorf("rollout: evaluate: non-finite value %v", mean)
	}
	return mean, se, nil
}
