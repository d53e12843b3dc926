package ope

import (
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
)

// Estimator estimates the normalised value of the target policy whose
// log-probabilities are recorded in a dataset.
//
// An estimator is a stateless value: its fields are settings, Estimate
// never changes them, and what it fits comes back in the Result. So one
// estimator may run on many datasets at once (the bootstrap does).
type Estimator interface {
	// Name is the estimator's name in output, e.g. "wis-stepwise".
	Name() string
	// Estimate returns the estimate of R^T_pi for discount gamma in (0, 1].
	Estimate(d *dataset.Dataset, gamma float64) (Result, error)
}

// Trained reports whether r holds what FittedSums needs: a model its
// learner trained, or a bch-kernel fit's value test.
func (r Result) Trained() bool { return r.fitted != nil }

// Result is an estimate with the weights behind it.
type Result struct {
	Value float64
	// Estimand is the quantity Value targets (Horizon or LongRun).
	Estimand Estimand
	// Weights are the final, non-negative weights the estimate places on
	// its units (episodes for trajectory-wise estimators, steps for the
	// others), for diagnostics such as the effective sample size. Nil for
	// estimators that do not weight data (model-based, on-policy).
	Weights []float64
	// Model is what the estimator fitted, for diagnostics and figures: a
	// ratio.Model for the density-ratio estimators, a *SolvedCountModel for
	// the model-based one; nil for the others.
	Model any
	// fitted is the learner's whole fitted model where it trains (every
	// network of bch-neural's ensemble, before the middle half is kept),
	// or the value test of a bch-kernel fit (kernelTest): FittedSums
	// evaluates the one, or re-solves the loss with the other, over
	// bootstrap copies.
	fitted any
	// Warnings are what the estimator has to say about its own fit, in
	// plain words, each starting with its name.
	Warnings []string
	// Learner names the learners behind the estimate ("tabular",
	// "linear", "neural"; "tabular/tabular" for a ratio and a value
	// model), empty for estimators that learn nothing.
	Learner string
	// Transient is, for the density-ratio estimators, the difference
	// between their weighted mean reward over the first and over the
	// second half of every episode's steps (NaN for the others). Under
	// the long-run estimand the two halves agree up to noise; logs that
	// start from a reset and have not mixed make them differ, and the
	// long-run value then differs from the T-step one. 0 for estimators
	// that do not compute it.
	Transient float64
	// TransientSE is Transient's standard error across episodes (delta
	// method, clustered by episode), so that a transient can be told from
	// noise without an interval; 0 when not computed (streams).
	TransientSE float64
	// SE is the estimate's standard error from its influence function,
	// clustered by episode (the doubly robust estimator), NaN or 0 when
	// the estimator has none.
	SE float64
	// Restarts are, for an estimator whose model averages several fits
	// (ratio.Averaged: bch-neural's ensemble), the estimate each fit
	// gives on its own, in fit order; their spread is the training's
	// share of the estimate's uncertainty. Nil for the others.
	Restarts []float64
	// ModelClass names the function class a learner on real states chose
	// from the data ("poly4"; see ope/selection.go), "" where nothing
	// was chosen. (Model, the fitted model itself, keeps its name.)
	ModelClass string
	// Selection holds the held-out score of every class the learner
	// chose among, in the order of its candidates; nil where nothing was
	// chosen.
	Selection []ClassScore
}

// checkGamma returns an error unless 0 < gamma <= 1.
func checkGamma(gamma float64) error {
	if !(gamma > 0 && gamma <= 1) {
		return fmt.Errorf("ope: discount %v outside (0, 1]", gamma)
	}
	return nil
}

// Reseeder is implemented by estimators whose fit draws random numbers
// (a neural learner's training): the same estimator with another training
// seed. Bootstrap.Run gives each resample its own, so that an interval
// accounts for every source of randomness of its estimator.
type Reseeder interface {
	Reseed(seed uint64) Estimator
}
