package mdp

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/policy"
)

// table is a small Finite given by its outcome lists.
type table struct {
	init []float64
	out  [][][]Outcome // out[s][a]
}

func (m *table) NumStates() int              { return len(m.out) }
func (m *table) NumActions() int             { return len(m.out[0]) }
func (m *table) Initial() []float64          { return m.init }
func (m *table) Outcomes(s, a int) []Outcome { return m.out[s][a] }

// twoState is the hand-checked MDP: action 0 stays, action 1 switches
// state; every step in state 0 pays 1, in state 1 pays 0. Action 1 in
// state 0 lists its outcome twice (two halves), to exercise merging. The
// start distribution is (1, 0).
func twoState() *table {
	return &table{
		init: []float64{1, 0},
		out: [][][]Outcome{
			{{{Next: 0, Prob: 1, Reward: 1}}, {{Next: 1, Prob: 0.5, Reward: 1}, {Next: 1, Prob: 0.5, Reward: 1}}},
			{{{Next: 1, Prob: 1, Reward: 0}}, {{Next: 0, Prob: 1, Reward: 0}}},
		},
	}
}

// switching returns the policy that switches with probability a in state 0
// and b in state 1: P_pi = [[1-a, a], [b, 1-b]], stationary (b, a)/(a+b).
func switching(t *testing.T, a, b float64) *policy.Tabular {
	t.Helper()
	p, err := policy.NewTabular([][]float64{{1 - a, a}, {1 - b, b}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func checkVec(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !scalar.EqualWithinAbsOrRel(got[i], want[i], tol, tol) {
			t.Errorf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}

// TestTwoState checks every function against values computed by hand for
// P_pi = [[0.8, 0.2], [0.3, 0.7]]: d_t(0) = 0.6 + 0.4 * 0.5^t, stationary
// distribution (0.6, 0.4); for pi0 with a = b = 0.5, d_t(0) = 0.5 for t >= 1.
func TestTwoState(t *testing.T) {
	m := twoState()
	pi := switching(t, 0.2, 0.3)
	pi0 := switching(t, 0.5, 0.5)

	values := []struct {
		d0    []float64
		T     int
		gamma float64
		want  float64
	}{
		{nil, 1, 1, 1},
		{nil, 3, 1, (1 + 0.8 + 0.7) / 3},
		{nil, 2, 0.5, (1 + 0.5*0.8) / 1.5}, // 14/15
		{[]float64{0, 1}, 2, 1, 0.3 / 2},
		{[]float64{0.6, 0.4}, 7, 0.9, 0.6}, // stationary start
	}
	for i, c := range values {
		if got := Value(m, pi, c.d0, c.T, c.gamma); !scalar.EqualWithinAbsOrRel(got, c.want, 1e-15, 1e-15) {
			t.Errorf("case %d: Value = %.17g, want %.17g", i, got, c.want)
		}
	}

	// Return is Value without the normalisation: 1 + 0.5 * 0.8 for T = 2,
	// gamma = 0.5; 1 + 0.8 + 0.7 for T = 3, gamma = 1.
	returns := []struct {
		T           int
		gamma, want float64
	}{{2, 0.5, 1.4}, {3, 1, 2.5}, {1, 0.3, 1}}
	for i, c := range returns {
		if got := Return(m, pi, nil, c.T, c.gamma); !scalar.EqualWithinAbsOrRel(got, c.want, 1e-15, 1e-15) {
			t.Errorf("case %d: Return = %.17g, want %.17g", i, got, c.want)
		}
	}

	checkVec(t, "VisitationT(T=3)", VisitationT(m, pi, nil, 3, 1), []float64{2.5 / 3, 0.5 / 3}, 1e-15)

	d, err := Visitation(m, pi, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, "stationary", d, []float64{0.6, 0.4}, 1e-15)

	// Discounted, gamma = 0.9: d(0) = 0.6 + 0.4 (1-gamma)/(1 - 0.5 gamma) = 37/55.
	d, err = Visitation(m, pi, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, "discounted", d, []float64{37.0 / 55, 18.0 / 55}, 1e-15)

	w, err := Ratio(m, pi, pi0, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, "ratio gamma=1", w, []float64{1.2, 0.8}, 1e-14)

	// pi0 discounted: d(0) = 0.1*1 + 0.9*0.5 = 0.55.
	w, err = Ratio(m, pi, pi0, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, "ratio gamma=0.9", w, []float64{(37.0 / 55) / 0.55, (18.0 / 55) / 0.45}, 1e-14)
}

// TestClasses covers chains with transient states, several closed classes
// and period 2, solved both ways.
func TestClasses(t *testing.T) {
	det := func(next ...int) [][]Outcome { // one deterministic action
		out := make([][]Outcome, len(next))
		for s, j := range next {
			out[s] = []Outcome{{Next: j, Prob: 1, Reward: float64(s)}}
		}
		return out
	}
	rows := func(acts ...[][]Outcome) [][][]Outcome {
		out := make([][][]Outcome, len(acts[0]))
		for s := range out {
			for _, a := range acts {
				out[s] = append(out[s], a[s])
			}
		}
		return out
	}
	// 0 -> 1, 1 <-> 2 (period 2), 3 -> 0: states 0 and 3 are transient.
	periodic := &table{init: []float64{0, 0, 0, 1}, out: rows(det(1, 2, 1, 0))}
	// 0 -> 1 and 0 -> 2 with prob 1/2, 1 and 2 absorbing: two closed classes.
	split := &table{init: []float64{1, 0, 0}, out: [][][]Outcome{
		{{{Next: 1, Prob: 0.5}, {Next: 2, Prob: 0.5}}},
		{{{Next: 1, Prob: 1}}},
		{{{Next: 2, Prob: 1}}},
	}}
	cases := []struct {
		m     *table
		gamma float64
		want  []float64 // nil: error
	}{
		{periodic, 1, []float64{0, 0.5, 0.5, 0}},
		// From state 3: d = 0.5 (3) + 0.25 (0) + then 1, 2, 1, ... with
		// weights (1-g) g^t: state 1 gets g^2 (1-g) / (1-g^2) ... for g = 0.5:
		// d(3) = 0.5, d(0) = 0.25, d(1) = 0.125 (1 + 1/4 + ...) = 1/6, d(2) = 1/12.
		{periodic, 0.5, []float64{0.25, 1.0 / 6, 1.0 / 12, 0.5}},
		{split, 1, nil},
		{split, 0.5, []float64{0.5, 0.25, 0.25}},
	}
	for i, c := range cases {
		pi := policy.Uniform(c.m.NumStates(), 1)
		ch := newChain(c.m, pi)
		for _, dense := range []bool{true, false} {
			got, err := ch.visitation(c.m.init, c.gamma, dense)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), "not unique") {
					t.Errorf("case %d dense=%v: error %v, want 'not unique'", i, dense, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("case %d dense=%v: %v", i, dense, err)
			}
			for s := range got {
				// Transient states must be exactly zero, the others within 1e-13.
				if (c.want[s] == 0 && got[s] != 0) || math.Abs(got[s]-c.want[s]) > 1e-13 {
					t.Errorf("case %d dense=%v: d[%d] = %.17g, want %.17g", i, dense, s, got[s], c.want[s])
				}
			}
		}
	}
}

// TestRatioZero: where the behavior's visitation is 0 the ratio is 0.
func TestRatioZero(t *testing.T) {
	m := twoState()
	stay, err := policy.NewTabular([][]float64{{1, 0}, {0.5, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	// Under stay, state 0 is absorbing: d_pi0 = (1, 0).
	w, err := Ratio(m, switching(t, 0.2, 0.3), stay, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, "ratio", w, []float64{0.6, 0}, 1e-15)
}

func TestErrors(t *testing.T) {
	m := twoState()
	pi := switching(t, 0.2, 0.3)
	for _, gamma := range []float64{0, -1, 1.5, math.NaN()} {
		if _, err := Visitation(m, pi, gamma); err == nil {
			t.Errorf("Visitation(gamma=%v): no error", gamma)
		}
	}
	if _, err := Visitation(m, policy.Uniform(2, 3), 1); err == nil {
		t.Error("Visitation with a 3-action policy on a 2-action MDP: no error")
	}
	if _, err := Ratio(m, pi, policy.Uniform(2, 3), 1); err == nil {
		t.Error("Ratio with a mismatched behavior: no error")
	}
	panics := []func(){
		func() { Value(m, pi, nil, 0, 1) },
		func() { Value(m, pi, nil, 5, 0) },
		func() { Value(m, pi, []float64{1}, 5, 1) },
		func() { VisitationT(m, policy.Uniform(2, 3), nil, 5, 1) },
	}
	for i, f := range panics {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("case %d: no panic", i)
				}
			}()
			f()
		}()
	}
}
