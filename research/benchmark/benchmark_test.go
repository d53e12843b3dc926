package benchmark_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/research/benchmark"
	"github.com/ihope-ope/ihope/research/experiment"
	"github.com/ihope-ope/ihope/sim"
)

// allWorlds returns every suite's worlds (full settings).
func allWorlds(t *testing.T) []*benchmark.World {
	t.Helper()
	suites, err := benchmark.Suites(benchmark.All)
	if err != nil {
		t.Fatal(err)
	}
	var out []*benchmark.World
	for _, s := range suites {
		ws, err := s.Worlds(false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ws...)
	}
	return out
}

// TestWorlds checks every world's definition: a valid table, absorbing
// states where it says so, families of at least six distinct policies
// over the states the log records, distinct exact values, and the
// settings the package documents.
func TestWorlds(t *testing.T) {
	want := map[string]struct {
		n, T, targets int
		gamma         float64
	}{
		"graph": {256, 16, 10, 0.98}, "toymc": {128, 250, 10, 0.99}, "modelfail": {256, 2, 10, 1},
		"modelwin": {256, 20, 10, 1}, "gridwalk": {100, 100, 6, 0.99}, "taxi": {200, 400, 6, 1}, "ring": {20, 100, 8, 1},
	}
	worlds := allWorlds(t)
	if len(worlds) != len(want) {
		t.Fatalf("%d worlds, want %d", len(worlds), len(want))
	}
	for i, w := range worlds {
		wt, ok := want[w.Name]
		if !ok {
			t.Errorf("case %d: unexpected world %s", i, w.Name)
			continue
		}
		if w.N != wt.n || w.T != wt.T || w.Gamma != wt.gamma || len(w.Targets) != wt.targets {
			t.Errorf("case %d (%s): n %d, T %d, gamma %g, %d targets; want %+v", i, w.Name, w.N, w.T, w.Gamma, len(w.Targets), wt)
		}
		if err := mdp.Check(w.Table); err != nil {
			t.Errorf("case %d (%s): %v", i, w.Name, err)
		}
		if ep, ok := w.Table.(sim.Episodic); ok {
			if err := sim.CheckAbsorbing(w.Table, ep.Absorbing); err != nil {
				t.Errorf("case %d (%s): %v", i, w.Name, err)
			}
		}
		logged := w.Table.NumStates()
		if w.Observe != nil {
			logged = w.NumObs
		}
		var names []string
		var values []float64
		for _, tg := range w.Targets {
			if slices.Contains(names, tg.Name) {
				t.Errorf("case %d (%s): target %s twice", i, w.Name, tg.Name)
			}
			names = append(names, tg.Name)
			if tg.Policy.NumStates() != w.Table.NumStates() || tg.Logged.NumStates() != logged {
				t.Errorf("case %d (%s): target %s over %d and %d states, want %d and %d", i, w.Name, tg.Name,
					tg.Policy.NumStates(), tg.Logged.NumStates(), w.Table.NumStates(), logged)
			}
			if w.Name == "taxi" {
				continue // its long-run values take seconds; TestQuickRun computes some
			}
			tr, err := w.Truths(len(values))
			if err != nil {
				t.Fatalf("case %d (%s): %v", i, w.Name, err)
			}
			values = append(values, tr[ope.Horizon])
		}
		for a := range values {
			for b := range a {
				if values[a] == values[b] {
					t.Errorf("case %d (%s): targets %s and %s have the same value %v", i, w.Name, names[a], names[b], values[a])
				}
			}
		}
	}
}

// TestRingTruths pins the ring's exact values: P(R) = p is worth p
// (every R pays 1 and the uniform start is stationary), at the horizon
// and in the long run.
func TestRingTruths(t *testing.T) {
	for _, w := range allWorlds(t) {
		if w.Name != "ring" {
			continue
		}
		for i, tg := range w.Targets {
			tr, err := w.Truths(i)
			if err != nil {
				t.Fatal(err)
			}
			p := tg.Policy.Prob(0, 1)
			if math.Abs(tr[ope.Horizon]-p) > 1e-12 || math.Abs(tr[ope.LongRun]-p) > 1e-12 {
				t.Errorf("target %s: truths %v, want %v", tg.Name, tr, p)
			}
		}
	}
}

// TestSampleSharesEpisodes checks that one rng state gives every target
// the same episodes (the family is ranked on one log) and that only the
// target's probabilities differ.
func TestSampleSharesEpisodes(t *testing.T) {
	for _, w := range allWorlds(t) {
		w = w.Quick()
		a, err := w.Sample(rand.New(rand.NewPCG(1, 2)), 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := w.Sample(rand.New(rand.NewPCG(1, 2)), len(w.Targets)-1)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.State, b.State) || !slices.Equal(a.Action, b.Action) || !slices.Equal(a.Reward, b.Reward) {
			t.Errorf("%s: the targets' logs differ in their episodes", w.Name)
		}
		if slices.Equal(a.LogTarget, b.LogTarget) {
			t.Errorf("%s: two targets log the same probabilities", w.Name)
		}
	}
}

// TestModelFailLog checks that ModelFail's log records observations: the
// start and layer-1 states as observation 0, the absorbing state (the
// state after each episode's two steps) as observation 1.
func TestModelFailLog(t *testing.T) {
	for _, w := range allWorlds(t) {
		if w.Name != "modelfail" {
			continue
		}
		d, err := w.Sample(rand.New(rand.NewPCG(3, 4)), 2)
		if err != nil {
			t.Fatal(err)
		}
		if d.NumStates != 2 {
			t.Fatalf("%d states in the log, want 2 observations", d.NumStates)
		}
		for j, s := range d.State {
			if s != 0 {
				t.Fatalf("step %d logs observation %d, want 0", j, s)
			}
		}
		for e := range d.NumEpisodes() {
			if !d.HasFinal[e] || d.FinalState[e] != 1 {
				t.Fatalf("episode %d ends in %d, want the absorbing observation 1", e, d.FinalState[e])
			}
		}
	}
}

// TestQuickRun runs the COBS suite's quick grid and checks its records:
// every estimator and variant, an estimand on each, bch-tabular scored
// against the long-run truth, intervals of the kind documented.
func TestQuickRun(t *testing.T) {
	suites, _ := benchmark.Suites("cobs")
	sum, err := (&experiment.Runner{Dir: t.TempDir(), Quick: true, Workers: 2}).Run(context.Background(), suites[0].Experiment())
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Lines) != 4*3*benchmark.QuickSeeds {
		t.Fatalf("%d lines, want %d", len(sum.Lines), 4*3*benchmark.QuickSeeds)
	}
	want := []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "model-based", "fqe",
		"mis", "bch-tabular", "dr", "mwl", "mql", "dualdice", "dr[ratio=tabular]", "dr[folds=1]"}
	longRun := []string{"bch-tabular", "mwl", "mql", "dualdice"} // the stationary estimators
	for _, l := range sum.Lines {
		var names []string
		for _, r := range l.Records {
			names = append(names, r.Estimator)
			if r.Error != "" {
				continue
			}
			truth := float64(l.Truths[r.Estimand])
			if d := float64(r.Estimate) - truth; math.Abs(float64(r.SqError)-d*d) > 1e-15 {
				t.Errorf("%s %s %s: sq_error %v, want (estimate - %s truth)^2 = %v", l.Panel, l.Setting, r.Estimator, r.SqError, r.Estimand, d*d)
			}
			wantEstimand, wantInterval := "horizon", "student-t" // 10 resamples in quick mode
			if slices.Contains(longRun, r.Estimator) {
				wantEstimand = "long-run"
			}
			if r.Estimator[:min(2, len(r.Estimator))] == "dr" {
				wantInterval = "wald"
			}
			if r.Estimand != wantEstimand || r.Interval != wantInterval || r.Low == nil || *r.Low > *r.High {
				t.Errorf("%s %s %s: estimand %q, interval %q [%v, %v]", l.Panel, l.Setting, r.Estimator, r.Estimand, r.Interval, r.Low, r.High)
			}
		}
		if !slices.Equal(names, want) {
			t.Fatalf("%s %s: estimators %v, want %v", l.Panel, l.Setting, names, want)
		}
	}
	worlds, _ := suites[0].Worlds(true)
	b := benchmark.Build([]benchmark.SuiteResults{{Suite: suites[0], Worlds: worlds, Lines: sum.Lines}}, true)
	if len(b.Worlds) != 4 || len(b.Overall) != len(want)+1 { // and the recommended estimate's row
		t.Fatalf("%d worlds and %d overall rows, want 4 and %d", len(b.Worlds), len(b.Overall), len(want)+1)
	}
}

// TestBuildByHand checks the leaderboard on a world of three targets and
// two seeds whose records are made up, every number worked by hand.
//
// Truths (horizon) 0, 1, 2, spread 2; long-run 10, 20, 30.
//
//	estimator "wis-stepwise" (horizon): seed 0 estimates 0, 1, 3 (errors 0, 0, 1),
//	  intervals [-1, 1] (holds 0), [2, 3] (misses 1), [2, 4] (holds 2);
//	  seed 1 estimates 1, 1, 2 (errors 1, 0, 0), no intervals.
//	  MSE = (0+0+1+1+0+0)/6 = 1/3, nMSE = 1/12; coverage 2/3.
//	  Seed 0 orders the family right: Spearman 1, regret@1 0; seed 1 ties
//	  the first two (ranks 1.5, 1.5, 3 against 1, 2, 3): Spearman
//	  1.5/sqrt(1.5*2) = sqrt(3)/2, regret@1 0. Means: (1+sqrt(3)/2)/2, 0.
//	estimator "bch-tabular" (long-run): seed 0 estimates 30, 20, 10 (errors 20, 0,
//	  20 against 10, 20, 30), seed 1 30, failure, 10 (errors 20, 20).
//	  MSE = (400+0+400+400+400)/5 = 320; Spearman -1 and regret@1
//	  (30-10)/(30-10) = 1 from seed 0 alone (seed 1 is incomplete);
//	  failed 1.
func TestBuildByHand(t *testing.T) {
	w := &benchmark.World{Name: "hand", N: 5, T: 3, Gamma: 1,
		Targets: []benchmark.Target{{Name: "x"}, {Name: "y"}, {Name: "z"}}}
	f := func(v float64) *results.Float { x := results.Float(v); return &x }
	type rec = results.Record
	var lines []results.Line
	cells := [2][3][]rec{
		{
			{{Estimator: "wis-stepwise", Estimate: 0, Estimand: "horizon", Low: f(-1), High: f(1)}, {Estimator: "bch-tabular", Estimate: 30, Estimand: "long-run"}},
			{{Estimator: "wis-stepwise", Estimate: 1, Estimand: "horizon", Low: f(2), High: f(3)}, {Estimator: "bch-tabular", Estimate: 20, Estimand: "long-run"}},
			{{Estimator: "wis-stepwise", Estimate: 3, Estimand: "horizon", Low: f(2), High: f(4)}, {Estimator: "bch-tabular", Estimate: 10, Estimand: "long-run"}},
		},
		{
			{{Estimator: "wis-stepwise", Estimate: 1, Estimand: "horizon"}, {Estimator: "bch-tabular", Estimate: 30, Estimand: "long-run"}},
			{{Estimator: "wis-stepwise", Estimate: 1, Estimand: "horizon"}, {Estimator: "bch-tabular", Error: "failed"}},
			{{Estimator: "wis-stepwise", Estimate: 2, Estimand: "horizon"}, {Estimator: "bch-tabular", Estimate: 10, Estimand: "long-run"}},
		},
	}
	for seed := range 2 {
		for i, name := range []string{"x", "y", "z"} {
			l := results.Line{Panel: "hand", Setting: name, Seed: seed, Truth: results.Float(i),
				Truths: map[string]results.Float{"horizon": results.Float(i), "long-run": results.Float(10 * (i + 1))}}
			for _, r := range cells[seed][i] {
				if r.Error == "" {
					d := float64(r.Estimate) - float64(l.Truths[r.Estimand])
					r.SqError = results.Float(d * d)
				} else {
					r.Estimate, r.SqError = results.Float(math.NaN()), results.Float(math.NaN())
				}
				l.Records = append(l.Records, r)
			}
			lines = append(lines, l)
		}
	}
	b := benchmark.Build([]benchmark.SuiteResults{{Suite: benchmark.Suite{Name: "hand"}, Worlds: []*benchmark.World{w}, Lines: lines}}, false)
	if len(b.Worlds) != 1 || b.Worlds[0].Spread != 2 || b.Seeds != 2 {
		t.Fatalf("board %+v", b)
	}
	rows := slices.DeleteFunc(b.Worlds[0].Rows, func(r benchmark.Row) bool { return r.Estimator == benchmark.Recommended })
	if len(rows) != 2 || rows[0].Estimator != "wis-stepwise" || rows[1].Estimator != "bch-tabular" {
		t.Fatalf("rows %+v", rows)
	}
	check := func(what string, got *float64, want float64) {
		t.Helper()
		switch {
		case math.IsNaN(want) && got != nil:
			t.Errorf("%s = %v, want none", what, *got)
		case !math.IsNaN(want) && (got == nil || math.Abs(*got-want) > 1e-12):
			t.Errorf("%s = %v, want %v", what, deref(got), want)
		}
	}
	a, bb := rows[0], rows[1]
	check("a log10 MSE", a.Log10MSE, math.Log10(1.0/3))
	check("a log10 nMSE", a.Log10NMSE, math.Log10(1.0/12))
	check("a coverage", a.Coverage, 2.0/3)
	check("a Spearman", a.Spearman, (1+math.Sqrt(3)/2)/2)
	check("a regret@1", a.Regret1, 0)
	check("a regret@5", a.Regret5, 0)
	check("a rank", a.Rank, 1.5) // tied with the recommended estimate, which chooses a
	check("b log10 MSE", bb.Log10MSE, math.Log10(320))
	check("b coverage", bb.Coverage, math.NaN())
	check("b Spearman", bb.Spearman, -1)
	check("b regret@1", bb.Regret1, 1)
	check("b rank", bb.Rank, 3)
	if a.Estimand != "horizon" || bb.Estimand != "long-run" || bb.Failed != 1 || a.Cells != 6 || bb.Cells != 5 {
		t.Errorf("rows %+v, %+v", a, bb)
	}
	// One world: the overall table is the world's, ranked the same.
	if o := slices.DeleteFunc(b.Overall, func(r benchmark.Row) bool { return r.Estimator == benchmark.Recommended }); len(o) != 2 || o[0].Estimator != "wis-stepwise" || *o[0].Log10NMSE != *a.Log10NMSE || o[0].Worlds != 1 {
		t.Errorf("overall %+v", o)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
