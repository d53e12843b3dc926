package evaluate

import (
	"fmt"
	"io"
	"math"

	"github.com/ihope-ope/ihope/ope"
)

// Recommendation is the estimate to use for one target policy
// (ope.Recommend). The JSON names are a contract; estimator and the
// numbers are null when the rule cannot choose.
type Recommendation struct {
	Policy    string   `json:"policy"`
	Estimator *string  `json:"estimator"`
	Estimate  *float64 `json:"estimate"`
	CILow     *float64 `json:"ci_low"`
	CIHigh    *float64 `json:"ci_high"`
	Why       string   `json:"why"`
}

// recommend fills rep.Recommended: one recommendation per target policy,
// among its rows of the estimand the data summary states.
func recommend(rep *Report) {
	lo, hi := valueRange(rep)
	rep.Recommended = []Recommendation{}
	for _, name := range policyNames(rep) {
		var rows []ope.Row
		for _, r := range rep.Estimates {
			if r.Policy != name || r.Estimate == nil {
				continue
			}
			row := compareRow(r)
			row.Collapsed = r.Unit != "" && len(ope.WeightSummaryWarnings(r.Estimator, ope.Unit(r.Unit),
				ope.WeightSummary{ESS: r.ESS, Units: r.Units, MaxShare: share(r.MaxWeightShare)})) > 0
			row.Failed = rep.distrust(r)
			rows = append(rows, row)
		}
		rec := ope.Recommend(rows, ope.Estimand(rep.Data.Estimand), lo, hi)
		info := Recommendation{Policy: name, Why: rec.Why}
		if rec.Estimator != "" {
			info.Estimator = &rec.Estimator
			info.Estimate, info.CILow, info.CIHigh = finitePtr(rec.Estimate), finitePtr(rec.Low), finitePtr(rec.High)
		}
		rep.Recommended = append(rep.Recommended, info)
	}
}

func share(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// printRecommended prints the recommendation of policy name under its
// table.
func printRecommended(out io.Writer, r *Report, name string) {
	for _, rec := range r.Recommended {
		if rec.Policy != name {
			continue
		}
		if rec.Estimator == nil {
			fmt.Fprintf(out, "recommended: none: %s\n", rec.Why)
			continue
		}
		fmt.Fprintf(out, "recommended: %s %s [%s, %s]: %s\n", *rec.Estimator, fmtBound(rec.Estimate), fmtBound(rec.CILow), fmtBound(rec.CIHigh), rec.Why)
	}
}

// valueRange is the range a normalised value cannot leave: the logged
// rewards' (and 0 with terminal episodes, whose absorbing tail pays 0);
// everything when the summary does not know it (no steps summarised).
func valueRange(rep *Report) (lo, hi float64) {
	lo, hi = rep.Data.rewardLow, rep.Data.rewardHigh
	if rep.Data.Terminal > 0 {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	if rep.Data.Steps == 0 || math.IsNaN(lo) || math.IsNaN(hi) || lo > hi {
		return math.Inf(-1), math.Inf(1)
	}
	return lo, hi
}

// outOfRange reports whether v lies outside [lo, hi] beyond rounding.
func outOfRange(v, lo, hi float64) bool {
	tol := 1e-9 * math.Max(1, math.Max(math.Abs(lo), math.Abs(hi)))
	return v < lo-tol || v > hi+tol
}

// distrust returns why the report distrusts row r: its own diagnostics
// (distrusted), or states that do not look Markov for an estimator that
// assumes them (Data.MarkovP).
func (rep *Report) distrust(r Row) string {
	if why := distrusted(r); why != "" {
		return why
	}
	if p := rep.Data.MarkovP; p != nil && *p <= ope.MarkovAlpha {
		if en, ok := ope.Lookup(r.Estimator); ok && en.Markov {
			return fmt.Sprintf("the logged states do not look Markov (p = %.3g)", *p)
		}
	}
	return ""
}

// distrusted returns why a row's own diagnostics distrust it ("" if they
// do not): an interval that keeps a trained model fixed ("fitted", which
// undercovers), or ope.Distrust of its bootstrap and networks.
func distrusted(r Row) string {
	if r.CILow == nil || r.CIHigh == nil {
		return ""
	}
	if r.Resampling == "fitted" {
		return "its interval keeps its trained model fixed and is too narrow"
	}
	bias, sd := math.NaN(), math.NaN()
	if r.BootstrapBias != nil {
		bias = *r.BootstrapBias
	}
	if r.RestartSD != nil {
		sd = *r.RestartSD
	}
	return ope.Distrust(*r.CILow, *r.CIHigh, bias, r.BootstrapFailures, r.Resamples, sd)
}

// biasedBootstrap reports whether a bootstrap bias exceeds half the
// interval's width (ope.BiasedBootstrap).
func biasedBootstrap(bias *float64, half float64) bool {
	return bias != nil && ope.BiasedBootstrap(*bias, half)
}

// trainingDominates reports whether the networks' spread exceeds a
// quarter of the interval's width (ope.TrainingDominates).
func trainingDominates(restartSD *float64, half float64) bool {
	return restartSD != nil && ope.TrainingDominates(*restartSD, half)
}
