package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

func TestWeightWarnings(t *testing.T) {
	dominant := slices.Repeat([]float64{1}, 10)
	dominant[3] = 100 // ESS 109^2/10009 = 1.19 of 10; share 100/109
	sparse := make([]float64, 2000)
	for _, i := range []int{5, 500, 1000, 1500} { // ESS 4 < 0.5% of 2000; share exactly 1/4
		sparse[i] = 0.25
	}
	// Seven episodes, one with 10 times the others' weight: ESS 2.4 of 7
	// (above 5%), share 10/16, but fewer than eight units.
	sevenEpisodes := []float64{10, 1, 1, 1, 1, 1, 1}
	cases := []struct {
		name string
		unit ope.Unit
		w    []float64
		want []string // substrings of the one warning; nil: no warning
	}{
		{"equal steps", ope.UnitStep, slices.Repeat([]float64{0.01}, 100), nil},
		{"equal episodes", ope.UnitEpisode, slices.Repeat([]float64{1. / 3}, 3), nil},
		{"equal, two units", ope.UnitEpisode, []float64{0.5, 0.5}, nil},
		{"dominant steps", ope.UnitStep, dominant, []string{"wis-stepwise: ", "collapse onto a few steps", "effective sample size 1.2 of 10", "92%"}},
		{"dominant episodes", ope.UnitEpisode, dominant, []string{"wis-stepwise: ", "collapse onto a few episodes", "1.2 of 10"}},
		{"sparse steps", ope.UnitStep, sparse, []string{"wis-stepwise: ", "collapse", "effective sample size 4.0 of 2000", "25%"}},
		{"sparse, as episodes", ope.UnitEpisode, sparse, []string{"4.0 of 2000"}},
		{"seven episodes", ope.UnitEpisode, sevenEpisodes, nil},
		{"all zero steps", ope.UnitStep, make([]float64, 6), []string{"wis-stepwise: ", "every weight is 0", "no information"}},
		{"all zero episodes", ope.UnitEpisode, []float64{0, 0}, []string{"every weight is 0"}},
		{"unit none", ope.UnitNone, dominant, nil},
		{"unit none, all zero", ope.UnitNone, make([]float64, 6), nil},
		{"one unit", ope.UnitStep, []float64{0}, nil},
		{"no weights", ope.UnitStep, nil, nil},
	}
	for _, c := range cases {
		got := ope.WeightWarnings("wis-stepwise", c.unit, c.w)
		if c.want == nil {
			if got != nil {
				t.Errorf("%s: warnings %q, want none", c.name, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s: warnings %q, want one", c.name, got)
			continue
		}
		for _, s := range c.want {
			if !strings.Contains(got[0], s) {
				t.Errorf("%s: warning %q lacks %q", c.name, got[0], s)
			}
		}
		if !strings.HasPrefix(got[0], "wis-stepwise: ") {
			t.Errorf("%s: warning %q does not start with the estimator's name", c.name, got[0])
		}
	}
}

func TestDataWarnings(t *testing.T) {
	// Episode a ends with a next state; b's second step has pi/pi0 =
	// 0.9/1e-7 = 9e6 and b ends without one.
	step := func(pb, pt float64, hasNext bool) dataset.Step {
		return dataset.Step{HasNext: hasNext, LogBehavior: math.Log(pb), LogTarget: math.Log(pt)}
	}
	d, err := dataset.New(1, 1, []dataset.Episode{
		{ID: "a", Steps: []dataset.Step{step(0.5, 0.5, true)}},
		{ID: "b", Steps: []dataset.Step{step(0.5, 0.5, true), step(1e-7, 0.9, true), step(1e-7, 0.9, false)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := ope.DataWarnings(dataset.Summarize(d))
	if len(got) != 2 {
		t.Fatalf("warnings %q, want two", got)
	}
	for _, s := range []string{"support: 2 logged steps have pi/pi0 > 1e6", `episode "b", t = 1`, "9e+06"} {
		if !strings.Contains(got[0], s) {
			t.Errorf("warning %q lacks %q", got[0], s)
		}
	}
	if !strings.HasPrefix(got[1], "1 episode ends without next_state") {
		t.Errorf("warning %q", got[1])
	}
	// A log with full support and known next states has nothing to say.
	d, err = dataset.New(1, 1, []dataset.Episode{{ID: "a", Steps: []dataset.Step{step(0.5, 0.5, true), step(0.5, 0.25, true)}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ope.DataWarnings(dataset.Summarize(d)); got != nil {
		t.Errorf("warnings %q, want none", got)
	}
}

// An estimate outside the logged rewards' range (0 included when an
// episode is terminal) is warned about; one inside it, or on its edge,
// is not.
func TestRangeWarning(t *testing.T) {
	rewards := func(terminal bool, r ...float64) dataset.Summary {
		var steps []dataset.Step
		for _, v := range r {
			steps = append(steps, dataset.Step{Reward: v, HasNext: true})
		}
		steps[len(steps)-1].HasNext, steps[len(steps)-1].Terminal = !terminal, terminal
		d, err := dataset.New(1, 1, []dataset.Episode{{ID: "a", Steps: steps}})
		if err != nil {
			t.Fatal(err)
		}
		return dataset.Summarize(d)
	}
	for _, c := range []struct {
		s    dataset.Summary
		v    float64
		warn bool
	}{
		{rewards(false, -1, 1), 0.3, false},
		{rewards(false, -1, 1), 1, false},
		{rewards(false, -1, 1), -1 - 1e-12, false}, // rounding
		{rewards(false, -1, 1), -4.46, true},
		{rewards(false, -1, 1), 1.01, true},
		{rewards(false, 2, 3), 1, true},
		{rewards(true, 2, 3), 1, false}, // the absorbing tail pays 0
		{rewards(true, 2, 3), -0.5, true},
		{rewards(false, 2, 3), math.NaN(), false},
	} {
		got := ope.RangeWarning("fqe", c.v, c.s)
		if (got != "") != c.warn {
			t.Errorf("%g in [%g, %g] (terminal %d): warning %q", c.v, c.s.MinReward, c.s.MaxReward, c.s.Terminal, got)
		}
		if c.warn && !strings.HasPrefix(got, "fqe: the estimate") {
			t.Errorf("warning %q", got)
		}
	}
}

// Terminal episodes beside episodes cut off before the longest make the
// horizon value ill-defined, and only that mixture is warned about.
func TestHorizonWarning(t *testing.T) {
	episode := func(id string, n int, terminal bool) dataset.Episode {
		steps := make([]dataset.Step, n)
		for k := range steps {
			steps[k].HasNext = k < n-1 || !terminal
		}
		steps[n-1].Terminal = terminal
		return dataset.Episode{ID: id, Steps: steps}
	}
	for _, c := range []struct {
		eps  []dataset.Episode
		est  ope.Estimand
		warn bool
	}{
		{[]dataset.Episode{episode("a", 2, true), episode("b", 5, false), episode("c", 3, false)}, ope.Horizon, true},
		{[]dataset.Episode{episode("a", 2, true), episode("b", 5, false), episode("c", 3, false)}, ope.LongRun, false},
		{[]dataset.Episode{episode("a", 2, true), episode("b", 5, false), episode("c", 5, false)}, ope.Horizon, false}, // every cut-off at T
		{[]dataset.Episode{episode("a", 2, true), episode("b", 5, true)}, ope.Horizon, true},                           // all terminal: the data set T
		{[]dataset.Episode{episode("a", 5, true), episode("b", 5, true)}, ope.Horizon, false},                          // all terminal at one length
		{[]dataset.Episode{episode("b", 5, false), episode("c", 3, false)}, ope.Horizon, false},                        // none terminal
	} {
		d, err := dataset.New(1, 1, c.eps)
		if err != nil {
			t.Fatal(err)
		}
		got := ope.HorizonWarning(dataset.Summarize(d), c.est)
		if (got != "") != c.warn {
			t.Errorf("%d episodes, %s: warning %q, want %v", len(c.eps), c.est, got, c.warn)
		}
	}
}

// A target that puts its mass on actions never logged in a state is
// warned about; one whose every action is logged somewhere in each state
// it weighs is not.
func TestUnloggedWarning(t *testing.T) {
	step := func(s, a int, probs []float64) dataset.Step {
		return dataset.Step{State: s, Action: a, HasNext: true, NextState: 1 - s, LogBehavior: math.Log(0.5),
			LogTarget: math.Log(math.Max(probs[a], 1e-300)), TargetProbs: probs}
	}
	in0, in1 := []float64{0.05, 0.05, 0.9}, []float64{0.5, 0.5, 0}
	for _, c := range []struct {
		steps []dataset.Step
		warn  string
	}{
		// State 0 logs actions 0 and 1 only; the target puts 0.9 on 2 there.
		{[]dataset.Step{step(0, 0, in0), step(1, 0, in1), step(0, 1, in0), step(1, 1, in1)}, "support: the target puts 45.0% of its probability"},
		// Action 2 is logged in state 0 too.
		{[]dataset.Step{step(0, 0, in0), step(1, 0, in1), step(0, 2, in0), step(1, 1, in1), step(0, 1, in0)}, ""},
	} {
		d, err := dataset.New(2, 3, []dataset.Episode{{ID: "a", Steps: c.steps}})
		if err != nil {
			t.Fatal(err)
		}
		got := ope.UnloggedWarning(dataset.Summarize(d))
		if (c.warn == "") != (got == "") || !strings.HasPrefix(got, c.warn) {
			t.Errorf("warning %q, want %q", got, c.warn)
		}
	}
}

// The share of the target's steps that the count model sends to
// never-logged pairs, exactly: the log alternates states 0 and 1 and never
// takes action 1 in state 0; the count model pools it with action 0 (to
// state 1), so the target's 4-step chain from state 0 is 0, 1, 0, 1 and
// half its steps are in state 0, where it puts p1 on action 1: the share
// is p1/2. fqe (tabular) and model-based say the same; a target that
// never takes action 1 in state 0 is not warned about.
func TestImputedWarning(t *testing.T) {
	for _, c := range []struct {
		p1   float64
		want string
	}{
		{0.5, "25.0% of the target's steps in its count model (over the logged horizon, in 1 states)"},
		{0.1, "5.0% of the target's steps"},
		{0, ""},
	} {
		in0, in1 := []float64{1 - c.p1, c.p1}, []float64{0.5, 0.5}
		step := func(s, a int, probs []float64) dataset.Step {
			return dataset.Step{State: s, Action: a, Reward: float64(s + a), HasNext: true, NextState: 1 - s, LogBehavior: math.Log(0.5),
				LogTarget: math.Log(math.Max(probs[a], 1e-300)), TargetProbs: probs, NextTargetProbs: [][]float64{in1, in0}[s]}
		}
		d, err := dataset.New(2, 2, []dataset.Episode{
			{ID: "a", Steps: []dataset.Step{step(0, 0, in0), step(1, 0, in1), step(0, 0, in0), step(1, 1, in1)}},
			{ID: "b", Steps: []dataset.Step{step(0, 0, in0), step(1, 1, in1), step(0, 0, in0), step(1, 0, in1)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		target, err := value.TableFromData(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []ope.Estimator{ope.FQE{}, &ope.ModelBased{Target: target}} {
			res, err := e.Estimate(d, 1)
			if err != nil {
				t.Fatal(err)
			}
			got := ope.ImputedWarning(e.Name(), d.MaxLen(), 1, res)
			if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, e.Name()+": "+c.want) {
				t.Errorf("p1 = %v, %s: warning %q, want %q", c.p1, e.Name(), got, c.want)
			}
		}
		// mwl, dualdice and mql impute alike in their exact solves: the
		// count model of their counts says so in their own warnings (the
		// chain alternates, so the long run's share is the horizon's).
		for _, e := range []ope.Estimator{ope.PairRatio{Learner: ratio.MWL{}, Normalise: true}, ope.PairRatio{Learner: ratio.DualDICE{}}, ope.MinimaxQ{}} {
			res, err := e.Estimate(d, 1)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, w := range res.Warnings {
				if strings.Contains(w, "count model") {
					got = w
				}
			}
			want := strings.Replace(c.want, "over the logged horizon", "over 40 steps, for the long run", 1)
			if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, e.Name()+": "+want) {
				t.Errorf("p1 = %v, %s: warning %q, want %q", c.p1, e.Name(), got, want)
			}
		}
		// Under the long run the visitation runs 10 T steps (gamma = 1)
		// or until gamma^t < 1e-6; the chain alternates, so the share is
		// the same here.
		for _, g := range []struct {
			gamma float64
			over  string
		}{{1, "over 40 steps, for the long run"}, {0.5, "over the discounted long run, 20 steps"}} {
			res, err := (&ope.ModelBased{Target: target, Estimand: ope.LongRun}).Estimate(d, g.gamma)
			if err != nil {
				t.Fatal(err)
			}
			got := ope.ImputedWarning("model-based", d.MaxLen(), g.gamma, res)
			if c.want != "" && !strings.Contains(got, "("+g.over+", in 1 states)") || c.want == "" && got != "" {
				t.Errorf("p1 = %v, long run, gamma %g: warning %q, want %q", c.p1, g.gamma, got, g.over)
			}
		}
	}
}

// mis says when its weights lose the target's mass: with one state, the
// behavior always taking action 0 and the target half the time, the
// recursion keeps half the mass per step (the other half goes to the
// action never logged), so with T = 1 the weights sum to 0.5 and the
// estimate of a reward of 1 everywhere is 0.5, renormalised 1. With the
// target equal to the behavior they sum to 1 and nothing is said.
func TestMISMassWarning(t *testing.T) {
	for _, c := range []struct {
		target, behavior float64
		warn             string
	}{
		{0.5, 1, "mis: its weights sum to 0.5, not 1"},
		{1, 1, ""},
		// A behavior probability of 1e-300: the sum is printed in %g,
		// not as the 301 digits %.2f gave.
		{1, 1e-300, "mis: its weights sum to 1e+300, not 1"},
	} {
		var eps []dataset.Episode
		for i := range 6 {
			eps = append(eps, dataset.Episode{ID: fmt.Sprint(i), Steps: []dataset.Step{{State: 0, Action: 0, Reward: 1,
				HasNext: true, NextState: 0, LogBehavior: math.Log(c.behavior), LogTarget: math.Log(c.target)}}})
		}
		d, err := dataset.New(1, 2, eps)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ope.MIS{}.Estimate(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(r.Warnings, "\n")
		if c.warn == "" && got != "" || c.warn != "" && (!strings.Contains(got, c.warn) || !strings.Contains(got, "(renormalised, 1)")) {
			t.Errorf("target %g: estimate %v, warnings %q, want %q", c.target, r.Value, got, c.warn)
		}
		// mis does not renormalise: the estimate is the weights' sum
		// times the reward of 1, c.target/c.behavior.
		if want := c.target / c.behavior; math.Abs(r.Value-want) > 1e-12*want {
			t.Errorf("target %g: estimate %v, want %v", c.target, r.Value, want)
		}
	}
}

// A value model read at start states far outside the logged states is
// warned about: one continuing episode that starts 10 standard deviations
// out (beyond 99.5% of the other logged states) warns, at 150 steps as
// at 2,000; episodes that start in the bulk do not, nor does a log of 5
// or more episodes (StartWarning's bound: their starts give the model
// data there).
func TestStartWarning(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	episode := func(id string, n int, start float64) dataset.Episode {
		steps := make([]dataset.Step, n)
		x := start
		for k := range steps {
			next := rng.NormFloat64()
			steps[k] = dataset.Step{Obs: []float64{x}, Action: 0, HasNext: true, NextObs: []float64{next},
				LogBehavior: math.Log(0.5), LogTarget: math.Log(0.5)}
			x = next
		}
		return dataset.Episode{ID: id, Steps: steps}
	}
	for _, n := range []int{150, 2000} { // a start is not its own reference, on short logs too
		far, err := dataset.New(0, 2, []dataset.Episode{episode("a", n, 10)})
		if err != nil {
			t.Fatal(err)
		}
		if w := ope.StartWarning("mql", far); !strings.Contains(w, "mql: 1 of 1 episodes start farther out than 99.5% of the logged states") {
			t.Errorf("far start, %d steps: %q", n, w)
		}
	}
	var eps []dataset.Episode
	for i := range 10 {
		eps = append(eps, episode(fmt.Sprint(i), 200, rng.NormFloat64()))
	}
	near, err := dataset.New(0, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	if w := ope.StartWarning("mql", near); w != "" {
		t.Errorf("starts in the bulk: %q", w)
	}
	eps = eps[:0]
	for i := range 10 {
		eps = append(eps, episode(fmt.Sprint(i), 200, 10+rng.NormFloat64()))
	}
	many, err := dataset.New(0, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	if w := ope.StartWarning("mql", many); w != "" {
		t.Errorf("ten episodes starting far out: %q", w)
	}
}
