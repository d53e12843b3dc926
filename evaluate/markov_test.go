package evaluate_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/research/benchmark"
)

// On COBS's ModelFail, whose log aliases three states, ihope estimate
// says the states do not look Markov, and recommends an estimator that
// does not assume them: the value models err there by about 0.5 (their
// interval far from the truth -0.6), step-wise WIS by 0.01.
func TestEstimateWarnsNotMarkov(t *testing.T) {
	w, k, d := worldLog(t, "modelfail")
	o := evaluate.Defaults()
	o.Bootstrap = 100
	ev, err := evaluate.New(o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ev.Evaluate(d, "modelfail", []evaluate.Target{{Policy: w.Targets[k].Logged, File: "target"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Data.MarkovP == nil || *rep.Data.MarkovP > ope.MarkovAlpha {
		t.Fatalf("markov_p %v, want at most %g", rep.Data.MarkovP, ope.MarkovAlpha)
	}
	if !slices.ContainsFunc(rep.Warnings, func(s string) bool { return strings.HasPrefix(s, "the logged states do not look Markov") }) {
		t.Errorf("no warning in %q", rep.Warnings)
	}
	r := rep.Recommended[0]
	if r.Estimator == nil {
		t.Fatalf("no recommendation: %s", r.Why)
	}
	if en, _ := ope.Lookup(*r.Estimator); en.Markov {
		t.Errorf("recommended %s, which assumes Markov states", *r.Estimator)
	}
	truth, err := w.Truths(k)
	if err != nil {
		t.Fatal(err)
	}
	if got := *r.Estimate - truth[ope.Horizon]; got > 0.05 || got < -0.05 {
		t.Errorf("recommended %s %.4f, truth %.4f", *r.Estimator, *r.Estimate, truth[ope.Horizon])
	}
}

// On ModelFail's aliased log the kernel Bellman bound, which assumes
// Markov states, is shown with the assumption the log breaks
// (bound_broken), a warning says so, and it decides no verdict: against
// a baseline far below every value (-10) the verdict is "not shown". On
// ModelWin, the same graph logged with its states, the same run says
// "better".
func TestBoundMarkovBroken(t *testing.T) {
	if v := boundVerdict(t, "modelwin"); v.RowBound == nil || v.BoundBroken != "" || v.verdict != ope.Better {
		t.Fatalf("modelwin: bound %+v, verdict %q", v.RowBound, v.verdict)
	}
	v := boundVerdict(t, "modelfail")
	r, rep := v.Row, v.rep
	if r.RowBound == nil || r.BoundLow == nil || r.BoundMethod != "kernel-bellman" || !strings.Contains(r.BoundBroken, "Markov") {
		t.Fatalf("row %+v, bound %+v", r, r.RowBound)
	}
	if !slices.ContainsFunc(rep.Warnings, func(s string) bool { return strings.HasPrefix(s, "kernel-bellman: its bound assumes Markov states") }) {
		t.Errorf("no warning in %q", rep.Warnings)
	}
	if v.verdict != ope.NotShown {
		t.Errorf("verdicts %+v, want not shown", rep.Verdicts)
	}
	var text strings.Builder
	rep.WriteText(&text)
	if !strings.Contains(text.String(), "; it assumes the Markov property: the logged states do not look Markov") {
		t.Errorf("the bound's line does not say its assumption fails:\n%s", text.String())
	}
}

type boundRun struct {
	evaluate.Row
	rep     *evaluate.Report
	verdict string
}

// boundVerdict runs fqe with the sign-flip kernel Bellman bound on a log
// of the benchmark world name (its middle target, gamma = 0.9, the
// long-run value) against the baseline -10.
func boundVerdict(t *testing.T, name string) boundRun {
	t.Helper()
	w, k, d := worldLog(t, name)
	o := evaluate.Defaults()
	o.Bootstrap, o.Gamma, o.Estimand, o.Estimators = 0, 0.9, "long-run", []string{"fqe"}
	o.Bounds, o.RewardRange, o.BoundCalibration, o.Baseline = true, "-1,1", "sign-flip", "-10"
	ev, err := evaluate.New(o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ev.Evaluate(d, name, []evaluate.Target{{Policy: w.Targets[k].Logged, File: "target"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := boundRun{Row: rep.Estimates[0], rep: rep}
	if len(rep.Verdicts) == 1 {
		out.verdict = rep.Verdicts[0].Verdict
	}
	return out
}

// worldLog returns the benchmark world name, its middle target k and a
// log of it (seed 1) recording that target's probabilities.
func worldLog(t *testing.T, name string) (*benchmark.World, int, *dataset.Dataset) {
	t.Helper()
	w, err := benchmark.WorldNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	k := len(w.Targets) / 2
	d, err := w.Sample(rand.New(rand.NewPCG(1, 0)), k)
	if err != nil {
		t.Fatal(err)
	}
	return w, k, d
}
