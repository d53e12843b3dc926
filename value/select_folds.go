package value

import (
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/ihope-ope/ihope/dataset"
)

// fitFolds fits LSTD-Q for every Linear of ls on the K training sets of a
// K-fold split in one pass over the data: the moments of each held-out
// fold (held[k]) are summed once, and fold k's training moments are the
// sum of the other folds'. Fitting each training set anew passes K - 1
// times over the data per learner (4 with Select's 5 folds). It returns
// the K models of each learner (model k fitted on every fold but k; maxLen
// is the longest training episode of each fold, a Finite fit's horizons)
// and why a fit failed.
//
// The learners of ls must differ in Degree only, and when there are
// several their features must be "poly": the moments are summed once, for
// the largest degree, and a smaller degree's are their leading block
// (linWorker.sub), since newMonomials lists the terms of every degree after
// those of the lower ones.
//
// The features are standardised over the whole of d, not over each
// training set. The polynomial features of one degree span the same
// functions under any affine change of the state, so the fits differ
// from separate ones only through the relative ridge (1e-6 of the mean
// diagonal) and rounding; random Fourier features take their median
// distance from all of d.
func fitFolds(d *dataset.Dataset, held []*dataset.Dataset, maxLen []int, gamma float64, pi Target, ls []Linear) ([][]Model, [][]error) {
	K := len(held)
	models, errs := make([][]Model, len(ls)), make([][]error, len(ls))
	for i := range ls {
		models[i], errs[i] = make([]Model, K), make([]error, K)
	}
	fail := func(i int, err error) {
		for k := range errs[i] {
			errs[i][k] = err
		}
	}
	failAll := func(err error) ([][]Model, [][]error) {
		for i := range ls {
			fail(i, err)
		}
		return models, errs
	}
	if err := checkDiscount("linear", gamma); err != nil {
		return failAll(err)
	}
	sets, feats := make([]linearSettings, len(ls)), make([]*linFeatures, len(ls))
	var tgt realTarget // the same for every learner: it reads d and pi only
	top := -1          // the learner of the largest degree, whose moments are summed
	for i, l := range ls {
		var err error
		if sets[i], tgt, feats[i], err = l.prepare(d, pi); err != nil {
			fail(i, err)
			continue
		}
		if len(ls) > 1 && sets[i].spec.kind != "poly" {
			return failAll(fmt.Errorf("value: linear: features %q have no nested degrees", sets[i].spec.kind))
		}
		if top < 0 || sets[i].spec.degree > sets[top].spec.degree {
			top = i
		}
	}
	if top < 0 {
		return models, errs
	}
	l, f := ls[top], feats[top]
	ws := make([]*linWorker, K)
	var g errgroup.Group
	g.SetLimit(sets[top].workers)
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
			return failAll(fmt.Errorf("fold %d's episodes: %w", k, w.err))
		}
	}
	for k := range K {
		acc := newLinWorker(f, tgt, gamma, l.Finite)
		for o, w := range ws {
			if o != k {
				acc.add(w)
			}
		}
		for i := range ls {
			if feats[i] == nil {
				continue
			}
			w := acc
			if i != top {
				w = acc.sub(feats[i])
			}
			m, err := fromMoments(sets[i], ls[i].Finite, feats[i], tgt, gamma, w, maxLen[k])
			if err != nil {
				errs[i][k] = err
				continue
			}
			models[i][k] = m
		}
	}
	return models, errs
}

// sub returns the moments of the features f of a smaller polynomial
// degree than w's, on the same data and standardisation: f's P features
// per block are the first P of each of w's blocks, so every moment of f
// is an entry of w's (see linWorker for the layout of a row).
func (w *linWorker) sub(f *linFeatures) *linWorker {
	s := newLinWorker(f, w.target, w.gamma, w.finite)
	P, p, Pw, pw := f.P, f.p, w.f.P, w.f.p
	for k := range w.K {
		src, dst := w.m[k*w.Pp*w.Qp:(k+1)*w.Pp*w.Qp], s.m[k*s.Pp*s.Qp:(k+1)*s.Pp*s.Qp]
		for i := range P {
			from, to := src[i*w.Qp:(i+1)*w.Qp], dst[i*s.Qp:(i+1)*s.Qp]
			if w.finite { // [x, psi, r, 1]
				copy(to[:P], from[:P])
				for b := range w.K {
					copy(to[P+b*P:P+(b+1)*P], from[Pw+b*Pw:Pw+b*Pw+P])
				}
				to[P+p], to[P+p+1] = from[Pw+pw], from[Pw+pw+1]
				continue
			}
			for b := range w.K { // [phi - gamma psi, r, 1]
				copy(to[b*P:(b+1)*P], from[b*Pw:b*Pw+P])
			}
			to[p], to[p+1] = from[pw], from[pw+1]
		}
		copy(s.gdiag[k*P:(k+1)*P], w.gdiag[k*Pw:k*Pw+P])
	}
	s.n, s.skipped, s.noNext = w.n, w.skipped, w.noNext
	return s
}
