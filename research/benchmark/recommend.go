package benchmark

import (
	"math"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/ope"
)

// Recommended is the leaderboard's row of the recommended estimate: in
// every cell, the record ope.Recommend chooses among the cell's records
// of the horizon value (the estimand the benchmark asks for), as ihope
// estimate's "recommended" does: among the rows ihope estimate prints
// without --estimators (the registry's default set: no variant, not
// is-trajectory or is-stepwise), leaving out those whose diagnostics
// distrust them (ope.Distrust: their bootstrap finds them biased) and
// those that assume Markov states on a log that fails ope.MarkovTest. A
// cell where the rule chooses none counts as failed.
const Recommended = "recommended"

// withRecommended returns l with the recommended estimate's record
// appended (the line's other records are shared, not changed). lo and
// hi are the world's reward range.
func withRecommended(l results.Line, lo, hi float64) results.Line {
	var rows []ope.Row
	byName := map[string]results.Record{}
	for _, r := range l.Records {
		if en, ok := ope.Lookup(r.Estimator); !ok || !en.Default() {
			continue // a variant, or not in ihope estimate's default set
		}
		est := r.Estimand
		if est == "" {
			est = string(ope.Horizon)
		}
		row := ope.Row{Estimator: r.Estimator, Estimand: ope.Estimand(est), Estimate: float64(r.Estimate), Low: math.NaN(), High: math.NaN(),
			Collapsed: r.Collapsed}
		if r.Low != nil && r.High != nil {
			row.Low, row.High = float64(*r.Low), float64(*r.High)
			if r.BootstrapBias != nil {
				row.Failed = ope.Distrust(row.Low, row.High, float64(*r.BootstrapBias), r.BootstrapFailures, r.Resamples, math.NaN())
			}
		}
		rows = append(rows, row)
		byName[r.Estimator] = r
	}
	if p, ok := l.Metrics[MarkovMetric]; ok && float64(p) <= ope.MarkovAlpha {
		for i := range rows {
			if en, ok := ope.Lookup(rows[i].Estimator); ok && en.Markov {
				rows[i].Failed = "the logged states do not look Markov"
			}
		}
	}
	rec := ope.Recommend(rows, ope.Horizon, lo, hi)
	out := l
	out.Records = append(append([]results.Record(nil), l.Records...), recommendedRecord(l, rec, byName))
	return out
}

func recommendedRecord(l results.Line, rec ope.Recommendation, byName map[string]results.Record) results.Record {
	if rec.Estimator == "" {
		return results.Record{Estimator: Recommended, Estimand: string(ope.Horizon), Estimate: results.Float(math.NaN()),
			SqError: results.Float(math.NaN()), Error: rec.Why}
	}
	r := byName[rec.Estimator]
	r.Estimator = Recommended
	return r
}

// rewardRange returns the least and greatest reward of the world's table.
func rewardRange(w *World) (lo, hi float64) {
	if w.Table == nil {
		return math.Inf(-1), math.Inf(1)
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for s := range w.Table.NumStates() {
		for a := range w.Table.NumActions() {
			for _, o := range w.Table.Outcomes(s, a) {
				lo, hi = min(lo, o.Reward), max(hi, o.Reward)
			}
		}
	}
	return lo, hi
}
