package value

import (
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/ihope-ope/ihope/dataset"
)

// foldFitter is implemented by the learners whose fits on the training
// sets of Select's folds can share one pass over the data (Linear).
// fitFolds returns the K models, model k fitted on every fold but
// held[k] (the held-out episodes of fold k), and why a fit failed; maxLen
// is the longest training episode of each fold (a Finite fit's
// horizons).
type foldFitter interface {
	fitFolds(d *dataset.Dataset, held []*dataset.Dataset, maxLen []int, gamma float64, pi Target) ([]Model, []error)
}

var _ foldFitter = Linear{}

// fitFolds fits LSTD-Q on the K training sets of a K-fold split in one
// pass over the data: the moments of each held-out fold are summed once,
// and fold k's training moments are the sum of the other folds'. Fitting
// each training set anew passes K - 1 times over the data per candidate
// (4 with Select's 5 folds).
//
// The features are standardised over the whole of d, not over each
// training set. The polynomial features of one degree span the same
// functions under any affine change of the state, so the fits differ
// from separate ones only through the relative ridge (1e-6 of the mean
// diagonal) and rounding; random Fourier features take their median
// distance from all of d.
func (l Linear) fitFolds(d *dataset.Dataset, held []*dataset.Dataset, maxLen []int, gamma float64, pi Target) ([]Model, []error) {
	K := len(held)
	models, errs := make([]Model, K), make([]error, K)
	fail := func(err error) ([]Model, []error) {
		for k := range errs {
			errs[k] = err
		}
		return models, errs
	}
	if err := checkDiscount("linear", gamma); err != nil {
		return fail(err)
	}
	set, err := l.settings()
	if err != nil {
		return fail(err)
	}
	tgt, err := newRealTarget("linear", d, pi)
	if err != nil {
		return fail(err)
	}
	if d.NumSteps() == 0 {
		return fail(errors.New("value: linear: the logs have no steps"))
	}
	f, err := newLinFeatures(d, set.spec)
	if err != nil {
		return fail(err)
	}
	ws := make([]*linWorker, K)
	var g errgroup.Group
	g.SetLimit(set.workers)
	for k := range K {
		g.Go(func() error {
			ws[k] = newLinWorker(f, tgt, gamma, l.Finite)
			ws[k].accumulate(held[k], 0, held[k].NumSteps())
			return nil
		})
	}
	_ = g.Wait()
	for k, w := range ws {
		if w.err != nil {
			return fail(fmt.Errorf("fold %d's episodes: %w", k, w.err))
		}
	}
	for k := range K {
		acc := newLinWorker(f, tgt, gamma, l.Finite)
		for o, w := range ws {
			if o != k {
				acc.add(w)
			}
		}
		m, err := fromMoments(set, l.Finite, f, tgt, gamma, acc, maxLen[k])
		if err != nil {
			errs[k] = err
			continue
		}
		models[k] = m
	}
	return models, errs
}
