package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
)

// BalanceWarning says when the policy ratios pi(a|s)/pi0(a|s) of the
// logged steps do not average 1. Under the behavior that logged the
// actions, E[pi/pi0 | s] = sum_a pi(a|s) = 1 at every state, so their mean
// over the steps is 1 up to sampling noise whatever the states; a mean
// far from it says the behavior probabilities, logged or fitted, are
// wrong, and every weighting estimator with them. The mean's standard
// error is clustered by episode (steps of one episode are dependent). It
// warns when the mean is more than 4 standard errors and 1% from 1. A
// mean below 1 can also mean that the target puts mass on actions the
// behavior never takes at some states (their share is about 1 - mean).
//
// An audit's real-state world whose behavior depended on |s|, fitted by
// ihope's logistic model (linear in s), gave is-stepwise 0.4933 against
// the truth 0.4724 with intervals covering in 0 of 30 seeds, unwarned:
// its ratios average 1.02 (standard error 0.001) at n = 20,000 and 1.07
// (0.009) at n = 3,000. With the right probabilities the mean was within
// 2 standard errors of 1 on every log measured (Taxi, the README's
// Pendulum, whose ratios reach 1,700: 0.996 (0.013), and six audit logs),
// and heavy-tailed ratios, whose sample mean falls short of 1 more often
// than not, are what the 1% floor is for.
func BalanceWarning(d *dataset.Dataset, fitted bool) string {
	if !d.HasBehavior() || d.NumEpisodes() < 10 { // too few for the standard error to mean anything
		return ""
	}
	m, se := StepMean(d, func(j int) float64 { return math.Exp(d.LogRatio(j)) })
	if dev := math.Abs(m - 1); !(dev > 4*se && dev > 0.01) {
		return ""
	}
	which := "the logged behavior probabilities are"
	if fitted {
		which = "the fitted behavior policy is (--fit-behavior: its model may not be able to represent the behavior)"
	}
	why := which + " wrong"
	if m < 1 {
		why = "either the target takes, at some states, actions the behavior never does (their share of its mass, about 1 - the mean, cannot be weighed), or " + which + " wrong"
	}
	return fmt.Sprintf("the policy ratios pi/pi0 of the logged steps average %.3g (standard error %.2g, by episode), but under the behavior that logged the actions they average 1: %s, and every estimator that weighs by them is off with them",
		m, se, why)
}

// LoggedBehaviorWarning says when the logged behavior probabilities are
// less likely than fitted ones (logFitted, log pihat(a_j|s_j) per step)
// for the actions the log holds: the mean of log pi0 - log pihat over the
// logged steps estimates a mean KL divergence, never negative when the
// actions were drawn from the logged pi0; it warns below -0.01 and 3
// standard errors (clustered by episode) from 0. An audit's log whose
// behavior_prob was replaced by 1/3 had -0.195, reported in the summary
// and warned nowhere; a log with its true probabilities had 0.0001.
func LoggedBehaviorWarning(d *dataset.Dataset, logFitted []float64) string {
	if !d.HasBehavior() || d.NumEpisodes() < 2 || len(logFitted) != d.NumSteps() {
		return ""
	}
	kl, se := StepMean(d, func(j int) float64 { return d.LogBehavior[j] - logFitted[j] })
	if !(kl < -0.01 && kl < -3*se) {
		return ""
	}
	return fmt.Sprintf("the logged behavior probabilities are less likely than the fitted ones for the actions the log holds (mean log pi0 - log pihat %.3g, standard error %.2g; it is never below 0 when the actions were drawn from the logged pi0): they are probably not the probabilities the actions were drawn from, so the estimates without --fit-behavior would be off", kl, se)
}

// StepMean returns the mean of x(j) over the logged steps j of d and its
// standard error clustered by episode (the steps of one episode are
// dependent): the ratio estimator's, sqrt(sum_e (S_e - m n_e)^2) / n with
// S_e and n_e episode e's sum and number of steps.
func StepMean(d *dataset.Dataset, x func(j int) float64) (mean, se float64) {
	n := d.NumSteps()
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	sums := make([]float64, d.NumEpisodes())
	var total float64
	for e := range sums {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			sums[e] += x(j)
		}
		total += sums[e]
	}
	mean = total / float64(n)
	var v float64
	for e, s := range sums {
		r := s - mean*float64(d.Len(e))
		v += r * r
	}
	return mean, math.Sqrt(v) / float64(n)
}
