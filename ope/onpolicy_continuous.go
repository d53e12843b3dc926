package ope

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/rollout"
)

// OnPolicyContinuous is the on-policy oracle of a world with real-valued
// states and actions (env.Continuous, policy.Continuous), also named
// "on-policy" so that it takes the oracle's place in every table and
// figure. It ignores the logged data except for its shape and rolls out
// the target in the environment:
//
//	R = (1/n) sum_i sum_{t<T_i} gamma^i_t r^i_t,   trajectories drawn under pi,
//
// with gamma^i_t normalised over each rollout's length T_i. The policy acts
// on observations (env.Continuous.Observe), as when the data were logged.
//
// Episodes and Horizon work as in OnPolicy: by default one rollout per
// logged episode, each as long as that episode. Randomness comes from
// rand.New(rand.NewPCG(Seed, s)) with the same fixed stream constant s as
// OnPolicy's, created afresh in each call, so equal seeds give equal
// estimates.
//
// Result.Weights is nil.
type OnPolicyContinuous struct {
	// Env is the environment the target is rolled out in.
	Env env.Continuous
	// Target is the policy being evaluated.
	Target policy.Continuous
	// Seed seeds the rollouts.
	Seed uint64
	// Episodes is the number of rollouts; 0 means one per logged episode.
	Episodes int
	// Horizon is the length of every rollout; 0 means the length of the
	// corresponding logged episode.
	Horizon int
}

var _ Estimator = (*OnPolicyContinuous)(nil)

// Name returns "on-policy".
func (*OnPolicyContinuous) Name() string { return "on-policy" }

// Estimate rolls out the target and returns its average normalised reward.
func (e *OnPolicyContinuous) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	const name = "on-policy"
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if e.Env == nil || e.Target == nil {
		return Result{}, fmt.Errorf("%s: needs an environment and a target policy", name)
	}
	if e.Target.ActionDim() != e.Env.ActionDim() {
		return Result{}, fmt.Errorf("%s: target policy has %d action components, environment %d",
			name, e.Target.ActionDim(), e.Env.ActionDim())
	}
	return onPolicyMean(d, gamma, e.Episodes, e.Horizon, e.Seed, func(rng *rand.Rand, T int, g0 float64) float64 {
		return rollout.ReturnContinuous(rng, e.Env, e.Target, T, g0, gamma)
	})
}
