package ope_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/ope"
)

// Rows of one estimand whose intervals do not overlap are named, the pair
// furthest apart; the behavior's value (naive), rows without an interval,
// a value model against its corrected reading and rows of the other
// estimand are not compared, unless the gap between the estimands is a
// tenth of both half-widths; equal rows count as one.
func TestDisagreementWarning(t *testing.T) {
	nan := math.NaN()
	row := func(name string, estimand ope.Estimand, lo, hi float64) ope.Row {
		return ope.Row{Estimator: name, Estimand: estimand, Estimate: (lo + hi) / 2, Low: lo, High: hi}
	}
	model := func(r ope.Row, learner string) ope.Row { r.Learner = learner; return r }
	inf := math.Inf(1)
	for _, c := range []struct {
		name       string
		gamma, gap float64
		rows       []ope.Row
		want       string // "" for no warning
	}{
		{"overlap", 1, inf, []ope.Row{row("wis-stepwise", ope.Horizon, -0.3, -0.1), row("dr", ope.Horizon, -0.15, -0.12)}, ""},
		{"naive left out", 1, inf, []ope.Row{row("naive", ope.Horizon, -0.3, -0.25), row("dr", ope.Horizon, -0.15, -0.12)}, ""},
		{"estimands apart", 1, inf, []ope.Row{row("bch-tabular", ope.LongRun, -0.13, -0.11), row("dr", ope.Horizon, -0.15, -0.14)}, ""},
		{"no interval", 1, inf, []ope.Row{{Estimator: "fqe", Estimand: ope.Horizon, Estimate: -0.5, Low: nan, High: nan}, row("dr", ope.Horizon, -0.15, -0.12)}, ""},
		{"one pair", 1, inf, []ope.Row{row("wis-stepwise", ope.Horizon, -0.3, -0.2), row("dr", ope.Horizon, -0.15, -0.12)},
			"wis-stepwise and dr both estimate the horizon value, but their intervals do not overlap ([-0.3, -0.2] against [-0.15, -0.12]): at least one"},
		{"fqe and dr of one value model", 1, inf, []ope.Row{model(row("fqe", ope.Horizon, -0.3, -0.2), "linear"), model(row("dr", ope.Horizon, -0.15, -0.12), "kernel/linear")}, ""},
		{"fqe and dr of two value models", 1, inf, []ope.Row{model(row("fqe", ope.Horizon, -0.3, -0.2), "neural"), model(row("dr", ope.Horizon, -0.15, -0.12), "kernel/linear")},
			"fqe and dr both estimate the horizon value"},
		{"furthest pair of three", 1, inf, []ope.Row{row("fqe", ope.LongRun, -0.19, -0.16), row("mwl", ope.LongRun, -0.1, -0.05),
			row("bch-tabular", ope.LongRun, -0.25, -0.2), row("mql", ope.LongRun, -0.12, -0.08)},
			"bch-tabular and mwl both estimate the long-run value, but their intervals do not overlap ([-0.25, -0.2] against [-0.1, -0.05]) (5 pairs of rows do not overlap; these two are furthest apart)"},
		{"equal rows as one", 1, inf, []ope.Row{row("bch-tabular", ope.LongRun, -0.17, -0.12), row("mwl", ope.LongRun, -0.11, -0.08),
			row("mql", ope.LongRun, -0.11, -0.08), row("dualdice", ope.LongRun, -0.11, -0.08)},
			"bch-tabular and mwl/mql/dualdice both estimate the long-run value, but their intervals do not overlap ([-0.17, -0.12] against [-0.11, -0.08]):"},
		{"estimands within the gap", 0.95, 7e-5, []ope.Row{row("bch-neural", ope.LongRun, -0.2, 0), row("wis-stepwise", ope.Horizon, -1.6, -1.1)},
			"wis-stepwise and bch-neural both estimate one value (at gamma = 0.95 the horizon and long-run values differ here by at most 7e-05"},
		{"estimands beyond the gap", 0.99, 0.27, []ope.Row{row("bch-neural", ope.LongRun, -0.2, 0), row("wis-stepwise", ope.Horizon, -1.6, -1.1)}, ""},
	} {
		got := ope.DisagreementWarning(c.rows, c.gamma, c.gap)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A value model's row (fqe) says what its corrected reading (dr) says of
// their shared model: beyond 3 of dr's standard errors apart, with the
// same value model and estimand, and only then.
func TestValueMisfitWarnings(t *testing.T) {
	fqe := func(v float64, estimand ope.Estimand, learner string) ope.Row {
		return ope.Row{Estimator: "fqe", Estimate: v, Estimand: estimand, Learner: learner}
	}
	dr := func(v, se float64, learner string) ope.Row {
		return ope.Row{Estimator: "dr", Estimate: v, SE: se, Estimand: ope.Horizon, Learner: learner}
	}
	for _, c := range []struct {
		name string
		rows []ope.Row
		want string
	}{
		{"misfit", []ope.Row{fqe(0.0475, ope.Horizon, "linear"), dr(-0.0004, 0.0053, "kernel/linear")},
			"fqe: its estimate lies 0.0479 above dr's, 9 of dr's standard errors: dr's correction says that their value model (linear) misfits"},
		{"below", []ope.Row{fqe(-2.791, ope.Horizon, "linear"), dr(-1.572, 0.12, "kernel/linear")}, "fqe: its estimate lies 1.22 below dr's, 10 of"},
		{"within 3 SE", []ope.Row{fqe(-0.129, ope.Horizon, "tabular"), dr(-0.1405, 0.01, "marginal/tabular")}, ""},
		{"other value model", []ope.Row{fqe(0.0475, ope.Horizon, "neural"), dr(-0.0004, 0.0053, "kernel/linear")}, ""},
		{"other estimand", []ope.Row{fqe(0.0475, ope.LongRun, "linear"), dr(-0.0004, 0.0053, "kernel/linear")}, ""},
		{"no standard error", []ope.Row{fqe(0.0475, ope.Horizon, "linear"), dr(-0.0004, 0, "kernel/linear")}, ""},
	} {
		got := strings.Join(ope.ValueMisfitWarnings(c.rows), "\n")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
