package cli

import (
	"fmt"
	"math"
	"strings"
)

// rowWarnings are the warnings that compare a report's rows once their
// intervals are known: the transient of each density-ratio row, rows
// that estimate one value with intervals that do not overlap, and fqe
// against dr's correction of their shared value model.
func rowWarnings(rep *estimateReport) []string {
	out := append(transientWarnings(rep), disagreementWarnings(rep)...)
	return append(out, valueMisfitWarnings(rep)...)
}

// rowInterval is a row's interval for the comparison: the bootstrap's, or
// else the Wald one (dr with --bootstrap 0).
type rowInterval struct {
	names    []string // the rows of one estimate and interval (on tabular logs mwl, mql and dualdice agree)
	estimand string
	lo, hi   float64
	fqeDR    string // for fqe and dr, their value model: the pair is valueMisfitWarnings' business
}

// disagreementWarnings says when two rows that estimate the same value
// have intervals that do not overlap: the truth cannot lie in both, so at
// least one of them is biased on these logs or its interval is too
// narrow, whatever the other rows say. Rows are compared within one
// estimand; at gamma < 1 rows of the two estimands are compared too when
// the gap between the values, at most gamma^T times the logged rewards'
// range, is below a tenth of both half-widths. naive is left out, since
// it estimates the behavior's value, and so are fqe against dr with the
// same value model (valueMisfitWarnings says more). Rows with the same
// estimate and interval count as one. Of the pairs apart, the one
// furthest apart is named, with their number. Two unbiased estimators'
// 95% intervals miss each other rarely (independent, equal standard
// errors: the gap must exceed 2.77 of its standard deviations, p =
// 0.006; rows of one log are positively correlated, rarer still). On the
// README's Pendulum at gamma = 0.99 it names bch-neural against
// wis-stepwise, which nothing spoke of before (the kernel loss cannot
// place the discounted ratio there: the continuous-states section).
func disagreementWarnings(rep *estimateReport) []string {
	var ivs []*rowInterval
	for _, r := range rep.Estimates {
		if r.Estimate == nil || r.Estimator == "naive" {
			continue
		}
		lo, hi := r.CILow, r.CIHigh
		if lo == nil || hi == nil {
			lo, hi = r.WaldLow, r.WaldHigh
		}
		if lo == nil || hi == nil {
			continue
		}
		iv := &rowInterval{names: []string{r.Estimator}, estimand: r.Estimand, lo: *lo, hi: *hi}
		switch r.Estimator {
		case "fqe":
			iv.fqeDR = r.Model
		case "dr":
			if _, value, ok := strings.Cut(r.Model, "/"); ok {
				iv.fqeDR = value
			}
		}
		merged := false
		for _, o := range ivs {
			if o.estimand == iv.estimand && near(o.lo, iv.lo) && near(o.hi, iv.hi) && o.fqeDR == "" && iv.fqeDR == "" {
				o.names, merged = append(o.names, r.Estimator), true
				break
			}
		}
		if !merged {
			ivs = append(ivs, iv)
		}
	}
	gap := math.Inf(1) // bound on |horizon - long-run|
	if t := discountTail(rep.Data.Gamma, rep.Data.MinLength); t < 1 && rep.Data.rewardRange >= 0 {
		gap = t * rep.Data.rewardRange
	}
	var pairs int
	var best [2]*rowInterval
	bestGap := 0.0
	for i, a := range ivs {
		for _, b := range ivs[:i] {
			if a.fqeDR != "" && a.fqeDR == b.fqeDR && a.names[0] != b.names[0] {
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
				best, bestGap = [2]*rowInterval{lo, hi}, d
			}
		}
	}
	if pairs == 0 {
		return nil
	}
	lo, hi := best[0], best[1]
	what := "the " + lo.estimand + " value"
	if lo.estimand != hi.estimand {
		what = fmt.Sprintf("one value (at gamma = %g the horizon and long-run values differ here by at most %.2g, a tenth of the intervals' half-widths)", rep.Data.Gamma, gap)
	}
	more := ""
	if pairs > 1 {
		more = fmt.Sprintf(" (%d pairs of rows do not overlap; these two are furthest apart)", pairs)
	}
	name := func(iv *rowInterval) string { return strings.Join(iv.names, "/") }
	return []string{fmt.Sprintf("%s and %s both estimate %s, but their intervals do not overlap ([%.4g, %.4g] against [%.4g, %.4g])%s: at least one of them is biased on these logs or its interval is too narrow; trust neither until you know which (the README's \"Which estimator to trust first\")",
		name(lo), name(hi), what, lo.lo, lo.hi, hi.lo, hi.hi, more)}
}

// valueMisfitWarnings says on fqe's row what dr's correction says of the
// value model they share: when dr (ratio/value) and fqe (value) estimate
// the same value and differ by more than 3 of dr's standard errors, the
// value model misfits these logs, a bias fqe's interval does not count
// (dr's value models are cross-fitted, fqe's is fitted on all the logs,
// so the gap is not exactly dr's correction). An audit's 2-d world with a
// reward the quadratic features cannot represent had fqe at 0.0475
// [0.0376, 0.0571] against the truth -0.0191, its error not falling with
// n (+0.066 at n = 3200), and only dr's row said so. (It needs dr in the
// run; dr's own row has ope's largeCorrection.)
func valueMisfitWarnings(rep *estimateReport) []string {
	var out []string
	for _, f := range rep.Estimates {
		if f.Estimator != "fqe" || f.Estimate == nil {
			continue
		}
		for _, r := range rep.Estimates {
			if r.Estimator != "dr" || r.Estimate == nil || r.SE == nil || !(*r.SE > 0) || r.Estimand != f.Estimand ||
				!strings.HasSuffix(r.Model, "/"+f.Model) {
				continue
			}
			gap := *f.Estimate - *r.Estimate
			if z := math.Abs(gap) / *r.SE; z > 3 {
				side := "above"
				if gap < 0 {
					side = "below"
				}
				out = append(out, fmt.Sprintf("fqe: its estimate lies %.3g %s dr's, %.0f of dr's standard errors: dr's correction says that their value model (%s) misfits these logs, a bias fqe's interval does not count; dr rests on its ratio model instead (trust it as far as the ratio's own warnings allow), or try a richer value model (--value-model)",
					math.Abs(gap), side, z, f.Model))
			}
		}
	}
	return out
}

// near reports whether a and b agree to 1e-9 of their size: two rows'
// ends that differ only by the rounding of two exact computations (mwl,
// mql and dualdice on a tabular log).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1e-300) }
