package ope

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

// DensityRatio is the paper's estimator (Breaking the Curse of Horizon),
// "bch-" + the learner's name: it learns the stationary density ratio
// w(s) = d_pi(s)/d_pi0(s) with any ratio.Learner and weights single steps,
//
//	R = sum_i v_i r_i / sum_i v_i,   v_i = gamma^{t_i} w(s_i) beta(a_i|s_i).
//
// With ratio.Tabular it is "bch-tabular" (discrete states, the kernel loss
// with the delta kernel minimised exactly); with ratio.Kernel it is
// "bch-kernel" (real states, w linear in Gaussian bumps, the RBF kernel
// loss minimised exactly); with ratio.Ensemble of ratio.Neural it is
// "bch-neural" (real states, the mean of networks trained on the RBF
// kernel loss).
//
// Result.Weights are the normalised v_i in step order, Result.Model the
// learned ratio.Model, and Result.Warnings what the model says about
// itself (ratio.Warner). For a model that averages several fits (an
// ensemble, ratio.Averaged), Result.Restarts holds the estimate of each
// fit's own ratio, and the estimate is their interquartile mean: with
// R >= 4 fits the floor(R/4) with the lowest and the floor(R/4) with the
// highest own estimates are dropped and w is the mean ratio of the others
// (Result.Model is that sub-ensemble). Why: a network's failures are
// rare but large. On the README's Pendulum logs 35 of 40 networks landed
// within 0.1 of the long-run truth, -0.010, but a few far off (-0.27,
// -0.67, -0.96: too flat a ratio, towards the behavior's -1.85), and one
// such fit pulls the mean of four by 0.2; the symmetric trim keeps every
// estimate's expectation where the typical fit's is and removes that
// one-sided tail (ten training seeds: all within 0.1, README).
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Eq. (6) and Algorithms 1-2.
type DensityRatio struct {
	// Learner fits w; its settings are the estimator's.
	Learner ratio.Learner
	// Reservoir and SampleSeed matter only over a stream of shards
	// (NewSums), to a learner that trains (bch-neural): it trains on the
	// sample of whole episodes of about Reservoir steps
	// (DefaultReservoir if 0) that ReservoirEpisodes draws with
	// SampleSeed, and its model is evaluated on every step.
	Reservoir  int
	SampleSeed uint64
	// ValueTest, if not nil, fits fqe's value model with these settings
	// (long-run) and gives the fitted value to a learner that takes it
	// as one more test function of its loss (ratio.ValueTested:
	// bch-neural's networks, bch-kernel's bumps), in memory. Where the
	// value model cannot be fitted (no target distribution at the next
	// states), the learner fits without, and the row's learner says so
	// ("neural", not "neural/linear"). A stream of shards has no fitted
	// value before its second pass: there bch-neural trains on its sample
	// and bch-kernel sums its moments with the plain loss.
	ValueTest *FQE
}

var _ Estimator = DensityRatio{}

// Reseed implements Reseeder: the same estimator with its learner's
// training seed replaced, for learners that draw random numbers (others
// are returned unchanged).
func (e DensityRatio) Reseed(seed uint64) Estimator {
	if s, ok := e.Learner.(ratio.Seeded); ok {
		e.Learner = s.WithSeed(seed)
	}
	return e
}

// Name returns "bch-" followed by the learner's name.
func (e DensityRatio) Name() string { return "bch-" + e.Learner.Name() }

// Estimate fits w on d and returns the self-normalised step-weighted
// estimate. bch-tabular's is the fold of its sums (RatioSums) over d's
// episodes.
func (e DensityRatio) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	name := e.Name()
	if err := checkGamma(gamma); err != nil {
		return Result{}, err
	}
	if err := checkBehavior(name, d); err != nil {
		return Result{}, err
	}
	a, err := absorbingLongRun(name, d, gamma)
	if err != nil {
		return Result{}, err
	}
	d = a.d
	if _, ok := e.Learner.(ratio.Tabular); ok {
		return e.foldTabular(a, gamma)
	}
	learner, tested := e.Learner, Result{}
	var kt *kernelTest
	if vt, ok := learner.(ratio.ValueTested); ok && e.ValueTest != nil {
		if v, next, fr, err := e.testValue(a, gamma); err == nil {
			if l, took := vt.WithValue(v, next); took {
				learner, tested = l, fr
				kt = &kernelTest{v, next, ratio.StartMean(d, v)}
			}
		}
	}
	m, err := learner.Fit(d, gamma)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	var w []float64
	var members [][]float64
	if am, ok := m.(ratio.Averaged); ok {
		w, members, err = am.MemberRatios(d)
	} else {
		w, err = m.StepRatios(d)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	fitted := m
	var restarts []float64
	for k, wk := range members {
		rk, err := ratioEstimate(d, gamma, wk)
		if err != nil {
			return Result{}, fmt.Errorf("%s: restart %d: %w", name, k+1, err)
		}
		restarts = append(restarts, rk.Value)
	}
	if em, ok := m.(*ratio.EnsembleModel); ok && len(middleHalf(restarts)) < len(members) {
		m = em.Subset(middleHalf(restarts))
		if w, err = m.StepRatios(d); err != nil {
			return Result{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	res, err := ratioEstimate(d, gamma, w)
	if err != nil {
		return Result{}, err
	}
	res.Restarts = restarts
	res.Model = m
	if _, ok := e.Learner.(ratio.Kernel); !ok {
		res.fitted = fitted // a learner that trains (NewSums: SampleSums)
	} else if kt != nil {
		res.fitted = kt // the value test its sums need (FittedSums)
	}
	// The halves of the logged steps: an episode's absorbing steps, reward
	// 0 and at the end, are not a start transient.
	res.Weights = a.stepWeights(res.Weights)
	res.Transient, res.TransientSE = halvesGap(a.logged, res.Weights)
	res.Estimand = LongRun
	res.Learner = e.Learner.Name()
	if tested.Learner != "" { // the value test's model, as dr names its own
		res.Learner += "/" + tested.Learner
		res.ModelClass, res.Selection = tested.ModelClass, tested.Selection
	}
	if wr, ok := m.(ratio.Warner); ok {
		for _, s := range wr.Warnings() {
			res.Warnings = append(res.Warnings, name+": "+s)
		}
	}
	if w := earlyStepsWarning(name, "the estimate", d.NumEpisodes(), gamma); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res, nil
}

// kernelTest is the value test of a bch-kernel fit: the fitted value at
// every logged state and next state of the log it was fitted on, and its
// mean at the episodes' first states.
// FittedSums gives it to the sums whose copies make the row's interval,
// so that they solve the loss the estimate solved.
type kernelTest struct {
	v, next []float64
	start   float64 // ratio.StartMean of v
}

// testValue fits the value model of e.ValueTest on the log the learner
// reads (a.d, long-run, at gamma; the target wrapped for its absorbing
// state, as dr wraps it) and returns its values at every logged state and
// next state, with fqe's result (its learner and class).
func (e DensityRatio) testValue(a absorbed, gamma float64) (v, next []float64, fr Result, err error) {
	d := a.d
	f := *e.ValueTest
	f.Estimand = LongRun
	f.Target = a.target(f.Target)
	if fr, err = f.Estimate(d, gamma); err != nil {
		return nil, nil, fr, err
	}
	m, ok := fr.Model.(value.Model)
	if !ok {
		return nil, nil, fr, errors.New("fqe gave no value model")
	}
	if _, v, next, err = m.Values(d); err == nil && len(v) != d.NumSteps() {
		err = fmt.Errorf("fqe's values cover %d steps of %d", len(v), d.NumSteps())
	}
	return v, next, fr, err
}

// earlyStepsWarning warns, for a single episode and gamma < 1, that an
// estimator weighing step t by gamma^t rests on the episode's first
// 1/(1 - gamma) or so steps: its error does not shrink as the episode
// grows (measured on a random 8-state MDP, one episode, gamma = 0.9:
// bch-tabular errs by 0.088 at 10,000 steps and 0.056 at 100,000, fqe
// by 0.001). It names the estimators that use every step without
// vouching for any one: on a continuing real-state log whose start lay
// 4.5 standard deviations out, mql read its degree-4 q there and missed
// by 0.85 while fqe and dr erred by 0.01-0.03. It returns "" otherwise.
// what names the part of the estimate so weighted.
func earlyStepsWarning(name, what string, episodes int, gamma float64) string {
	if episodes != 1 || gamma == 1 {
		return ""
	}
	return fmt.Sprintf("%s: one episode with gamma = %g: %s weighs step t by gamma^t, so it rests on the episode's first %.0f steps or so and does not grow more precise with the episode's length; fqe, mwl and mql (with discrete actions) use every step but read their model at that one start state, where it may extrapolate: trust them where they agree", name, gamma, what, 1/(1-gamma))
}

// middleHalf returns, in increasing order, the indices of the estimates
// left when the floor(R/4) lowest and floor(R/4) highest of the R
// estimates are dropped (all of them for R < 4): the fits an ensemble's
// interquartile mean keeps.
func middleHalf(est []float64) []int {
	idx := make([]int, len(est))
	for i := range idx {
		idx[i] = i
	}
	k := len(est) / 4
	if k == 0 {
		return idx
	}
	sort.SliceStable(idx, func(a, b int) bool { return est[idx[a]] < est[idx[b]] })
	keep := idx[k : len(est)-k]
	sort.Ints(keep)
	return keep
}

// foldTabular is bch-tabular's Estimate on the (padded) log a.d: the
// fold of its sums, whose final solve is the tabular learner's own, with
// the transient read from the halves of the logged steps, as for every
// learner.
func (e DensityRatio) foldTabular(a absorbed, gamma float64) (Result, error) {
	res, _, err := foldSums(e, a.d, gamma)
	if err != nil {
		return Result{}, err
	}
	res.Weights = a.stepWeights(res.Weights)
	res.Transient, res.TransientSE = halvesGap(a.logged, res.Weights)
	return res, nil
}

// ratioEstimate computes sum v r / sum v with v_i = gamma^t w(s_i) beta_i,
// given w(s_i) for every step in step order, and returns the normalised v
// as the weights, written over w (every StepRatios returns a slice of its
// own, so no per-step array is allocated for them).
// The factor gamma^t beta_i is formed in log space and scaled by its
// maximum over the data, which cancels in the ratio; an episode's last
// step in an absorbing state that lasts for ever weighs its whole tail
// (Dataset.DiscountTail).
func ratioEstimate(d *dataset.Dataset, gamma float64, w []float64) (Result, error) {
	maxLog, err := maxDiscountedLogRatio(d, gamma)
	if err != nil {
		return Result{}, err
	}
	lg := math.Log(gamma)
	var num, den float64
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			v := w[j] * math.Exp(d.LogRatio(j)+float64(j-lo)*lg-maxLog)
			if j == hi-1 {
				v *= d.DiscountTail(e, gamma)
			}
			w[j] = v
			num += v * d.Reward[j]
			den += v
		}
	}
	if !(den > 0) {
		return Result{}, fmt.Errorf("the learned weights sum to %v", den)
	}
	for j := range w {
		w[j] /= den
	}
	return Result{Value: num / den, Weights: w}, nil
}

// maxDiscountedLogRatio returns the maximum over the steps of
// log(gamma^t beta(a_j|s_j)), the scale of discountedRatios.
func maxDiscountedLogRatio(d *dataset.Dataset, gamma float64) (float64, error) {
	lg := math.Log(gamma)
	maxLog := math.Inf(-1)
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if v := d.LogRatio(j) + float64(j-lo)*lg; v > maxLog {
				maxLog = v
			}
		}
	}
	if math.IsInf(maxLog, -1) {
		return 0, fmt.Errorf("every logged action has target probability 0")
	}
	return maxLog, nil
}

// discountedRatios returns gamma^t beta(a_j|s_j) for every step j, scaled
// by its maximum over the data (formed in log space, so that a long
// horizon neither overflows nor underflows before the scaling), an
// episode's last step times Dataset.DiscountTail.
func discountedRatios(d *dataset.Dataset, gamma float64) ([]float64, error) {
	maxLog, err := maxDiscountedLogRatio(d, gamma)
	if err != nil {
		return nil, err
	}
	lg := math.Log(gamma)
	q := make([]float64, d.NumSteps())
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			q[j] = math.Exp(d.LogRatio(j) + float64(j-lo)*lg - maxLog)
		}
		if hi > lo {
			q[hi-1] *= d.DiscountTail(e, gamma)
		}
	}
	return q, nil
}

// halvesGap returns sum v r / sum v over the first half of every
// episode's steps minus the same over the second half (v the normalised
// step weights), NaN if a half has no weight, and its standard error
// across episodes by the delta method: with R_h = N_h / D_h the halves'
// ratios and n_ih, d_ih episode i's sums, the gap's influence of episode
// i is (n_i1 - R_1 d_i1)/D_1 - (n_i2 - R_2 d_i2)/D_2, and the SE the root
// of the sum of their squares (0 for one episode). An odd middle step
// counts in neither half.
func halvesGap(d *dataset.Dataset, v []float64) (gap, se float64) {
	E := d.NumEpisodes()
	sums := make([][4]float64, E) // n1, d1, n2, d2 of each episode
	var tot [4]float64
	for e := range E {
		lo, hi := d.Span(e)
		half := (hi - lo) / 2
		s := &sums[e]
		for j := lo; j < lo+half; j++ {
			s[0] += v[j] * d.Reward[j]
			s[1] += v[j]
		}
		for j := hi - half; j < hi; j++ {
			s[2] += v[j] * d.Reward[j]
			s[3] += v[j]
		}
		for k := range tot {
			tot[k] += s[k]
		}
	}
	if !(tot[1] > 0 && tot[3] > 0) {
		return math.NaN(), math.NaN()
	}
	r1, r2 := tot[0]/tot[1], tot[2]/tot[3]
	if E > 1 {
		ss := 0.0
		for _, s := range sums {
			psi := (s[0]-r1*s[1])/tot[1] - (s[2]-r2*s[3])/tot[3]
			ss += psi * psi
		}
		se = math.Sqrt(ss)
	}
	return r1 - r2, se
}
