package ope

import (
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
)

// The in-memory Estimate of an estimator defined by its one-pass sums
// (naive, the IS family, bch-tabular, and the tabular forms of
// model-based, fqe, mwl, dualdice and mql) is the fold of those sums over
// the episodes of one dataset: one definition of each estimate, whether
// the episodes come from memory, from shards (package stream) or from
// Beam's workers.

// unitWeigher is implemented by sums that can give the per-unit weights
// the diagnostics read (Result.Weights: KishESS, the weight warnings, the
// report's histogram), which the sums do not keep: a second walk over
// the episodes of d, the ones folded into copy 0, with res copy 0's
// finished estimate.
type unitWeigher interface {
	unitWeights(d *dataset.Dataset, res Result) ([]float64, Unit, error)
}

// foldSums adds every episode of d once, in order, to one copy of e's
// sums and finishes it; for sums that are a unitWeigher, Result.Weights
// are the per-unit weights of d's steps or episodes (the Unit returned).
func foldSums(e Summer, d *dataset.Dataset, gamma float64) (Result, Unit, error) {
	s, err := e.NewSums(gamma, 1)
	if err != nil {
		return Result{}, UnitNone, err
	}
	one := []int{1}
	for ep := range d.NumEpisodes() {
		if err := s.Add(d, ep, one); err != nil {
			return Result{}, UnitNone, err
		}
	}
	res, _, err := s.Finish(0)
	if err != nil {
		return Result{}, UnitNone, err
	}
	w, ok := s.(unitWeigher)
	if !ok {
		return res, UnitNone, nil
	}
	var unit Unit
	res.Weights, unit, err = w.unitWeights(d, res)
	return res, unit, err
}

// foldEstimate is the in-memory Estimate of naive and the IS family: the
// discount and the episodes checked, then check (nil: none) on the log as
// given, the log padded to its horizon when episodes end in a terminal
// state (absorbing), the fold of the sums (foldSums), and per-step
// weights kept for the logged steps only.
func foldEstimate(e Summer, d *dataset.Dataset, gamma float64, est Estimand, check func(*dataset.Dataset) error) (Result, error) {
	name := e.Name()
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	if check != nil {
		if err := check(d); err != nil {
			return Result{}, err
		}
	}
	a, err := absorbing(name, d, gamma, est)
	if err != nil {
		return Result{}, err
	}
	res, unit, err := foldSums(e, a.d, gamma)
	if err != nil {
		return Result{}, err
	}
	if unit == UnitStep {
		res.Weights = a.stepWeights(res.Weights)
	}
	return res, nil
}
