package ope_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

// tinyMDP is a 2-state, 2-action world whose probabilities are multiples
// of 1/4, so that every trajectory of a few steps has a probability with
// a power-of-two denominator and a log that repeats each trajectory in
// proportion to it is its exact expectation.
//
//	P(s'=1 | s, a):  s=0: a=0 1/4, a=1 3/4;  s=1: a=0 1/2, a=1 1/4
//	r(s, a) = s + a/2 (deterministic)
//	behavior pi0(a=1|s) = 1/2;  target pi(a=1|s) = 3/4 (s=0), 1/4 (s=1)
var tiny = struct {
	p1     [2][2]float64 // P(s'=1|s,a)
	pi0    [2][2]float64
	pi     [2][2]float64
	reward func(s, a int) float64
}{
	p1:     [2][2]float64{{0.25, 0.75}, {0.5, 0.25}},
	pi0:    [2][2]float64{{0.5, 0.5}, {0.5, 0.5}},
	pi:     [2][2]float64{{0.25, 0.75}, {0.75, 0.25}},
	reward: func(s, a int) float64 { return float64(s) + float64(a)/2 },
}

// tinyPolicies returns tinyMDP's behavior and target as tables.
func tinyPolicies(t testing.TB) (behavior, target *policy.Tabular) {
	t.Helper()
	var err [2]error
	behavior, err[0] = policy.NewTabular([][]float64{tiny.pi0[0][:], tiny.pi0[1][:]})
	target, err[1] = policy.NewTabular([][]float64{tiny.pi[0][:], tiny.pi[1][:]})
	if err[0] != nil || err[1] != nil {
		t.Fatal(err)
	}
	return behavior, target
}

func tinyP(s, a, next int) float64 {
	if next == 1 {
		return tiny.p1[s][a]
	}
	return 1 - tiny.p1[s][a]
}

// expectationLog returns every trajectory of T steps from the start
// distribution d0 (multiples of 1/4) under pi0, each repeated
// 4^(1+2T) x its probability times: its empirical distribution of
// trajectories is the exact one.
func expectationLog(t *testing.T, d0 [2]float64, T int) *dataset.Dataset {
	t.Helper()
	var eps []dataset.Episode
	var walk func(steps []dataset.Step, s int, p float64)
	walk = func(steps []dataset.Step, s int, p float64) {
		if len(steps) == T {
			mult := int(math.Round(p * math.Pow(4, float64(1+2*T))))
			if math.Abs(float64(mult)-p*math.Pow(4, float64(1+2*T))) > 1e-9 {
				t.Fatalf("probability %v is not a multiple of 4^-(1+2T)", p)
			}
			for range mult {
				eps = append(eps, dataset.Episode{ID: fmt.Sprint(len(eps)), Steps: append([]dataset.Step(nil), steps...)})
			}
			return
		}
		for a := range 2 {
			for next := range 2 {
				q := tiny.pi0[s][a] * tinyP(s, a, next)
				if q == 0 {
					continue
				}
				st := dataset.Step{State: s, Action: a, Reward: tiny.reward(s, a), HasNext: true, NextState: next,
					LogBehavior: math.Log(tiny.pi0[s][a]), LogTarget: math.Log(tiny.pi[s][a])}
				walk(append(steps, st), next, p*q)
			}
		}
	}
	for s := range 2 {
		if d0[s] > 0 {
			walk(nil, s, d0[s])
		}
	}
	d, err := dataset.New(2, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// finiteQ is the exact finite-horizon q^h of the target on tinyMDP, a
// value.Model (with wrong = true, a deliberately wrong one: q = 0).
type finiteQ struct {
	gamma float64
	q     [][2][2]float64 // q[h][s][a], h = 0..H
	wrong bool
}

func newFiniteQ(gamma float64, H int) *finiteQ {
	m := &finiteQ{gamma: gamma, q: make([][2][2]float64, H+1)}
	for h := 1; h <= H; h++ {
		for s := range 2 {
			for a := range 2 {
				v := tiny.reward(s, a)
				for next := range 2 {
					v += gamma * tinyP(s, a, next) * m.v(h-1, next)
				}
				m.q[h][s][a] = v
			}
		}
	}
	return m
}

func (m *finiteQ) v(h, s int) float64 {
	return tiny.pi[s][0]*m.q[h][s][0] + tiny.pi[s][1]*m.q[h][s][1]
}

func (m *finiteQ) Values(d *dataset.Dataset) (q, v, next []float64, err error) {
	n := d.NumSteps()
	q, v, next = make([]float64, n), make([]float64, n), make([]float64, n)
	if m.wrong {
		return q, v, next, nil
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			h, s, a := hi-j, int(d.State[j]), int(d.Action[j])
			q[j], v[j] = m.q[h][s][a], m.v(h, s)
			if ns, ok := d.NextState(e, j); ok {
				next[j] = m.v(h-1, ns)
			}
		}
	}
	return q, v, next, nil
}

func (m *finiteQ) Rho() float64 { return math.NaN() }

// fixedValue is a value.Learner that returns a given model.
type fixedValue struct{ m value.Model }

func (fixedValue) Name() string { return "fixed" }
func (f fixedValue) Fit(*dataset.Dataset, float64, value.Target) (value.Model, error) {
	return f.m, nil
}

// fixedRatio is a ratio.Learner that returns a given model.
type fixedRatio struct{ m ratio.Model }

func (fixedRatio) Name() string                                         { return "fixed" }
func (f fixedRatio) Fit(*dataset.Dataset, float64) (ratio.Model, error) { return f.m, nil }

// timeRatio is the exact w_t(s) = d^pi_t(s)/d^pi0_t(s) on tinyMDP from
// the start distribution d0 (or, with wrong, w = 1).
type timeRatio struct {
	w     [][2]float64
	wrong bool
}

func newTimeRatio(d0 [2]float64, T int) *timeRatio {
	r := &timeRatio{w: make([][2]float64, T)}
	dpi, dpi0 := d0, d0
	for t := range T {
		for s := range 2 {
			r.w[t][s] = dpi[s] / dpi0[s]
		}
		var n, n0 [2]float64
		for s := range 2 {
			for a := range 2 {
				for next := range 2 {
					n[next] += dpi[s] * tiny.pi[s][a] * tinyP(s, a, next)
					n0[next] += dpi0[s] * tiny.pi0[s][a] * tinyP(s, a, next)
				}
			}
		}
		dpi, dpi0 = n, n0
	}
	return r
}

func (r *timeRatio) StepRatios(d *dataset.Dataset) ([]float64, error) {
	w := make([]float64, d.NumSteps())
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			w[j] = 1
			if !r.wrong {
				w[j] = r.w[j-lo][d.State[j]]
			}
		}
	}
	return w, nil
}

// truthT is the exact normalised T-step value of the target from d0.
func truthT(d0 [2]float64, T int, gamma float64) float64 {
	q := newFiniteQ(gamma, T)
	v := d0[0]*q.v(T, 0) + d0[1]*q.v(T, 1)
	norm := 0.0
	for t := range T {
		norm += math.Pow(gamma, float64(t))
	}
	return v / norm
}

// Double robustness, both ways, exactly: on the expectation log of the
// tiny MDP, the finite-horizon DR estimate equals the exact T-step value
// to rounding when the value model is exact (whatever the ratio) and when
// the ratio is exact (whatever the value model), and misses it when both
// are wrong. Cross-fitting is off: the folds of an expectation log are
// not expectations themselves.
func TestDRDoublyRobustHorizon(t *testing.T) {
	d0 := [2]float64{0.25, 0.75}
	const T = 3
	d := expectationLog(t, d0, T)
	for _, gamma := range []float64{1, 0.5} {
		truth := truthT(d0, T, gamma)
		exactQ, wrongQ := newFiniteQ(gamma, T), &finiteQ{wrong: true}
		exactW, wrongW := newTimeRatio(d0, T), &timeRatio{wrong: true}
		for i, c := range []struct {
			q     value.Model
			w     ratio.Model
			exact bool
		}{
			{exactQ, exactW, true},
			{exactQ, wrongW, true},
			{wrongQ, exactW, true},
			{wrongQ, wrongW, false},
		} {
			e := ope.DR{Ratio: fixedRatio{c.w}, Value: fixedValue{c.q}, Estimand: ope.Horizon, Folds: 1}
			res, err := e.Estimate(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			diff := math.Abs(res.Value - truth)
			if c.exact && diff > 1e-12 {
				t.Errorf("gamma %g case %d: DR %.15f, truth %.15f (one model exact: no bias)", gamma, i, res.Value, truth)
			}
			if !c.exact && diff < 1e-3 {
				t.Errorf("gamma %g case %d: DR %.6f equals the truth %.6f with both models wrong: the test has no teeth", gamma, i, res.Value, truth)
			}
			if res.Estimand != ope.Horizon {
				t.Errorf("case %d: estimand %q", i, res.Estimand)
			}
			// The wrong value model (q = 0) needs a correction of many
			// standard errors, and dr says so; the exact one needs none.
			warned := strings.Contains(strings.Join(res.Warnings, "\n"), "its correction moves its value model's estimate")
			if warned != (c.q == wrongQ) {
				t.Errorf("gamma %g case %d: warned of a large correction %v, want %v: %q", gamma, i, warned, c.q == wrongQ, res.Warnings)
			}
		}
		// The exact ratio alone is MIS: unbiased on the expectation log.
		mis, err := ope.MIS{Ratio: fixedRatio{exactW}}.Estimate(d, gamma)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(mis.Value-truth) > 1e-12 {
			t.Errorf("gamma %g: MIS with the exact ratios %.15f, truth %.15f", gamma, mis.Value, truth)
		}
		// The exact value model alone is FQE.
		fqe, err := ope.FQE{Value: fixedValue{exactQ}, Estimand: ope.Horizon}.Estimate(d, gamma)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(fqe.Value-truth) > 1e-12 {
			t.Errorf("gamma %g: FQE with the exact q %.15f, truth %.15f", gamma, fqe.Value, truth)
		}
	}
}

// tinyTable is tinyMDP as an mdp.Finite with start distribution d0.
type tinyTable struct{ d0 [2]float64 }

func (tinyTable) NumStates() int       { return 2 }
func (tinyTable) NumActions() int      { return 2 }
func (m tinyTable) Initial() []float64 { return m.d0[:] }
func (tinyTable) Outcomes(s, a int) []mdp.Outcome {
	return []mdp.Outcome{{Next: 0, Prob: tinyP(s, a, 0), Reward: tiny.reward(s, a)}, {Next: 1, Prob: tinyP(s, a, 1), Reward: tiny.reward(s, a)}}
}

// Each estimand, learned from the population: on the expectation log the
// count model is the true MDP, so model-based and fqe (learned, tabular)
// return the exact T-step value under Horizon and the exact long-run value
// under LongRun — two numbers that differ on this world.
func TestEstimandsFromThePopulation(t *testing.T) {
	d0 := [2]float64{0.25, 0.75}
	const T = 3
	d := expectationLog(t, d0, T)
	_, pi := tinyPolicies(t)
	for _, gamma := range []float64{1, 0.5} {
		horizon := truthT(d0, T, gamma)
		longRun, err := mdp.LongRun(tinyTable{d0}, pi, gamma)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(horizon-longRun) < 0.01 {
			t.Fatalf("gamma %g: the two estimands %.4f and %.4f do not differ", gamma, horizon, longRun)
		}
		for _, c := range []struct {
			est  ope.Estimand
			want float64
		}{{ope.Horizon, horizon}, {ope.LongRun, longRun}} {
			ests, err := ope.New([]string{"model-based", "fqe"}, ope.Options{Target: pi, Estimand: c.est})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ests {
				res, err := e.Estimate(d, gamma)
				if err != nil {
					t.Fatalf("%s: %v", e.Name(), err)
				}
				if math.Abs(res.Value-c.want) > 1e-9 || res.Estimand != c.est {
					t.Errorf("gamma %g, %s: %s = %.12f (%s), want %.12f", gamma, c.est, e.Name(), res.Value, res.Estimand, c.want)
				}
			}
		}
	}
}
