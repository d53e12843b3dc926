package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/value"
)

// Fed the population (the expectation log of tinyMDP: the count model is
// the true MDP and d_D the exact mixture of the first T steps' state-action
// distributions), mwl and dualdice return the exact state-action ratio
// d_pi(s, a) / d_D(s, a) and, like mql, the exact long-run value, for
// gamma < 1 and gamma = 1; the count model's estimators (model-based,
// fqe) agree, and so do the normalised and unnormalised forms.
func TestPairRatiosFromThePopulation(t *testing.T) {
	d0 := [2]float64{0.25, 0.75}
	const T = 3
	d := expectationLog(t, d0, T)
	_, pi := tinyPolicies(t)
	// d_D from the log itself: every step is a transition.
	var dD [2][2]float64
	for j := range d.NumSteps() {
		dD[d.State[j]][d.Action[j]] += 1 / float64(d.NumSteps())
	}
	for _, gamma := range []float64{1, 0.5} {
		truth, err := mdp.LongRun(tinyTable{d0}, pi, gamma)
		if err != nil {
			t.Fatal(err)
		}
		dPi, err := mdp.Visitation(tinyTable{d0}, pi, gamma)
		if err != nil {
			t.Fatal(err)
		}
		opts := ope.Options{Target: pi, Estimand: ope.LongRun}
		ests, err := ope.New([]string{"mwl", "dualdice", "mql", "fqe", "model-based"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		ests = append(ests, ope.PairRatio{Learner: ratio.MWL{}, Target: value.Target{Policy: pi}}) // unnormalised
		for _, e := range ests {
			res, err := e.Estimate(d, gamma)
			if err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			if math.Abs(res.Value-truth) > 1e-12 || res.Estimand != ope.LongRun {
				t.Errorf("gamma %g: %s = %.15f (%s), truth %.15f", gamma, e.Name(), res.Value, res.Estimand, truth)
			}
			m, ok := res.Model.(ratio.PairModel)
			if !ok {
				continue
			}
			if math.Abs(m.MeanRatio()-1) > 1e-12 {
				t.Errorf("gamma %g: %s: E_D[w] = %.15f", gamma, e.Name(), m.MeanRatio())
			}
			w, err := m.StepRatios(d)
			if err != nil {
				t.Fatal(err)
			}
			for j, wj := range w {
				s, a := d.State[j], d.Action[j]
				if want := dPi[s] * tiny.pi[s][a] / dD[s][a]; math.Abs(wj-want) > 1e-12 {
					t.Fatalf("gamma %g: %s: w(%d, %d) = %.15f, want d_pi/d_D = %.15f", gamma, e.Name(), s, a, wj, want)
				}
			}
		}
	}
}

// smallLog is a log of 3 states and 2 actions (rewards and moves chosen
// by hand) in which the target's favourite action at state 1 is never
// logged; with neverLeft, the first episode ends by moving into state 2,
// a state the log never leaves.
func smallLog(t *testing.T, neverLeft bool) (*dataset.Dataset, *policy.Tabular) {
	t.Helper()
	pi, err := policy.NewTabular([][]float64{{0.5, 0.5}, {0.3, 0.7}, {0.6, 0.4}})
	if err != nil {
		t.Fatal(err)
	}
	last := 0
	if neverLeft {
		last = 2
	}
	type sars struct{ s, a, next int }
	episodes := [][]sars{
		{{0, 0, 1}, {1, 0, 0}, {0, 1, 1}, {1, 0, 0}, {0, 0, 1}, {1, 0, last}},
		{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}, {0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 0, 0}},
	}
	reward := func(s, a int) float64 { return float64(s) - 0.5*float64(a) }
	var eps []dataset.Episode
	for i, ep := range episodes {
		var steps []dataset.Step
		for k, x := range ep {
			// The rewards of (0, 1) vary, so that r(s, a) is a mean.
			r := reward(x.s, x.a) + 0.25*float64(k%2)
			steps = append(steps, dataset.Step{State: x.s, Action: x.a, Reward: r, HasNext: true, NextState: x.next,
				LogBehavior: math.Log(0.5), LogTarget: math.Log(pi.Prob(x.s, x.a))})
		}
		eps = append(eps, dataset.Episode{ID: fmt.Sprint(i), Steps: steps})
	}
	d, err := dataset.New(3, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	return d, pi
}

// pooledMDP is the count model of a log with mwl's rule for the states it
// never leaves: such a state acts like a logged state drawn from the
// logged-state distribution c (its outcomes are the mixture, under c, of
// the pooled target's outcomes of the logged states).
type pooledMDP struct {
	*value.CountModel
	mix []mdp.Outcome
}

func newPooledMDP(t *testing.T, d *dataset.Dataset, pi policy.Discrete) *pooledMDP {
	t.Helper()
	cm, err := value.FitCountModel(d)
	if err != nil {
		t.Fatal(err)
	}
	m := &pooledMDP{CountModel: cm}
	n := 0.0
	for s := range cm.NumStates() {
		for a := range cm.NumActions() {
			n += float64(cm.Visits(s, a))
		}
	}
	for s := range cm.NumStates() {
		cs := 0.0
		for a := range cm.NumActions() {
			cs += float64(cm.Visits(s, a)) / n
		}
		for a := range cm.NumActions() {
			for _, o := range cm.Outcomes(s, a) {
				m.mix = append(m.mix, mdp.Outcome{Next: o.Next, Prob: cs * pi.Prob(s, a) * o.Prob, Reward: o.Reward})
			}
		}
	}
	return m
}

func (m *pooledMDP) Outcomes(s, a int) []mdp.Outcome {
	for b := range m.NumActions() {
		if m.Visits(s, b) > 0 {
			return m.CountModel.Outcomes(s, a)
		}
	}
	return m.mix
}

// The tabular coincidences and differences, exactly. mwl, dualdice (with
// its default ridge 0) and mql are one estimate (the transposed systems of
// MWL's Theorem 4), whatever the log. An action the target takes but the
// log never shows is pooled as the count model pools it, so with every
// state left they equal fqe and model-based; a state the log never leaves
// is where they differ: the count model loops there (gamma < 1) or
// restarts from the logged states with the mean reward (gamma = 1),
// mwl's classes make it act like an average logged state, and each
// estimate is the exact long-run value of its own rule.
func TestPairRatiosTabularCoincide(t *testing.T) {
	for _, neverLeft := range []bool{false, true} {
		d, pi := smallLog(t, neverLeft)
		for _, gamma := range []float64{0.9, 1} {
			opts := ope.Options{Target: pi, Estimand: ope.LongRun}
			got := map[string]float64{}
			for _, name := range []string{"mwl", "dualdice", "mql", "fqe", "model-based"} {
				ests, err := ope.New([]string{name}, opts)
				if err != nil {
					t.Fatal(err)
				}
				res, err := ests[0].Estimate(d, gamma)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got[name] = res.Value
			}
			pooled, err := mdp.LongRun(newPooledMDP(t, d, pi), pi, gamma)
			if err != nil {
				t.Fatal(err)
			}
			at := fmt.Sprintf("gamma %g, never-left state %v", gamma, neverLeft)
			for _, name := range []string{"mwl", "dualdice", "mql"} {
				if math.Abs(got[name]-pooled) > 1e-12 {
					t.Errorf("%s: %s = %.15f, the pooled rule's exact value %.15f", at, name, got[name], pooled)
				}
			}
			if math.Abs(got["fqe"]-got["model-based"]) > 1e-12 {
				t.Errorf("%s: fqe %.15f, model-based %.15f", at, got["fqe"], got["model-based"])
			}
			if diff := math.Abs(got["mwl"] - got["fqe"]); neverLeft && diff < 1e-4 || !neverLeft && diff > 1e-12 {
				t.Errorf("%s: mwl %.15f, fqe %.15f", at, got["mwl"], got["fqe"])
			}
			t.Logf("%s: mwl = dualdice = mql %.6f, fqe = model-based %.6f", at, got["mwl"], got["fqe"])
		}
	}
}

// DualDICE's ridge: as it vanishes the saddle point tends to the exact
// flow (mwl); a ridge shrinks w and E_D[w] below 1 (gamma < 1).
func TestDualDICERidge(t *testing.T) {
	d, pi := smallLog(t, true)
	tgt := value.Target{Policy: pi}
	mwl, err := ratio.MWL{}.FitPairs(d, 0.9, tgt)
	if err != nil {
		t.Fatal(err)
	}
	prev := 0.0
	for _, ridge := range []float64{1e-1, 1e-3, 1e-5, 1e-9} {
		m, err := ratio.DualDICE{Ridge: ridge}.FitPairs(d, 0.9, tgt)
		if err != nil {
			t.Fatal(err)
		}
		mean := m.MeanRatio()
		if !(mean < 1) || mean < prev {
			t.Errorf("ridge %g: E_D[w] = %v (previous ridge %v)", ridge, mean, prev)
		}
		prev = mean
		if ridge == 1e-9 {
			if math.Abs(m.(*ratio.PairTabularModel).Value-mwl.(*ratio.PairTabularModel).Value) > 1e-6 {
				t.Errorf("ridge %g: E_D[w r] = %v, mwl's %v", ridge, m.(*ratio.PairTabularModel).Value, mwl.(*ratio.PairTabularModel).Value)
			}
		}
	}
	if _, err := (ratio.DualDICE{Ridge: 1e-3}).FitPairs(d, 1, tgt); err == nil {
		t.Error("a tabular ridge at gamma = 1 was accepted")
	}
}

// None of mwl, mql and dualdice reads the behavior's probabilities: with
// every LogBehavior replaced by NaN their estimates are the same, on
// discrete and on real states.
func TestMinimaxIgnoreBehavior(t *testing.T) {
	dd, pi := smallLog(t, true)
	sys, target, behavior := lineargauss.DiscreteProblem()
	rd, err := sys.Sample(rand.New(rand.NewPCG(3, 0)), behavior, target, 5, 40)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d *dataset.Dataset
		o ope.Options
	}{{dd, ope.Options{Target: pi}}, {rd, ope.Options{}}} {
		blind := c.d.Clone()
		for j := range blind.LogBehavior {
			blind.LogBehavior[j] = math.NaN()
		}
		ests, err := ope.New([]string{"mwl", "mql", "dualdice"}, c.o)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ests {
			for _, gamma := range []float64{0.9, 1} {
				a, err := e.Estimate(c.d, gamma)
				if err != nil {
					t.Fatal(err)
				}
				b, err := e.Estimate(blind, gamma)
				if err != nil {
					t.Fatalf("%s without behavior probabilities: %v", e.Name(), err)
				}
				if a.Value != b.Value {
					t.Errorf("%s, gamma %g: %v with behavior probabilities, %v without", e.Name(), gamma, a.Value, b.Value)
				}
			}
		}
	}
}
