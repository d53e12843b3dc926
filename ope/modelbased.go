package ope

import (
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/value"
)

// ModelBased is the count-based model estimator, "model-based", the
// paper's model-based baseline for discrete states (Section 5). It fits a
// tabular model to the logged transitions (value.FitCountModel),
//
//	P(s'|s,a) = N(s,a,s') / N(s,a),   r(s,a) = mean logged reward of (s,a),
//
// and computes the target's normalised value in that model exactly,
//
//	R = sum_{t<T} gamma^t E[r(s_t,a_t)] / sum_{t<T} gamma^t,
//	s_0 ~ the empirical distribution of the logged first states, a_t ~ pi, s_{t+1} ~ P,
//
// with mdp.Value, pushing the state distribution through the model for
// the full horizon T (the authors' code stops moving the distribution
// after 50 steps; this does not). Pairs (s,a) absent from the logs follow
// the rules documented on value.CountModel.
//
// With Horizon = 0 (the default) the Horizon estimand is the one every
// other estimator targets: the mean over episodes of R^T_pi from each
// episode's first state with its own length T_i. When all episodes have
// one length T that is the push above from the logged start distribution;
// when their lengths differ it is solved as tabular fqe solves it (the
// count model's finite-horizon values, value.Tabular with Finite, read at
// each start with its own T_i), since one push per length could cost as
// many pushes as there are episodes. A Horizon > 0 pushes every start
// through that one horizon.
//
// Target must be the full tabular target policy (the model needs pi(a|s)
// for every action, not only the logged ones), with as many states and
// actions as the dataset. Datasets with real-valued states are refused.
//
// Result.Weights is nil; Result.Model is a *SolvedCountModel: the fitted
// *value.CountModel and the target solved in it.
type ModelBased struct {
	// Target is the policy being evaluated.
	Target *policy.Tabular
	// Horizon is the horizon T; 0 means each episode's own length.
	Horizon int
	// Estimand is the quantity computed in the fitted model: Horizon (the
	// default) pushes the logged start distribution through it for T
	// steps; LongRun solves for its average reward (gamma = 1, with the
	// closed classes of sparse logs handled as value.Tabular documents) or
	// (1-gamma) E_d0[V] from the logged starts (gamma < 1). In both cases
	// the result equals tabular fqe's: the two are one method on discrete
	// data.
	Estimand Estimand
}

var _ Estimator = (*ModelBased)(nil)

// Name returns "model-based".
func (*ModelBased) Name() string { return "model-based" }

// Estimate fits the count model to d and returns the target's exact value
// in it: the fold of its sums (ModelBasedSums) over d's episodes.
func (e *ModelBased) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	const name = "model-based"
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if e.Target == nil {
		return Result{}, fmt.Errorf("%s: needs a tabular target policy", name)
	}
	if e.Horizon < 0 {
		return Result{}, fmt.Errorf("%s: horizon %d", name, e.Horizon)
	}
	a, err := absorbing(name, d, gamma, e.Estimand)
	if err != nil {
		return Result{}, err
	}
	d = a.d
	target, err := a.tabular(e.Target)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	// The fold of its sums (ModelBasedSums) over the (padded) log.
	res, _, err := foldSums(&ModelBased{Target: target, Horizon: e.Horizon, Estimand: e.Estimand}, d, gamma)
	return res, err
}

// SolvedCountModel is model-based's Result.Model: the count model of the
// log and the target policy whose value was computed in it (what
// ImputedWarning reads).
type SolvedCountModel struct {
	*value.CountModel
	Target policy.Discrete
}
