package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
)

// This file holds the per-episode primitives shared by the baselines: the
// normalised discount gamma_t of an episode and the walk that accumulates
// an episode's discounted value and its cumulative log importance weights.
// The importance-sampling estimators differ only in how they normalise
// what these primitives return.

// discountStart returns gamma_0 = 1 / sum_{t<T} gamma^t for an episode of
// T >= 1 steps and its logarithm, so that gamma_t = gamma_0 gamma^t
// (Appendix A). For gamma = 1 this is 1/T; otherwise
// sum_{t<T} gamma^t = (1 - gamma^T) / (1 - gamma), evaluated with Expm1 so
// that gamma near 1 and long horizons keep full precision.
func discountStart(gamma float64, T int) (g0, logG0 float64) {
	if gamma == 1 {
		return 1 / float64(T), -math.Log(float64(T))
	}
	// 1 - gamma^T = -expm1(T log gamma) lies in (0, 1].
	logG0 = math.Log1p(-gamma) - math.Log(-math.Expm1(float64(T)*math.Log(gamma)))
	return math.Exp(logG0), logG0
}

// checkEpisodes returns an error if d has no episodes or an empty one.
func checkEpisodes(name string, d *dataset.Dataset) error {
	if d == nil || d.NumEpisodes() == 0 {
		return fmt.Errorf("%s: no episodes", name)
	}
	for e := range d.NumEpisodes() {
		if d.Len(e) == 0 {
			return fmt.Errorf("%s: episode %q has no steps", name, d.IDs[e])
		}
	}
	return nil
}

// checkBehavior returns ErrNoBehavior, named, for a log without behavior
// probabilities (the estimators that weigh by pi/pi0 need them).
func checkBehavior(name string, d *dataset.Dataset) error {
	if !d.HasBehavior() {
		return fmt.Errorf("%s: %w", name, ErrNoBehavior)
	}
	return nil
}

// checkSeveral returns an error for a log of one episode: importance
// sampling weighs episodes against each other, and with one episode its
// weights normalise to 1 (WIS returns the behavior's own value, plain IS
// one product of ratios with nothing to average it), which would look
// like an estimate with a perfect effective sample size. why says what
// the estimator needs the episodes for.
func checkSeveral(name, why string, d *dataset.Dataset) error {
	if d.NumEpisodes() < 2 {
		if d.NumEpisodes() == 1 && d.IsTerminal(0) {
			return fmt.Errorf("%s: needs several episodes (%s); this log is one episode, which ends in a terminal state: use fqe, model-based or dr", name, why)
		}
		return errOneEpisode(name, why)
	}
	return nil
}

// Why the estimators that refuse one episode need several (checkSeveral).
const (
	whyIS  = "importance sampling weighs episodes against each other"
	whyMIS = "its ratio at step t is estimated from the episodes' states at step t, of which one episode has one"
)

// errOneEpisode is checkSeveral's error.
func errOneEpisode(name, why string) error {
	return fmt.Errorf("%s: needs several episodes (%s); this log is one continuing episode: use the density-ratio or value-based estimators", name, why)
}

// checkReward returns an error for a NaN or infinite reward at step j of
// episode e.
func checkReward(name string, d *dataset.Dataset, e, j int) error {
	if r := d.Reward[j]; r-r != 0 { // NaN or ±Inf
		return fmt.Errorf("%s: episode %q step %d: reward %v", name, d.IDs[e], j-d.Start[e], r)
	}
	return nil
}

// episodeValue returns episode e's normalised discounted reward
// sum_{t<T} gamma_t r_t with T its own length.
func episodeValue(name string, d *dataset.Dataset, e int, gamma float64) (float64, error) {
	lo, hi := d.Span(e)
	g, _ := discountStart(gamma, hi-lo)
	v := 0.0
	for j := lo; j < hi; j++ {
		r := d.Reward[j]
		if r-r != 0 {
			return 0, checkReward(name, d, e, j)
		}
		v += g * r
		g *= gamma
	}
	return v, nil
}

// walkEpisode returns episode e's normalised discounted reward
// sum_{t<T} gamma_t r_t and its log trajectory weight
//
//	log w_{0:T} = sum_{t<T} log beta(a_t|s_t),   beta = pi / pi0,
//
// and, when cum is not nil (len(cum) >= T), stores the cumulative
// log-weights log w_{0:t} = sum_{k<=t} log beta_k in cum[t].
//
// A logged action with target probability 0 has log beta = -Inf; the
// weight of the episode from that step on is exactly 0 and stays -Inf in
// log space. A NaN or +Inf log-ratio (behavior probability 0, or a NaN
// probability) is an error, as is a non-finite reward.
func walkEpisode(name string, d *dataset.Dataset, e int, gamma float64, cum []float64) (logW, value float64, err error) {
	lo, hi := d.Span(e)
	g, _ := discountStart(gamma, hi-lo)
	for j := lo; j < hi; j++ {
		lt, lb := d.LogTarget[j], d.LogBehavior[j]
		lr := lt - lb
		if !(lr < math.Inf(1)) { // NaN or +Inf
			return 0, 0, fmt.Errorf("%s: episode %q step %d: log-ratio %v (target %v, behavior %v)",
				name, d.IDs[e], j-lo, lr, lt, lb)
		}
		r := d.Reward[j]
		if r-r != 0 {
			return 0, 0, checkReward(name, d, e, j)
		}
		logW += lr
		value += g * r
		g *= gamma
		if cum != nil {
			cum[j-lo] = logW
		}
	}
	if math.IsNaN(logW) || math.IsInf(logW, 1) {
		return 0, 0, fmt.Errorf("%s: episode %q: log-weight overflows (%v)", name, d.IDs[e], logW)
	}
	return logW, value, nil
}

// scaledMean returns exp(shift) * s / m without forming exp(shift) on its
// own, so that the result is finite whenever it is representable. It
// returns an error when the result itself overflows float64.
func scaledMean(name string, s, shift float64, m int) (float64, error) {
	if s == 0 {
		return 0, nil
	}
	v := math.Copysign(math.Exp(math.Log(math.Abs(s))-math.Log(float64(m))+shift), s)
	if math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s: estimate overflows float64 (log|R| = %.6g)",
			name, math.Log(math.Abs(s))-math.Log(float64(m))+shift)
	}
	return v, nil
}
