package cli

import (
	"fmt"
	"math"
	"strings"
)

// rowWarnings are the warnings that compare a report's rows once their
// intervals are known: the transient of each density-ratio row, and rows
// that estimate one value with intervals that do not overlap.
func rowWarnings(rep *estimateReport) []string {
	out := append(transientWarnings(rep), disagreementWarnings(rep)...)
	return append(out, valueMisfitWarnings(rep)...)
}

// valueMisfitWarnings says on fqe's row what dr's correction says of the
// value model they share: when dr (ratio/value) and fqe (value) estimate
// the same value and differ by more than 3 of dr's standard errors, the
// correction is the value model's bias on these logs, which fqe's
// interval does not count. An audit's 2-d world with a reward the
// quadratic features cannot represent had fqe at 0.0475 [0.0376, 0.0571]
// against the truth -0.0191, its error not falling with n (+0.066 at
// n = 3200), and only dr's row said so. (It needs dr in the run; dr's
// own row has ope's largeCorrection.)
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
				out = append(out, fmt.Sprintf("fqe: its estimate lies %.3g from dr's, %.0f of dr's standard errors: dr's correction says that fqe's value model (%s) misfits these logs by about that much, a bias fqe's interval does not count; prefer dr, or try a richer value model (--value-model)",
					gap, z, f.Model))
			}
		}
	}
	return out
}

// disagreementWarnings says when two rows that estimate the same value
// have intervals that do not overlap: the truth cannot lie in both, so at
// least one of them is biased on these logs or its interval is too
// narrow, whatever the other rows say. The rows of one estimand are
// compared (at gamma < 1 with gamma^T below transientDiscountFloor the
// horizon and long-run values agree to that fraction of the rewards'
// range, so all rows are); naive is left out, since it estimates the
// behavior's value. Of the pairs that do not overlap, the one furthest
// apart is named. Two unbiased estimators' 95% intervals miss each other
// rarely (at equal standard errors, independent, the gap needs 2.77 of
// its own standard deviations: p = 0.006; rows of the same log are
// positively correlated, which makes it rarer). On the README's Pendulum
// at gamma = 0.99 it names bch-neural and bch-kernel, which the kernel
// loss cannot tell apart there (the continuous-states section).
func disagreementWarnings(rep *estimateReport) []string {
	oneValue := rep.Data.Gamma < 1 && math.Pow(rep.Data.Gamma, float64(rep.Data.MinLength)) < transientDiscountFloor
	type side struct {
		row   *estimateRow
		bound float64
	}
	groups := map[string][2]side{} // per estimand: the highest low end, the lowest high end
	var order []string
	count := map[string][][2]*estimateRow{}
	for i := range rep.Estimates {
		r := &rep.Estimates[i]
		if r.Estimate == nil || r.CILow == nil || r.CIHigh == nil || r.Estimator == "naive" {
			continue
		}
		key := r.Estimand
		if oneValue {
			key = ""
		}
		g, seen := groups[key]
		if !seen {
			order = append(order, key)
			g = [2]side{{r, *r.CILow}, {r, *r.CIHigh}}
		}
		for j := range i {
			o := &rep.Estimates[j]
			if o.Estimate == nil || o.CILow == nil || o.CIHigh == nil || o.Estimator == "naive" || !oneValue && o.Estimand != key {
				continue
			}
			if *r.CILow > *o.CIHigh || *o.CILow > *r.CIHigh {
				count[key] = append(count[key], [2]*estimateRow{o, r})
			}
		}
		if *r.CILow > g[0].bound {
			g[0] = side{r, *r.CILow}
		}
		if *r.CIHigh < g[1].bound {
			g[1] = side{r, *r.CIHigh}
		}
		groups[key] = g
	}
	var out []string
	for _, key := range order {
		pairs := count[key]
		if len(pairs) == 0 {
			continue
		}
		hi, lo := groups[key][0].row, groups[key][1].row // hi's interval lies above lo's
		what := "the " + key + " value"
		if key == "" {
			what = fmt.Sprintf("one value (at gamma = %g the horizon and long-run values agree here)", rep.Data.Gamma)
		}
		more := ""
		if len(pairs) > 1 {
			more = fmt.Sprintf(" (%d pairs of rows do not overlap; these two are furthest apart)", len(pairs))
		}
		out = append(out, fmt.Sprintf("%s and %s both estimate %s, but their intervals do not overlap ([%.4g, %.4g] against [%.4g, %.4g])%s: at least one of them is biased on these logs or its interval is too narrow; trust neither until you know which (the README's \"Which estimator to trust first\")",
			lo.Estimator, hi.Estimator, what, *lo.CILow, *lo.CIHigh, *hi.CILow, *hi.CIHigh, more))
	}
	return out
}
