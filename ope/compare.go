package ope

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Reading says what kind of number an estimator gives, for the
// comparisons of rows (Entry.Reads).
type Reading int

const (
	// ReadsLogs: the target's value, weighed or fitted from the logs.
	ReadsLogs Reading = iota
	// ReadsBehavior: the behavior's own value (naive), no estimate of the
	// target's.
	ReadsBehavior
	// ReadsValueModel: a value model's reading at the start states (fqe);
	// Result.Learner names the model.
	ReadsValueModel
	// ReadsCorrectedModel: a value model's reading corrected by a ratio
	// (dr); Result.Learner is "ratio/value".
	ReadsCorrectedModel
	// ReadsMinimaxModel: a q-function fitted by a minimax loss, read at
	// the start states (mql): as biased as its function class, like a
	// value model, but not the model dr corrects, so the comparisons of
	// a value model with its corrected reading leave it out.
	ReadsMinimaxModel
)

// Row is what the comparisons of a report's rows read of one estimator's
// result: its registry name, estimand, learner (Result.Learner), estimate,
// interval (Low, High; NaN if none) and standard error (0 if none), and
// whether its weights collapse (WeightSummaryWarnings' thresholds).
type Row struct {
	Estimator string
	Estimand  Estimand
	Learner   string
	Estimate  float64
	Low, High float64
	SE        float64
	Collapsed bool
	// Failed, if not "", is why the row's own diagnostics distrust it
	// (its bootstrap finds it biased, say): Recommend leaves it out.
	Failed string
}

// valueModel returns the value model a row reads (fqe's learner, dr's
// after the "/"), and "" for the other rows.
func (r Row) valueModel() string {
	e, _ := Lookup(r.Estimator)
	switch e.Reads {
	case ReadsValueModel:
		return r.Learner
	case ReadsCorrectedModel:
		if _, v, ok := strings.Cut(r.Learner, "/"); ok {
			return v
		}
	}
	return ""
}

// DisagreementWarning says when two rows that estimate the same value
// have intervals that do not overlap: the truth cannot lie in both, so at
// least one of them is biased on these logs or its interval is too
// narrow, whatever the other rows say. Rows are compared within one
// estimand; at gamma < 1 rows of the two estimands are compared too when
// gap, the bound on the difference between the two values (gamma^T times
// the rewards' range; +Inf at gamma = 1), is below a tenth of both
// half-widths. A row of the behavior's value (naive) is left out, and so
// is a value model's reading against its corrected reading (fqe against
// dr of one value model: ValueMisfitWarnings says more). Rows with the
// same estimate and interval count as one (mwl, mql and dualdice on a
// tabular log). Of the pairs apart, the one furthest apart is named, with
// their number; "" if none. Two unbiased estimators' 95% intervals miss
// each other rarely (independent, equal standard errors: the gap must
// exceed 2.77 of its standard deviations, p = 0.006; rows of one log are
// positively correlated, rarer still). On the README's Pendulum at
// gamma = 0.99 it names bch-neural against wis-stepwise, which nothing
// spoke of before (the kernel loss cannot place the discounted ratio
// there).
func DisagreementWarning(rows []Row, gamma, gap float64) string {
	type group struct {
		names    []string
		estimand Estimand
		lo, hi   float64
		model    string // a value model's, for the fqe-dr exception
	}
	var gs []*group
	for _, r := range rows {
		if e, _ := Lookup(r.Estimator); e.Reads == ReadsBehavior || math.IsNaN(r.Low) || math.IsNaN(r.High) {
			continue
		}
		g := &group{names: []string{r.Estimator}, estimand: r.Estimand, lo: r.Low, hi: r.High, model: r.valueModel()}
		merged := false
		for _, o := range gs {
			if o.estimand == g.estimand && near(o.lo, g.lo) && near(o.hi, g.hi) && o.model == "" && g.model == "" {
				o.names, merged = append(o.names, r.Estimator), true
				break
			}
		}
		if !merged {
			gs = append(gs, g)
		}
	}
	var pairs int
	var best [2]*group
	bestGap := 0.0
	for i, a := range gs {
		for _, b := range gs[:i] {
			if a.model != "" && a.model == b.model {
				continue
			}
			if a.estimand != b.estimand && !(gap <= 0.1*min(a.hi-a.lo, b.hi-b.lo)/2) {
				continue
			}
			lo, hi := a, b // lo's interval below hi's
			if a.lo > b.hi {
				lo, hi = b, a
			} else if !(b.lo > a.hi) {
				continue
			}
			pairs++
			if d := hi.lo - lo.hi; d > bestGap {
				best, bestGap = [2]*group{lo, hi}, d
			}
		}
	}
	if pairs == 0 {
		return ""
	}
	lo, hi := best[0], best[1]
	what := "the " + string(lo.estimand) + " value"
	if lo.estimand != hi.estimand {
		what = fmt.Sprintf("one value (at gamma = %g the horizon and long-run values differ here by at most %.2g, a tenth of the intervals' half-widths)", gamma, gap)
	}
	more := ""
	if pairs > 1 {
		more = fmt.Sprintf(" (%d pairs of rows do not overlap; these two are furthest apart)", pairs)
	}
	return fmt.Sprintf("%s and %s both estimate %s, but their intervals do not overlap ([%.4g, %.4g] against [%.4g, %.4g])%s: at least one of them is biased on these logs or its interval is too narrow; trust neither until you know which (docs/estimators.md, \"Which estimator to trust first\")",
		strings.Join(lo.names, "/"), strings.Join(hi.names, "/"), what, lo.lo, lo.hi, hi.lo, hi.hi, more)
}

// ValueMisfitWarnings says on a value model's row (fqe) what the
// corrected reading of the same model (dr) says of it: when the two
// estimate the same value and differ by more than 3 of dr's standard
// errors, the value model misfits these logs, a bias fqe's interval does
// not count (dr's value models are cross-fitted, fqe's fitted on all the
// logs, so the gap is not exactly dr's correction). An audit's 2-d world
// with a reward the quadratic features cannot represent had fqe at 0.0475
// [0.0376, 0.0571] against the truth -0.0191, its error not falling with
// n (+0.066 at n = 3200), and only dr's row said so (dr's own warning is
// largeCorrection's).
func ValueMisfitWarnings(rows []Row) []string {
	var out []string
	for i, f := range rows {
		if e, _ := Lookup(f.Estimator); e.Reads != ReadsValueModel || math.IsNaN(f.Estimate) {
			continue
		}
		if slices.ContainsFunc(rows[:i], func(o Row) bool { // model-based and the tabular fqe: one model, one warning
			e, _ := Lookup(o.Estimator)
			return e.Reads == ReadsValueModel && o.Estimate == f.Estimate && o.Learner == f.Learner
		}) {
			continue
		}
		for _, r := range rows {
			if e, _ := Lookup(r.Estimator); e.Reads != ReadsCorrectedModel || math.IsNaN(r.Estimate) || !(r.SE > 0) ||
				r.Estimand != f.Estimand || r.valueModel() != f.Learner {
				continue
			}
			gap := f.Estimate - r.Estimate
			if z := math.Abs(gap) / r.SE; z > 3 {
				side := "above"
				if gap < 0 {
					side = "below"
				}
				out = append(out, fmt.Sprintf("%s: its estimate lies %.3g %s %s's, %.2g of %s's standard errors: %s's correction says that their value model (%s) misfits these logs, a bias %s's interval does not count; %s rests on its ratio model instead (trust it as far as the ratio's own warnings allow), or try a richer value model (--value-model)",
					f.Estimator, math.Abs(gap), side, r.Estimator, z, r.Estimator, r.Estimator, f.Learner, f.Estimator, r.Estimator))
			}
		}
	}
	return out
}

// near reports whether a and b agree to 1e-9 of their size: two rows'
// ends that differ only by the rounding of two exact computations (mwl,
// mql and dualdice on a tabular log).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1e-300) }
