package ope_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/ope"
)

func TestRecommend(t *testing.T) {
	nan := math.NaN()
	row := func(name string, v, lo, hi float64) ope.Row {
		return ope.Row{Estimator: name, Estimand: ope.Horizon, Estimate: v, Low: lo, High: hi}
	}
	long := func(name string, v, lo, hi float64) ope.Row {
		r := row(name, v, lo, hi)
		r.Estimand = ope.LongRun
		return r
	}
	pendulum := []ope.Row{
		long("fqe", -0.9041, -1.1658, -0.6306), long("bch-kernel", -0.0849, -0.1921, -0.0478), long("dr", -0.0608, -0.4476, 0.3070),
		long("mwl", -0.1279, -0.4830, 0.0323), long("mql", -0.5309, -0.5755, -0.4917)}
	for _, c := range []struct {
		name string
		rows []ope.Row // the first row's estimand is the one asked for
		want string    // "" for none
		why  string
	}{
		{"one row is the choice", []ope.Row{row("dr", 0.5, 0.4, 0.6)}, "dr", "only estimator"},
		{"two unbiased: the narrower wins", []ope.Row{row("wis-stepwise", 0.52, 0.3, 0.7), row("dr", 0.49, 0.45, 0.55)}, "dr", "narrowest interval of the 2 estimators"},
		{"narrow biased against wide unbiased: none", []ope.Row{row("fqe", 0.9, 0.88, 0.92), row("wis-trajectory", 0.5, 0.3, 0.7)}, "", "disagree beyond their intervals"},
		{"the walk stops at the first miss: the narrowest walked", []ope.Row{
			row("wis-trajectory", 0.5, 0.1, 0.9), row("wis-stepwise", 0.6, 0.55, 0.65), row("dr", 0.48, 0.44, 0.52), row("fqe", 0.5, 0.4, 0.6)},
			"dr", "the next in that order, wis-stepwise, misses them"},
		{"the value model first: confirmed by dr and the IS rows, the narrowest wins", []ope.Row{
			row("wis-stepwise", 0.5, 0.3, 0.7), row("dr", 0.5, 0.45, 0.55), row("fqe", 0.51, 0.49, 0.53)},
			"fqe", "narrowest interval of the 3 estimators"},
		{"model-based and fqe count once, as a value model", []ope.Row{
			row("model-based", 0.5, 0.49, 0.51), row("fqe", 0.5, 0.49, 0.51), row("wis-stepwise", 0.5, 0.3, 0.7)},
			"model-based", "narrowest interval of the 2 estimators"},
		{"a value model that dr's interval misses is left out, and dr walks on", []ope.Row{
			row("model-based", 0.54, 0.52, 0.545), row("fqe", 0.54, 0.52, 0.545), row("dr", 0.61, 0.55, 0.67), row("mis", 0.3, 0.17, 0.94),
			row("wis-stepwise", 0.54, 0.51, 0.63)},
			"dr", "narrowest interval of the 3 estimators"},
		{"dr equal to the value model confirms it", []ope.Row{
			row("model-based", 0.35, 0.35, 0.35), row("fqe", 0.35, 0.35, 0.35), row("dr", 0.35, 0.35, 0.35), row("mis", 0.5, 0.38, 0.7)},
			"model-based", "narrowest interval of the 2 estimators"},
		{"a value model that only the IS rows miss still stops the walk", []ope.Row{
			row("fqe", 0.54, 0.52, 0.55), row("wis-stepwise", 0.7, 0.6, 0.8)},
			"", "disagree beyond their intervals"},
		{"out of the rewards' range is left out", []ope.Row{row("fqe", 7.1, 7.0, 7.2), row("dr", 0.5, 0.4, 0.6)}, "dr", "only estimator"},
		{"collapsed weights are left out", []ope.Row{{Estimator: "wis-stepwise", Estimand: ope.Horizon, Estimate: 0.2, Low: 0.19, High: 0.21, Collapsed: true},
			row("dr", 0.5, 0.4, 0.6)}, "dr", "only estimator"},
		{"a row its diagnostics distrust is left out", []ope.Row{{Estimator: "bch-neural", Estimand: ope.Horizon, Estimate: 0.2, Low: 0.19, High: 0.21, Failed: "its bootstrap finds it biased on these logs"},
			row("dr", 0.5, 0.4, 0.6)}, "dr", "only estimator"},
		{"naive and other estimands do not compete", []ope.Row{row("naive", 0.3, 0.29, 0.31), {Estimator: "bch-tabular", Estimand: ope.LongRun, Estimate: 0.5, Low: 0.49, High: 0.51},
			row("wis-stepwise", 0.5, 0.4, 0.6)}, "wis-stepwise", "only estimator"},
		{"no interval, no candidate", []ope.Row{row("dr", 0.5, nan, nan)}, "", "no estimator of the horizon value"},
		{"equal rows count once, in the earlier family", []ope.Row{row("mwl", 0.5, 0.4, 0.6), row("mql", 0.5, 0.4, 0.6)}, "mql", "only estimator"},
		// The point mass at gamma = 1, seed 1 (errors against the truth):
		// widest first, dualdice would stop the walk before mwl.
		{"long-run: the learned ratios narrower first, past a narrow biased one", []ope.Row{
			long("fqe", 0.0041, -0.0109, 0.0193), long("dr", 0.0037, -0.0039, 0.0131), long("mql", 0.0072, -0.0015, 0.0154),
			long("dualdice", -0.0174, -0.0269, -0.0148), long("mwl", 0.0026, -0.0005, 0.0057)},
			"mwl", "the next in that order, dualdice, misses them"},
		// Pendulum at gamma = 1, seed 2 of the real-state table (errors
		// against the truth, halved to fit the rewards' range here;
		// bch-neural's fitted interval left out): ranked with the ratios
		// (narrower first) mql, narrow and far off, came right after dr
		// and missed it, so nothing was chosen; ranked with the value
		// models, it is left out for missing dr.
		{"long-run: mql is a value model, and its interval must meet dr's", pendulum,
			"bch-kernel", "narrowest interval of the 3 estimators"},
		{"horizon: the IS rows wider first, a wide one that misses dr stops the walk", []ope.Row{
			row("dr", 0.095, 0.059, 0.131), row("mis", 0.516, 0.397, 0.576), row("wis-stepwise", 0.009, -0.033, 0.112)},
			"", "disagree beyond their intervals"},
	} {
		rec := ope.Recommend(c.rows, c.rows[0].Estimand, -1, 1)
		if rec.Estimator != c.want || !strings.Contains(rec.Why, c.why) {
			t.Errorf("%s: chose %q (%s), want %q with %q", c.name, rec.Estimator, rec.Why, c.want, c.why)
		}
		if c.want == "" && !math.IsNaN(rec.Estimate) {
			t.Errorf("%s: no choice but estimate %v", c.name, rec.Estimate)
		}
	}
	// On Pendulum's rows mql and fqe are left out for missing dr, each
	// with its own reason: dr corrects fqe's model, not mql's.
	rec := ope.Recommend(pendulum, ope.LongRun, -1, 1)
	for _, want := range []string{
		"mql: its interval misses dr's, less biased than any value model",
		"fqe: its interval misses dr's, which corrects its model",
	} {
		if !slices.ContainsFunc(rec.Excluded, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("Pendulum's rows: left out %q, want one starting %q", rec.Excluded, want)
		}
	}
}
