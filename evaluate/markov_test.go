package evaluate_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/research/benchmark"
)

// On COBS's ModelFail, whose log aliases three states, ihope estimate
// says the states do not look Markov, and recommends an estimator that
// does not assume them: the value models err there by about 0.5 (their
// interval far from the truth -0.6), step-wise WIS by 0.01.
func TestEstimateWarnsNotMarkov(t *testing.T) {
	w, err := benchmark.WorldNamed("modelfail")
	if err != nil {
		t.Fatal(err)
	}
	k := len(w.Targets) / 2
	d, err := w.Sample(rand.New(rand.NewPCG(1, 0)), k)
	if err != nil {
		t.Fatal(err)
	}
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
