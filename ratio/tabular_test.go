package ratio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/env/ring"
	"github.com/ihope-ope/ihope/env/taxi"
	"github.com/ihope-ope/ihope/exact"
	"github.com/ihope-ope/ihope/policy"
)

// population returns the Counts of infinitely many transitions logged by
// pi0 in m (see Counts): the edges weigh d_pi0(s) pi0(a|s) P(s'|s,a) (times
// gamma if gamma < 1), the dummy transitions (1-gamma) d_0, and the
// normalisation is d_pi0. With them the loss vanishes exactly at the true
// ratio (Theorems 1 and 3), so the solver must return it.
func population(t *testing.T, m env.Tabular, pi, pi0 policy.Discrete, gamma float64) *Counts {
	t.Helper()
	d0, err := exact.Visitation(m, pi0, gamma)
	if err != nil {
		t.Fatal(err)
	}
	c := &Counts{NumStates: m.NumStates(), Norm: d0}
	scale := 1.0
	if gamma < 1 {
		scale = gamma
		c.Restart = make([]float64, m.NumStates())
		for s, p := range m.Initial() {
			c.Restart[s] = (1 - gamma) * p
		}
	}
	for s, ds := range d0 {
		if ds == 0 {
			continue
		}
		for a := 0; a < m.NumActions(); a++ {
			for _, o := range m.Outcomes(s, a) {
				c.Edges = append(c.Edges, Edge{
					From: s, To: o.Next,
					Weight:      scale * ds * pi0.Prob(s, a) * o.Prob,
					RatioWeight: scale * ds * pi.Prob(s, a) * o.Prob,
				})
			}
		}
	}
	return c
}

func taxiPolicies(t testing.TB) (target, behavior *policy.Tabular) {
	t.Helper()
	pi, err := taxi.Policy(taxi.DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	pi0, err := taxi.Policy(taxi.DefaultBehavior)
	if err != nil {
		t.Fatal(err)
	}
	return pi, pi0
}

func sample(t testing.TB, seed uint64, m env.Tabular, behavior, target policy.Discrete, n, T int) *dataset.Dataset {
	t.Helper()
	d, err := dataset.Sample(rand.New(rand.NewPCG(seed, 0)), env.NewSampler(m), behavior, target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// step is a discrete step with the given log-probabilities.
func step(s, a, next int, pTarget, pBehavior float64) dataset.Step {
	return dataset.Step{State: s, Action: a, HasNext: true, NextState: next,
		LogTarget: math.Log(pTarget), LogBehavior: math.Log(pBehavior)}
}

func TestAggregate(t *testing.T) {
	// Two episodes on 3 states. Episode "a": 0 -> 1 (beta 2) -> 1 (beta
	// 1/2) -> 2 (beta 1, next state unknown). Episode "b": 1 -> 0 (beta 3).
	d := &dataset.Dataset{NumStates: 3, NumActions: 2, Episodes: []dataset.Episode{
		{ID: "a", Steps: []dataset.Step{
			step(0, 0, 1, 0.8, 0.4),
			step(1, 1, 1, 0.25, 0.5),
			{State: 2, Action: 0, LogTarget: math.Log(0.5), LogBehavior: math.Log(0.5)},
		}},
		{ID: "b", Steps: []dataset.Step{step(1, 0, 0, 0.9, 0.3)}},
		{ID: "empty"},
	}}
	for i, tc := range []struct {
		gamma   float64
		edges   []Edge
		restart []float64
		norm    []float64
	}{
		{
			gamma: 1,
			edges: []Edge{
				{From: 0, To: 1, Weight: 1, RatioWeight: 2},
				{From: 1, To: 1, Weight: 1, RatioWeight: 0.5},
				{From: 1, To: 0, Weight: 1, RatioWeight: 3},
			},
			norm: []float64{1, 2, 1},
		},
		{
			// Step t weighs gamma^(t+1), the dummy transitions 1, the
			// normalisation gamma^t.
			gamma: 0.5,
			edges: []Edge{
				{From: 0, To: 1, Weight: 0.5, RatioWeight: 1},
				{From: 1, To: 1, Weight: 0.25, RatioWeight: 0.125},
				{From: 1, To: 0, Weight: 0.5, RatioWeight: 1.5},
			},
			restart: []float64{1, 1, 0},
			norm:    []float64{1, 1.5, 0.25},
		},
	} {
		c, err := Aggregate(d, tc.gamma)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if c.NumStates != 3 || len(c.Edges) != len(tc.edges) {
			t.Fatalf("case %d: %d states, edges %v, want 3 and %v", i, c.NumStates, c.Edges, tc.edges)
		}
		for k, e := range c.Edges {
			w := tc.edges[k]
			if e.From != w.From || e.To != w.To || !scalar.EqualWithinAbs(e.Weight, w.Weight, 1e-15) || !scalar.EqualWithinAbs(e.RatioWeight, w.RatioWeight, 1e-15) {
				t.Errorf("case %d: edge %d = %+v, want %+v", i, k, e, w)
			}
		}
		if fmt.Sprint(c.Restart) != fmt.Sprint(tc.restart) && !(c.Restart == nil && tc.restart == nil) {
			t.Errorf("case %d: restart %v, want %v", i, c.Restart, tc.restart)
		}
		if fmt.Sprint(c.Norm) != fmt.Sprint(tc.norm) {
			t.Errorf("case %d: norm %v, want %v", i, c.Norm, tc.norm)
		}
	}
}

// TestSolveSmall checks solutions that can be worked out by hand.
func TestSolveSmall(t *testing.T) {
	for i, tc := range []struct {
		c    Counts
		w    []float64
		loss float64
	}{
		{
			// 0 -> 1 with beta 2, 1 -> 0 with beta 1/2: the balance
			// 2 w0 = w1 and (w0 + w1)/2 = 1 give w = (2/3, 4/3), loss 0.
			// State 2 never occurs and gets 0.
			c: Counts{NumStates: 3,
				Edges: []Edge{{From: 0, To: 1, Weight: 1, RatioWeight: 2}, {From: 1, To: 0, Weight: 1, RatioWeight: 0.5}},
				Norm:  []float64{1, 1, 0}},
			w: []float64{2.0 / 3, 4.0 / 3, 0},
		},
		{
			// The same chain with repeated edges in any order.
			c: Counts{NumStates: 3,
				Edges: []Edge{{From: 1, To: 0, Weight: 0.5, RatioWeight: 0.25}, {From: 0, To: 1, Weight: 1, RatioWeight: 2}, {From: 1, To: 0, Weight: 0.5, RatioWeight: 0.25}},
				Norm:  []float64{3, 3, 0}},
			w: []float64{2.0 / 3, 4.0 / 3, 0},
		},
		{
			// One state with a self-loop of ratio 1/2 and a restart of
			// weight 1 (a discounted problem), total weight 2: A = (0.5 -
			// 2)/2 = -3/4 and b = -1/2. The normalisation alone fixes
			// w = 1, and the loss is (-3/4 + 1/2)^2 = 1/16.
			c: Counts{NumStates: 1,
				Edges:   []Edge{{From: 0, To: 0, Weight: 1, RatioWeight: 0.5}},
				Restart: []float64{1},
				Norm:    []float64{1}},
			w:    []float64{1},
			loss: 1.0 / 16,
		},
		{
			// 0 -> 1 (beta 1) and 1 -> 1 (beta 2), total weight 2. Column 0
			// is (0, 1/2) (nothing enters state 0); column 1 is
			// (0, 2/2 - 2/2) = 0, so state 1 is not an unknown (w = 0),
			// w0 = 1/c0 = 2 and the loss is (1/2 * 2)^2 = 1.
			c: Counts{NumStates: 2,
				Edges: []Edge{{From: 0, To: 1, Weight: 1, RatioWeight: 1}, {From: 1, To: 1, Weight: 1, RatioWeight: 2}},
				Norm:  []float64{1, 1}},
			w:    []float64{2, 0},
			loss: 1,
		},
	} {
		m, err := Tabular{}.Solve(&tc.c)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if d := maxAbsDiff(m.W, tc.w); d > 1e-12 {
			t.Errorf("case %d: w = %v, want %v", i, m.W, tc.w)
		}
		if !scalar.EqualWithinAbs(m.Loss, tc.loss, 1e-14) {
			t.Errorf("case %d: loss %v, want %v", i, m.Loss, tc.loss)
		}
	}
}

// TestPopulationRing: on the ring every policy that picks R with the same
// probability in every state has the uniform stationary (and, from the
// uniform start, discounted) distribution, so w = 1.
func TestPopulationRing(t *testing.T) {
	for i, tc := range []struct {
		n        int
		pR, pR0  float64
		gamma    float64
		wantIter int // at most
	}{
		{5, 0.7, 0.3, 1, 10},
		{5, 0.7, 0.3, 0.9, 10},
		{11, 0.9, 0.2, 1, 30},
		{11, 0.1, 0.6, 0.5, 30},
	} {
		m, err := ring.New(tc.n)
		if err != nil {
			t.Fatal(err)
		}
		c := population(t, m, ring.Policy(tc.n, tc.pR), ring.Policy(tc.n, tc.pR0), tc.gamma)
		mod, err := Tabular{}.Solve(c)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for s, w := range mod.W {
			if math.Abs(w-1) > 1e-9 {
				t.Errorf("case %d: w(%d) = %v, want 1", i, s, w)
			}
		}
		if mod.Loss > 1e-20 || mod.Negative != 0 || mod.Unknowns != tc.n || mod.Iterations > tc.wantIter {
			t.Errorf("case %d: loss %v, %d negative, %d unknowns, %d iterations", i, mod.Loss, mod.Negative, mod.Unknowns, mod.Iterations)
		}
	}
}

// TestPopulationTaxi: with population weights the solver returns
// exact.Ratio on Taxi (pi19 target, pi18 behavior).
func TestPopulationTaxi(t *testing.T) {
	m := taxi.New()
	pi, pi0 := taxiPolicies(t)
	for _, gamma := range []float64{1, 0.99} {
		want, err := exact.Ratio(m, pi, pi0, gamma)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := Tabular{}.Solve(population(t, m, pi, pi0, gamma))
		if err != nil {
			t.Fatalf("gamma %v: %v", gamma, err)
		}
		diff := maxAbsDiff(mod.W, want)
		t.Logf("gamma %v: %d unknowns, %d iterations, max |w - w*| = %.2g, max w* = %.3g, loss %.2g",
			gamma, mod.Unknowns, mod.Iterations, diff, maxOf(want), mod.Loss)
		if diff > 1e-9 {
			t.Errorf("gamma %v: max |w - exact.Ratio| = %v, want <= 1e-9", gamma, diff)
		}
		if mod.Negative != 0 {
			t.Errorf("gamma %v: %d negative entries", gamma, mod.Negative)
		}
	}
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}
