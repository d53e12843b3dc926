package evaluate

import (
	"math"

	"github.com/ihope-ope/ihope/ope"
)

// rowWarnings are the warnings that compare a report's rows once their
// intervals are known: the transient of each density-ratio row, rows
// that estimate one value with intervals that do not overlap
// (ope.DisagreementWarning), and a value model's reading against its
// corrected one (ope.ValueMisfitWarnings).
func rowWarnings(rep *Report) []string {
	out := transientWarnings(rep)
	rows := compareRows(rep)
	gap := math.Inf(1) // bound on |horizon - long-run|
	if t := discountTail(rep.Data.Gamma, rep.Data.MinLength); t < 1 && rep.Data.rewardRange >= 0 {
		gap = t * rep.Data.rewardRange
	}
	if w := ope.DisagreementWarning(rows, rep.Data.Gamma, gap); w != "" {
		out = append(out, w)
	}
	return append(out, ope.ValueMisfitWarnings(rows)...)
}

// compareRows returns the rows of rep that gave an estimate, as the
// comparisons read them: the bootstrap's interval, or else the Wald one
// (dr with --bootstrap 0), NaN if none.
func compareRows(rep *Report) []ope.Row {
	var rows []ope.Row
	for _, r := range rep.Estimates {
		if r.Estimate == nil {
			continue
		}
		rows = append(rows, compareRow(r))
	}
	return rows
}

// compareRow is one row with an estimate as the comparisons read it.
func compareRow(r Row) ope.Row {
	row := ope.Row{Estimator: r.Estimator, Estimand: ope.Estimand(r.Estimand), Learner: r.Model, Estimate: *r.Estimate,
		Low: math.NaN(), High: math.NaN()}
	switch {
	case r.CILow != nil && r.CIHigh != nil:
		row.Low, row.High = *r.CILow, *r.CIHigh
	case r.WaldLow != nil && r.WaldHigh != nil:
		row.Low, row.High = *r.WaldLow, *r.WaldHigh
	}
	if r.SE != nil {
		row.SE = *r.SE
	}
	return row
}
