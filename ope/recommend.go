package ope

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Recommendation is the estimate Recommend chooses among a report's rows:
// the chosen row's name, estimate and interval, and why in one sentence.
// Estimator is "" (and the numbers NaN) when the rule cannot choose.
type Recommendation struct {
	Estimator  string
	Estimate   float64
	Low, High  float64
	Why        string
	Candidates []string // the rows that competed, widest interval first
	Excluded   []string // the rows left out, each with its reason
}

// Recommend chooses the estimate to use among rows of one target policy,
// for the estimand asked for, by Lepski's method (as in SLOPE, Su,
// Srinath and Krishnamurthy 2020):
//
//  1. Candidates are the rows of that estimand with an estimate and an
//     interval, inside the rewards' range [lo, hi] (a normalised value
//     cannot leave it), whose weights do not collapse (Row.Collapsed),
//     and that estimate the target's value (not naive's behavior value).
//  2. They are ordered by interval width, widest first: wider intervals
//     belong to the less biased, more variable estimators.
//  3. The choice is the narrowest candidate whose interval meets the
//     interval of every wider candidate: no wider, less biased estimate
//     shows it biased, and no narrower one is as safe.
//  4. If the two widest candidates' intervals do not meet, the rule
//     cannot tell which is biased and chooses none.
//
// Rows with the same estimate and interval (mwl, mql and dualdice on a
// tabular log) count once, under the first name.
func Recommend(rows []Row, estimand Estimand, lo, hi float64) Recommendation {
	rec := Recommendation{Estimate: math.NaN(), Low: math.NaN(), High: math.NaN()}
	tol := 1e-9 * math.Max(1, math.Max(math.Abs(lo), math.Abs(hi)))
	var cands []Row
	for _, r := range rows {
		e, _ := Lookup(r.Estimator)
		reason := ""
		switch {
		case r.Estimand != estimand:
			continue // another estimand: not a candidate, not a surprise
		case e.Reads == ReadsBehavior:
			reason = "estimates the behavior's value"
		case math.IsNaN(r.Estimate) || math.IsInf(r.Estimate, 0):
			reason = "no estimate"
		case math.IsNaN(r.Low) || math.IsNaN(r.High):
			reason = "no interval"
		case r.Estimate < lo-tol || r.Estimate > hi+tol:
			reason = fmt.Sprintf("outside the rewards' range [%.4g, %.4g]", lo, hi)
		case r.Collapsed:
			reason = "its weights collapse"
		}
		if reason != "" {
			rec.Excluded = append(rec.Excluded, r.Estimator+": "+reason)
			continue
		}
		if slices.ContainsFunc(cands, func(c Row) bool { return c.Estimate == r.Estimate && c.Low == r.Low && c.High == r.High }) {
			continue
		}
		cands = append(cands, r)
	}
	width := func(r Row) float64 { return r.High - r.Low }
	slices.SortStableFunc(cands, func(a, b Row) int {
		switch {
		case width(a) > width(b):
			return -1
		case width(a) < width(b):
			return 1
		}
		return 0
	})
	for _, c := range cands {
		rec.Candidates = append(rec.Candidates, c.Estimator)
	}
	meet := func(a, b Row) bool { return a.Low <= b.High && b.Low <= a.High }
	iv := func(r Row) string { return fmt.Sprintf("%s [%.4g, %.4g]", r.Estimator, r.Low, r.High) }
	switch len(cands) {
	case 0:
		rec.Why = fmt.Sprintf("no estimator of the %s value gave an estimate with an interval that the rewards allow", estimand)
		if len(rec.Excluded) > 0 {
			rec.Why += " (" + strings.Join(rec.Excluded, "; ") + ")"
		}
		return rec
	case 1:
		rec.set(cands[0])
		rec.Why = fmt.Sprintf("%s is the only estimator of the %s value with an interval the rewards allow", cands[0].Estimator, estimand)
		return rec
	}
	if !meet(cands[0], cands[1]) {
		rec.Why = fmt.Sprintf("the two widest intervals, %s and %s, do not meet: at least one of them is biased on this log and the rule cannot tell which, so no estimate is recommended", iv(cands[0]), iv(cands[1]))
		return rec
	}
	pick := 0
	for k := 1; k < len(cands); k++ {
		ok := true
		for j := range k {
			ok = ok && meet(cands[k], cands[j])
		}
		if ok {
			pick = k
		}
	}
	rec.set(cands[pick])
	c := cands[pick]
	switch {
	case pick == len(cands)-1:
		rec.Why = fmt.Sprintf("%s has the narrowest interval, and it meets every wider one (Lepski's rule over %d estimators)", c.Estimator, len(cands))
	default:
		var missed []string
		for _, n := range cands[pick+1:] {
			missed = append(missed, n.Estimator)
		}
		rec.Why = fmt.Sprintf("%s has the narrowest interval that meets every wider one (Lepski's rule over %d estimators); the narrower %s miss a wider interval, so they may be biased", c.Estimator, len(cands), strings.Join(missed, ", "))
	}
	return rec
}

func (r *Recommendation) set(c Row) {
	r.Estimator, r.Estimate, r.Low, r.High = c.Estimator, c.Estimate, c.Low, c.High
}
