package ope

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/value"
)

// FQE is fitted Q evaluation, "fqe": a value model of the target fitted
// to the logged transitions (package value), read at the start states.
//
//	Horizon:  R = (1/m) sum_i v^(T_i)(s^i_0) / sum_{t<T_i} gamma^t     (q^h: h steps left)
//	LongRun:  R = (1 - gamma) (1/m) sum_i v(s^i_0)                   (gamma < 1)
//	          R = rho, the average reward of the differential model  (gamma = 1)
//
// It needs the target's whole action distribution (Target, or the logs'
// target_prob_k columns) but no behavior probabilities. With Value nil the
// learner is chosen from the data: value.Tabular for discrete states and
// actions, otherwise value.Select, the linear model whose polynomial
// degree (2 to 6) is chosen by its held-out projected Bellman error over
// folds of episodes shuffled by SelectSeed, then refitted on all the data
// (ope/selection.go; value.Linear, a fixed degree 2, before); for the
// discounted long-run value, a network joins the candidates where no
// degree passes the held-out test (value.Select's escalation).
//
// Result.Model is the value.Model, Result.Learner its learner's name;
// where the class was chosen, Result.ModelClass names the winner and
// Result.Selection holds every candidate's held-out score.
//
// References:
//
//	Le, Voloshin, Yue (2019), Batch policy learning under constraints,
//	Section 4 (FQE); Voloshin, Le, Jiang, Yue (2019), Empirical study of
//	off-policy policy evaluation for reinforcement learning.
type FQE struct {
	// Value is the learner; nil chooses by the data.
	Value value.Learner
	// Target is the target's action distribution (zero value: the logs'
	// target_prob_k columns).
	Target value.Target
	// Estimand is the quantity estimated (empty: Horizon).
	Estimand Estimand
	// Reservoir and SampleSeed matter only over a stream of shards
	// (NewSums) with a value learner that trains (value.Neural): it
	// trains on the sample of whole episodes of about Reservoir steps
	// (DefaultReservoir if 0) that ReservoirEpisodes draws with
	// SampleSeed, and its model is evaluated on every step.
	Reservoir  int
	SampleSeed uint64
	// SelectSeed shuffles the episodes into the folds of the value
	// model's selection (value.Select) when Value is nil on real states.
	SelectSeed uint64
	// Degree, if not 0, fixes the degree value.Select would choose.
	Degree int
	// Network, if not nil, is the network the choice from the data
	// (Value nil on real states) escalates to for the discounted
	// long-run value where no degree holds q (value.Select.Escalate;
	// ope.New sets it, with its seed, unless Options.ValuePolynomialOnly).
	Network *value.Neural
	// Choices, if not nil, shares an escalated selection with the other
	// estimators of a run (Options.ValueChoices).
	Choices *ValueChoices
}

var _ Estimator = FQE{}

// Name returns "fqe".
func (FQE) Name() string { return "fqe" }

// Estimate fits the value model and reads it at the start states.
func (e FQE) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	const name = "fqe"
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	est := e.Estimand.OrDefault()
	a, err := absorbing(name, d, gamma, est)
	if err != nil {
		return Result{}, err
	}
	d = a.d
	l := e.Value
	if l == nil {
		l = autoValue(d, est, e.SelectSeed, e.Degree, e.Network)
	}
	if err := checkValueEstimand(name, l, est); err != nil {
		return Result{}, err
	}
	pi := a.target(e.Target)
	l, sel, err := chooseValue(l, d, gamma, pi, e.Choices)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	var res Result
	if tl, ok := l.(value.Tabular); ok && pi.Continuous == nil {
		// The tabular learner's estimate is the fold of its sums
		// (FQESums), whose solve is the learner's own.
		if res, _, err = foldSums(FQE{Value: tl, Target: pi, Estimand: est}, d, gamma); err != nil {
			return Result{}, err
		}
	} else {
		m, err := l.Fit(d, gamma, pi)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", name, err)
		}
		v, err := startValue(d, gamma, est, m)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", name, err)
		}
		res = Result{Value: v, Estimand: est, Model: m, Learner: l.Name()}
	}
	res.setSelection(sel)
	if readsStarts(est, gamma) {
		if w := StartWarning(name, d); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	return res, nil
}

// autoValue is the value learner the data call for: exact tabular for
// discrete states and actions, otherwise linear features whose
// polynomial degree is chosen from the data (value.Select, its folds
// shuffled by seed), escalating to network, if not nil, where no degree
// passes the held-out Bellman test at gamma < 1 (value.Misfit). The fixed
// degree-2 model misfit every world whose q is not quadratic: on the
// point mass of sim/pointmass (200 episodes of 100 steps, 6 seeds, long
// run) fqe's mean |error| was 0.109 (gamma = 0.99) and 0.141 (gamma = 1);
// selected, 0.032 and 0.015 (degree 4 won every seed).
func autoValue(d *dataset.Dataset, est Estimand, seed uint64, degree int, network *value.Neural) value.Learner {
	finite := est == Horizon
	if d.Discrete() && d.ActionDim == 0 {
		return value.Tabular{Finite: finite}
	}
	if degree > 0 {
		return value.Linear{Degree: degree, Finite: finite}
	}
	s := value.Select{Finite: finite, Seed: seed}
	if network != nil {
		s.Escalate = []value.Candidate{{Name: network.Name(), Learner: *network}}
	}
	return s
}

// ErrStationaryHorizon is what fqe and dr refuse (wrapped, with the
// learner's name and the remedy): a value model that fits stationary
// values where the T-step horizon value is asked for.
var ErrStationaryHorizon = errors.New("the value model is stationary")

// checkValueEstimand refuses a value learner whose kind of model
// (value.Horizoned) is not the estimand's. A stationary model read at the
// start states and normalised by sum_{t<T} gamma^t would be reported as
// the horizon value while estimating the long-run one (tried: fqe with
// the neural learner on 20-step cart-pole logs at gamma = 0.9 gave 1.114
// under horizon, beyond the largest reward 1; its long-run value is
// 0.979); a finite-horizon model has no stationary value to give the long
// run. Learners that do not say are trusted.
func checkValueEstimand(name string, l value.Learner, est Estimand) error {
	h, ok := l.(value.Horizoned)
	if !ok || h.FitsHorizon() == (est == Horizon) {
		return nil
	}
	if est == Horizon {
		advice := "use --estimand long-run"
		switch l.Name() {
		case "neural":
			advice = "use --estimand long-run with gamma < 1, or --value-model linear"
		case "linear", "tabular":
			advice = "fit it with Finite set, or use --estimand long-run"
		}
		return fmt.Errorf("%s: %w: the %s learner's values read at the start states give the long-run value, not the T-step horizon value asked for (%s)", name, ErrStationaryHorizon, l.Name(), advice)
	}
	return fmt.Errorf("%s: the %s value model fits finite-horizon values (Finite), which give no long-run value (fit it without Finite, or use --estimand horizon)", name, l.Name())
}

// readsStarts reports whether startValue reads the value model at the
// start states (all but the average reward, LongRun at gamma = 1).
func readsStarts(est Estimand, gamma float64) bool { return !(est == LongRun && gamma == 1) }

// startValue is the value model's estimate: the mean over episodes of
// g0_i v^(T_i)(s_0) (Horizon, with g0_i = 1/sum_{t<T_i} gamma^t), of
// (1-gamma) v(s_0) (LongRun, gamma < 1), or rho (LongRun, gamma = 1).
func startValue(d *dataset.Dataset, gamma float64, est Estimand, m value.Model) (float64, error) {
	if est == LongRun && gamma == 1 {
		rho := m.Rho()
		if math.IsNaN(rho) {
			return 0, fmt.Errorf("the value model has no average reward")
		}
		return rho, nil
	}
	q, v, next, err := m.Values(d)
	if err != nil {
		return 0, err
	}
	if err := checkBounded(d, gamma, est, q, v, next); err != nil {
		return 0, err
	}
	r := meanStartValue(d, gamma, est, v)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("the value model gives %v", r)
	}
	return r, nil
}

// checkBounded returns an error when a value model's values exceed what
// the logged rewards allow: |q| <= max|r| sum_{t<T} gamma^t (horizon; T
// the longest episode) or max|r| / (1 - gamma) (long-run, gamma < 1), with
// a factor 10 of slack for extrapolation. A model beyond it has diverged
// (a linear model whose features cannot represent q, compounding its error
// through T backups) and its estimate means nothing. Differential models
// (long-run, gamma = 1) are not bounded this way.
func checkBounded(d *dataset.Dataset, gamma float64, est Estimand, vals ...[]float64) error {
	if est == LongRun && gamma == 1 {
		return nil
	}
	rmax := 0.0
	for _, r := range d.Reward {
		rmax = math.Max(rmax, math.Abs(r))
	}
	horizon := valueHorizon(gamma, est, d.MaxLen())
	bound := 10 * rmax * horizon
	for _, xs := range vals {
		for _, x := range xs {
			if math.Abs(x) > bound { // NaN passes: unknown next states are NaN
				return errDiverged(x, rmax*horizon)
			}
		}
	}
	return nil
}

// valueHorizon is what checkBounded multiplies the largest |reward| by:
// sum_{t<T} gamma^t (Horizon, T the longest episode) or 1 / (1 - gamma)
// (LongRun, gamma < 1).
func valueHorizon(gamma float64, est Estimand, T int) float64 {
	var horizon float64
	if est == Horizon {
		if gamma == 1 {
			horizon = float64(T)
		} else {
			horizon = -math.Expm1(float64(T)*math.Log(gamma)) / (1 - gamma)
		}
	} else {
		horizon = 1 / (1 - gamma)
	}
	return horizon
}

// errDiverged is checkBounded's error for a value x beyond ten times
// what the rewards allow.
func errDiverged(x, allow float64) error {
	return fmt.Errorf("the value model diverged: it gives %.3g where the rewards allow at most %.3g in absolute value (its features cannot represent q on these logs; try another value model)", x, allow)
}

// meanStartValue is a value model's own estimate from its values v at the
// logged steps: the mean over the episodes of g0 v(s_0), g0 the
// normalisation of the T-step value under Horizon (discountStart) and
// 1 - gamma under the discounted long run.
func meanStartValue(d *dataset.Dataset, gamma float64, est Estimand, v []float64) float64 {
	sum := 0.0
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		g0 := 1 - gamma
		if est == Horizon {
			g0, _ = discountStart(gamma, hi-lo)
		}
		sum += g0 * v[lo]
	}
	return sum / float64(d.NumEpisodes())
}
