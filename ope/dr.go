package ope

import (
	"fmt"
	"math"
	"runtime"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/stat"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

// DR is the doubly robust estimator, "dr": a value model's estimate
// corrected by the ratio-weighted Bellman residuals of the logged steps,
// consistent when either the ratio or the value model is right.
//
// LongRun (the stationary form of Tang et al. and Kallus and Uehara),
// with u_j = gamma^t_j w(s_j) beta_j the paper's step weights normalised
// to sum to 1 over the steps with a known next state,
//
//	R = (1 - gamma) (1/m) sum_i v(s^i_0) + sum_j u_j (r_j + gamma v(s'_j) - q(s_j, a_j))   (gamma < 1)
//	R =                                    sum_j u_j (r_j + v(s'_j) - q(s_j, a_j))          (gamma = 1, differential q)
//
// With q = 0 this is the paper's estimator; with the exact q the
// correction has mean 0 whatever w is.
//
// Horizon (the finite-horizon form of Kallus and Uehara), with q^h the
// value with h steps left and rho_t the state-action ratio at time t,
//
//	R = (1/m) sum_i g0_i [ v^(T_i)(s^i_0) + sum_t gamma^t rho^i_t (r^i_t + gamma v^(T_i-t-1)(s^i_(t+1)) - q^(T_i-t)(s^i_t, a^i_t)) ]
//
// where rho_t = w_t(s_t) beta_t, normalised to mean 1 over the episodes
// alive at t (normalisePerStep). For discrete states w_t is the
// time-indexed ratio of ratio.Marginal. For real states no time-indexed
// ratio is learnt: w_t is the stationary ratio of the kernel learner
// (ratio.Kernel, fitted with the same discount), the limit of w_t once
// both policies' t-step distributions have mixed; the per-t
// normalisation makes it exact at t = 0, where every state has ratio 1.
// On a single episode (a continuing log) the stationary ratio is used for
// discrete states too, normalised over the episode's steps instead of
// per t (normalisePerStep).
// The weighted per-decision ratios prod_{k<=t} beta_k of Thomas and
// Brunskill's WDR, the form used before, degenerate over long episodes:
// on Pendulum (n = 150, T = 1000, gamma = 1) they left dr with an RMSE
// of 34 over 5 seeds against step-wise WIS's 1.13; with the stationary
// ratio its errors over 3 seeds are -0.60, -0.39, -0.42 (WIS -1.08,
// -1.33, -0.71), and at gamma = 0.99 0.19, 0.08, 0.09 (WIS 0.16, 0.29,
// 0.60).
//
// Cross-fitting: the episodes are split into Folds folds (the i-th
// distinct id in their natural order in fold i mod Folds, so copies of an
// episode in a bootstrap resample share one, Dataset.EpisodeFolds); the
// value model of fold k is fitted on the other
// folds and evaluated on fold k. Without it the count model's in-sample
// Bellman residuals average to about zero and the correction vanishes
// (on Taxi, n = 200: dr = fqe to 0.0005). The ratio is fitted once on all
// episodes: the count-based ratios (the time-indexed w_t of mis, the
// tabular w of the paper) are frequencies whose denominators must come
// from the data they weight; fitted on other folds they give 0 to every
// state those folds never reached at that time, which on Taxi drops most
// of the correction (measured over 10 seeds: bias +0.022 with 2 folds for
// both models, -0.003 with the ratio in-sample). A single episode is not
// split.
//
// Result.SE is the standard error from the estimator's influence
// function, clustered by episode (0 for a single episode).
//
// References:
//
//	Tang, Feng, Li, Zhou, Liu (2020), Doubly robust bias reduction in
//	infinite horizon off-policy estimation, Eq. (8); Kallus and Uehara
//	(2020), Double reinforcement learning for efficient off-policy
//	evaluation in Markov decision processes, Sections 4-5; Thomas and
//	Brunskill (2016), Data-efficient off-policy policy evaluation for
//	reinforcement learning (WDR, the per-t normalisation).
type DR struct {
	// Ratio learns w: nil means ratio.Marginal (Horizon, discrete
	// states), ratio.Tabular (LongRun, discrete states) or ratio.Kernel
	// with Kernel's settings (real states, both estimands: deterministic
	// and fitted in closed form, where ratio.Neural, the default before,
	// trains by stochastic gradients; Ratio = ratio.Neural{} or
	// Options.RatioModel "neural" still chooses it).
	Ratio ratio.Learner
	// Kernel holds the kernel ratio's settings when Ratio is nil.
	Kernel ratio.Kernel
	// Value learns q; nil chooses by the data as FQE does.
	Value value.Learner
	// Target is the target's action distribution (zero value: the logs'
	// target_prob_k columns).
	Target value.Target
	// Estimand is the quantity estimated (empty: Horizon).
	Estimand Estimand
	// Folds is the number of cross-fitting folds; 0 means 2, 1 turns
	// cross-fitting off.
	Folds int
	// SelectSeed shuffles the episodes into the folds of the value
	// model's selection (value.Select) when Value is nil on real states.
	SelectSeed uint64
	// Degree, if not 0, fixes the degree value.Select would choose.
	Degree int
	// Network is FQE.Network: the network the choice from the data
	// escalates to where no degree holds q (nil: none).
	Network *value.Neural
	// Choices is FQE.Choices.
	Choices *ValueChoices
}

var _ Estimator = DR{}

// Reseed implements Reseeder: the same estimator with the training seeds
// of its learners that draw random numbers replaced.
func (e DR) Reseed(seed uint64) Estimator {
	if s, ok := e.Ratio.(ratio.Seeded); ok {
		e.Ratio = s.WithSeed(seed)
	}
	if s, ok := e.Value.(value.Seeded); ok {
		e.Value = s.WithSeed(seed ^ 0x76616c7565) // "value": another seed than the ratio's
	}
	return e
}

// Name returns "dr".
func (DR) Name() string { return "dr" }

// Estimate fits the models fold by fold and returns the corrected value.
func (e DR) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	const name = "dr"
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	if err := checkBehavior(name, d); err != nil {
		return Result{}, err
	}
	est := e.Estimand.OrDefault()
	a, err := absorbing(name, d, gamma, est)
	if err != nil {
		return Result{}, err
	}
	d = a.d
	e.Target = a.target(e.Target)
	vl := e.Value
	if vl == nil {
		vl = autoValue(d, est, e.SelectSeed, e.Degree, e.Network)
	}
	if err := checkValueEstimand(name, vl, est); err != nil {
		return Result{}, err
	}
	// A learner that chooses its class (value.Select) chooses once, on
	// every episode, and the winner is cross-fitted: choosing again in
	// each fold would cost K selections and could give each fold another
	// class. ihope estimate's bootstrap refits the class the whole log
	// chose (evaluate's resampleOptions), so its intervals hold the class
	// fixed; ope.Bootstrap on this estimator reruns the whole, choice
	// included.
	vl, sel, err := chooseValue(vl, d, gamma, e.Target, e.Choices)
	if err != nil {
		return Result{}, fmt.Errorf("%s: value model: %w", name, err)
	}
	rl := e.ratioLearner(d, est)
	K := e.Folds
	if K == 0 {
		K = 2
	}
	if K < 1 {
		return Result{}, fmt.Errorf("%s: %d folds", name, K)
	}
	K = min(K, d.NumIDs()) // a bootstrap resample's copies of an episode share a fold
	// Per step: the model values of its own fold and the ratio weight.
	n := d.NumSteps()
	q, v, next := make([]float64, n), make([]float64, n), make([]float64, n)
	var w []float64
	// The ratio and the K value models are independent fits: run them
	// at once (each writes its own steps, so the result does not depend
	// on the schedule).
	ratioName := rl.Name()
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	g.Go(func() error {
		if est == Horizon && d.MaxLen() == 1 {
			// One-step episodes (a contextual bandit): every step is at
			// t = 0, whose states both policies draw from the start
			// distribution, so the state ratio is 1 and there is nothing
			// to fit (the next states, all the absorbing one or none,
			// would leave a kernel without a bandwidth). dr is then
			// doubly robust IPW: v(s) + beta (r - q(s, a)).
			w = make([]float64, n)
			for j := range w {
				w[j] = 1
			}
			ratioName = "none (one step)"
			return nil
		}
		rm, err := rl.Fit(d, gamma)
		if err == nil {
			w, err = rm.StepRatios(d)
		}
		if err != nil {
			return fmt.Errorf("%s: ratio model: %w", name, err)
		}
		return nil
	})
	folds := d.EpisodeFolds(K) // once: it sorts the ids
	for k := range K {
		g.Go(func() error {
			return e.fold(d, gamma, vl, folds, K, k, q, v, next)
		})
	}
	if err := g.Wait(); err != nil {
		return Result{}, err
	}
	if err := checkBounded(d, gamma, est, q, v, next); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	var psi, u []float64
	if est == Horizon {
		for j := range w {
			w[j] *= math.Exp(d.LogRatio(j))
		}
		normalisePerStep(d, gamma, w)
		psi, u, err = drHorizon(d, gamma, q, v, next, w)
	} else {
		psi, u, err = drLongRun(d, gamma, q, v, next, w)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	val, se := meanSE(psi)
	if math.IsNaN(val) || math.IsInf(val, 0) {
		return Result{}, fmt.Errorf("%s: the estimate is %v", name, val)
	}
	res := Result{Value: val, SE: se, Estimand: est, Learner: ratioName + "/" + vl.Name()}
	res.setSelection(sel)
	if K == 1 && d.NumEpisodes() > 1 {
		res.Warnings = append(res.Warnings, "dr: no cross-fitting (1 fold): the models are judged on the data they fitted")
	}
	if w := earlyStepsWarning(name, "its correction", d.NumEpisodes(), gamma); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if w := correctionCollapse(u); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if w := largeCorrection(d, gamma, est, v, val, se, vl.Name()); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res, nil
}

// largeCorrection warns when dr's correction moves its value model's own
// estimate (the start values: g0 v(s_0) under the horizon, (1 - gamma)
// v(s_0) for the discounted long run) by more than 3 standard errors of
// dr: the value model then misfits the logs by about that much, dr rests
// on its ratio model, and its interval, the sampling noise of both,
// counts neither model's bias. On unseen nonlinear worlds where the
// quadratic value model misfit, dr's Wald interval held the truth in 24
// of 72 runs. It returns "" otherwise, and for gamma = 1 under the long
// run, where the value model's own estimate is its average reward.
// learner is the value learner's name: with the linear one on real
// states the warning names the remedy (neuralValueHint).
func largeCorrection(d *dataset.Dataset, gamma float64, est Estimand, v []float64, val, se float64, learner string) string {
	if est == LongRun && gamma == 1 || !(se > 0) {
		return ""
	}
	model := meanStartValue(d, gamma, est, v)
	corr := val - model
	if math.Abs(corr) <= 3*se {
		return ""
	}
	return fmt.Sprintf("dr: its correction moves its value model's estimate (%.4g) by %.3g, %.2g standard errors: the value model misfits these logs, so dr rests on its ratio model, and its interval counts the sampling noise, not either model's bias (compare the estimators without a value model, such as wis-stepwise and the density ratios; fqe shares the value model)%s",
		model, corr, math.Abs(corr)/se, neuralValueHint(d, gamma, est, learner))
}

// neuralValueHint is the advice a misfit warning ends with when the value
// model is the linear one (polynomial features) on real states at
// gamma < 1, where the neural learner applies (under the long run only:
// it has no time-indexed form): on three unseen nonlinear worlds (a 2-d
// nonlinear system, mountain car, cart-pole; 800 episodes of 100 steps,
// gamma = 0.95, two logs each) it cut dr's mean |error| from 0.073 to
// 0.017 and fqe's from 0.215 to 0.035 (docs/estimators.md, "Which estimator to trust
// first"). "" otherwise: the neural learner fits no gamma = 1, and
// discrete states have the exact tabular model.
func neuralValueHint(d *dataset.Dataset, gamma float64, est Estimand, learner string) string {
	if d.Discrete() || learner != "linear" || gamma >= 1 {
		return ""
	}
	how := "--value-model neural fits"
	if est != LongRun {
		how = "the long-run value (--estimand long-run, another estimand) with --value-model neural, which has no horizon form, fits"
	}
	return "; on real states " + how + " what polynomial features cannot (on three nonlinear worlds, under the long run, it cut dr's mean error from 0.073 with quadratic features to 0.017; on discounted Pendulum, where no degree fits, it gave -1.498 against the truth -1.451)"
}

// correctionCollapse warns when the weights u of dr's correction
// collapse onto a few steps by the thresholds of WeightWarnings: the
// correction then rests on a few steps' residuals, which can move dr far
// from its value model's estimate (on a linear-Gaussian world whose
// kernel ratio had an effective sample size of 5 of 5000 steps, dr gave
// 1.71, fqe 0.51, the truth 0.53). It returns "" otherwise.
func correctionCollapse(u []float64) string {
	ws := SummarizeWeights(u)
	if ws.Units < 2 || ws.ESS == 0 || !collapsed(UnitStep, ws) {
		return ""
	}
	return fmt.Sprintf("dr: its ratio's weights collapse onto a few steps (effective sample size %.1f of %d; the largest carries %.0f%%): its correction rests on a few steps' residuals, which can move it far from its value model's estimate (compare fqe)", ws.ESS, ws.Units, 100*ws.MaxShare)
}

// fold fits the value model on the episodes outside fold k (all of them
// for K = 1; folds gives every episode's, Dataset.EpisodeFolds) and
// writes its values at the steps of fold k into q, v and next.
func (e DR) fold(d *dataset.Dataset, gamma float64, vl value.Learner, folds []int, K, k int, q, v, next []float64) error {
	train, eval := foldEpisodes(folds, K, k)
	fit, on := d, d
	if K > 1 {
		fit, on = d.Subset(train), d.Subset(eval)
	}
	vm, err := vl.Fit(fit, gamma, e.Target)
	if err != nil {
		return fmt.Errorf("dr: value model: %w", err)
	}
	qk, vk, nk, err := vm.Values(on)
	if err != nil {
		return fmt.Errorf("dr: value model: %w", err)
	}
	// Scatter the fold's steps back to their places in d.
	for a, i := range eval {
		lo, hi := d.Span(i)
		olo := lo
		if K > 1 {
			olo, _ = on.Span(a)
		}
		for j := lo; j < hi; j++ {
			o := olo + j - lo
			q[j], v[j], next[j] = qk[o], vk[o], nk[o]
		}
	}
	return nil
}

// ratioLearner is the ratio learner of e for d and the estimand. The
// time-indexed ratio needs several episodes (its ratio at step t is
// counted over the episodes' steps t); on a single episode dr uses the
// stationary ratio under either estimand, as it does on real states.
func (e DR) ratioLearner(d *dataset.Dataset, est Estimand) ratio.Learner {
	switch {
	case e.Ratio != nil:
		return e.Ratio
	case est == Horizon && d.Discrete() && d.NumEpisodes() > 1:
		return ratio.Marginal{}
	case d.Discrete():
		return ratio.Tabular{}
	}
	return e.Kernel
}

// foldEpisodes returns the episodes outside fold k and those in it, in
// d's order, given every episode's fold (Dataset.EpisodeFolds: by the
// natural order of the ids, copies of an episode in a bootstrap resample
// together). With K = 1 every episode is in the one fold and none is
// outside it.
func foldEpisodes(fold []int, K, k int) (train, eval []int) {
	for e, f := range fold {
		if f == k {
			eval = append(eval, e)
		} else if K > 1 {
			train = append(train, e)
		}
	}
	return train, eval
}

// normalisePerStep divides every step's weight by the mean weight of the
// episodes alive at its time t. The state-action ratios w_t beta have mean
// 1 at every t under the behavior (exactly so for the exact ratios on the
// expectation of the data, which the tests check); fitted ratios on a
// far-off behavior do not, and one t whose few logged weights are huge
// would otherwise make the correction, and dr, explode (Taxi, behavior
// pi14: log10 MSE -0.19 unnormalised). This is the weighted
// (self-normalised) form of Thomas and Brunskill's WDR, applied to the
// marginal ratios.
//
// A single episode has one weight at every t, which this would set to 1,
// dropping the ratio: its weights are divided instead by their
// gamma^t-weighted mean over the episode's steps (the weights of the
// stationary ratio dr uses there, see ratioLearner, have mean 1 under
// the discounted visitation of the behavior that this mean estimates).
func normalisePerStep(d *dataset.Dataset, gamma float64, w []float64) {
	if d.NumEpisodes() == 1 {
		num, den, g := 0.0, 0.0, 1.0
		for j := range w {
			num += g * w[j]
			den += g
			g *= gamma
		}
		if num > 0 {
			for j := range w {
				w[j] *= den / num
			}
		}
		return
	}
	L := d.MaxLen()
	sum, cnt := make([]float64, L), make([]float64, L)
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		for j := lo; j < hi; j++ {
			sum[j-lo] += w[j]
			cnt[j-lo]++
		}
	}
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		for j := lo; j < hi; j++ {
			if t := j - lo; sum[t] > 0 {
				w[j] *= cnt[t] / sum[t]
			}
		}
	}
}

// drHorizon returns the per-episode terms psi_i of the finite-horizon DR
// estimate (their mean is the estimate) and the weights of its correction,
// u_j = g0_i gamma^t rho_j; rho[j] is the state-action ratio of step j.
func drHorizon(d *dataset.Dataset, gamma float64, q, v, next, rho []float64) (psi, u []float64, err error) {
	psi, u = make([]float64, d.NumEpisodes()), make([]float64, len(rho))
	for i := range psi {
		lo, hi := d.Span(i)
		g0, _ := discountStart(gamma, hi-lo)
		s, g := v[lo], 1.0
		for j := lo; j < hi; j++ {
			nx := next[j]
			if math.IsNaN(nx) {
				nx = 0 // the last step of a finite horizon: nothing follows
			}
			u[j] = g * rho[j]
			s += u[j] * (d.Reward[j] + gamma*nx - q[j])
			u[j] *= g0
			g *= gamma
		}
		psi[i] = g0 * s
	}
	return psi, u, nil
}

// drLongRun returns per-episode terms whose mean is the stationary DR
// estimate and whose spread gives its influence-function standard error:
// psi_i = (1-gamma) v(s^i_0) + C + (m / sum_j u_j) sum_{j in i} u_j (delta_j - C),
// the linearisation of the self-normalised correction C around its value,
// and the weights u_j of the correction (a terminal episode's absorbing
// tail counted, Dataset.DiscountTail).
func drLongRun(d *dataset.Dataset, gamma float64, q, v, next, w []float64) (psi, u []float64, err error) {
	u, err = discountedRatios(d, gamma)
	if err != nil {
		return nil, nil, err
	}
	delta := make([]float64, len(u))
	var num, den float64
	for j := range u {
		if math.IsNaN(next[j]) {
			u[j] = 0 // no transition: no Bellman residual
			continue
		}
		u[j] *= w[j]
		delta[j] = d.Reward[j] + gamma*next[j] - q[j]
		num += u[j] * delta[j]
		den += u[j]
	}
	if !(den > 0) {
		return nil, nil, fmt.Errorf("the ratio weights sum to %v", den)
	}
	C := num / den
	m := float64(d.NumEpisodes())
	psi = make([]float64, d.NumEpisodes())
	for i := range psi {
		lo, hi := d.Span(i)
		s := 0.0
		for j := lo; j < hi; j++ {
			s += u[j] * (delta[j] - C)
		}
		psi[i] = C + m/den*s
		if gamma < 1 {
			psi[i] += (1 - gamma) * v[lo]
		}
	}
	return psi, u, nil
}

// meanSE returns the mean of x and its standard error sd/sqrt(n) (0 for
// one value).
func meanSE(x []float64) (mean, se float64) {
	if len(x) < 2 {
		return stat.Mean(x, nil), 0
	}
	mean, sd := stat.MeanStdDev(x, nil)
	return mean, sd / math.Sqrt(float64(len(x)))
}
