package exact

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/env/taxi"
	"github.com/ihope-ope/ihope/policy"
)

// table is a small env.Tabular given by its outcome lists.
type table struct {
	init []float64
	out  [][][]env.Outcome // out[s][a]
}

func (m *table) NumStates() int                  { return len(m.out) }
func (m *table) NumActions() int                 { return len(m.out[0]) }
func (m *table) Initial() []float64              { return m.init }
func (m *table) Outcomes(s, a int) []env.Outcome { return m.out[s][a] }

// twoState is the hand-checked MDP: action 0 stays, action 1 switches
// state; every step in state 0 pays 1, in state 1 pays 0. Action 1 in
// state 0 lists its outcome twice (two halves), to exercise merging. The
// start distribution is (1, 0).
func twoState() *table {
	return &table{
		init: []float64{1, 0},
		out: [][][]env.Outcome{
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

func taxiPolicy(t testing.TB, name string) *policy.Tabular {
	t.Helper()
	p, err := taxi.Policy(name)
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

// TestTaxiValue is the check value of the authors' Taxi: pi19, gamma = 1,
// 400 steps from the reset distribution.
func TestTaxiValue(t *testing.T) {
	got := Value(taxi.New(), taxiPolicy(t, "pi19"), nil, 400, 1)
	if math.Abs(got-(-0.141180)) > 5e-7 {
		t.Errorf("Value(pi19, T=400, gamma=1) = %.8f, want -0.141180", got)
	}
}

// bruteForce computes Value and VisitationT independently: straight from
// the outcome lists, no merged chain, no early stop, weights from math.Pow.
func bruteForce(m env.Tabular, pi policy.Discrete, T int, gamma float64) (float64, []float64) {
	n, nA := m.NumStates(), m.NumActions()
	d := append([]float64(nil), m.Initial()...)
	visit := make([]float64, n)
	z := 0.0
	for t := 0; t < T; t++ {
		z += math.Pow(gamma, float64(t))
	}
	value := 0.0
	for t := 0; t < T; t++ {
		g := math.Pow(gamma, float64(t)) / z
		next := make([]float64, n)
		for s := 0; s < n; s++ {
			visit[s] += g * d[s]
			for a := 0; a < nA; a++ {
				for _, o := range m.Outcomes(s, a) {
					q := d[s] * pi.Prob(s, a) * o.Prob
					value += g * q * o.Reward
					next[o.Next] += q
				}
			}
		}
		d = next
	}
	return value, visit
}

// TestTaxiBruteForce compares Value and VisitationT (merged chain, early
// stop) with the brute-force computation, for horizons with and without the
// early stop.
func TestTaxiBruteForce(t *testing.T) {
	m := taxi.New()
	cases := []struct {
		policy string
		T      int
		gamma  float64
	}{
		{"pi19", 400, 1},
		{"pi18", 25, 1},
		{"pi14", 600, 0.99},
		{"pi19", 1, 0.5},
	}
	for i, c := range cases {
		pi := taxiPolicy(t, c.policy)
		wantV, wantD := bruteForce(m, pi, c.T, c.gamma)
		if got := Value(m, pi, nil, c.T, c.gamma); math.Abs(got-wantV) > 1e-12 {
			t.Errorf("case %d: Value = %.15f, brute force %.15f", i, got, wantV)
		}
		if got := VisitationT(m, pi, nil, c.T, c.gamma); l1dist(got, wantD) > 1e-12 {
			t.Errorf("case %d: VisitationT differs from brute force by %.3g in L1", i, l1dist(got, wantD))
		}
	}
}

// TestTaxiVisitation solves the Taxi visitation twice, by dense LU and by
// iteration, checks the residual of d = (1-gamma) d0 + gamma d P_pi, and
// checks the limit T -> infinity of VisitationT (gamma < 1) and the
// invariance of the stationary distribution under Value (gamma = 1).
func TestTaxiVisitation(t *testing.T) {
	m := taxi.New()
	pi := taxiPolicy(t, "pi19")
	c := newChain(m, pi)
	for _, gamma := range []float64{1, 0.99} {
		dense, err := c.visitation(m.Initial(), gamma, true)
		if err != nil {
			t.Fatal(err)
		}
		iter, err := c.visitation(m.Initial(), gamma, false)
		if err != nil {
			t.Fatal(err)
		}
		if diff := l1dist(dense, iter); diff > 1e-12 {
			t.Errorf("gamma %v: dense and iterative visitations differ by %.3g in L1", gamma, diff)
		}
		if r := c.residual(dense, m.Initial(), gamma); r > 1e-14 {
			t.Errorf("gamma %v: residual %.3g", gamma, r)
		}
		for s, v := range dense {
			if !(v > 0) {
				t.Fatalf("gamma %v: d(%d) = %v, want > 0 (every Taxi state is recurrent under pi19)", gamma, s, v)
			}
		}
		if gamma < 1 {
			// gamma^5000 = 1.5e-22: the normalised T-step visitation is d_pi.
			if diff := l1dist(VisitationT(m, pi, nil, 5000, gamma), dense); diff > 1e-12 {
				t.Errorf("VisitationT(T=5000, gamma=%v) differs from Visitation by %.3g", gamma, diff)
			}
		} else {
			// A stationary start stays stationary: the 50-step value is r_pi . d.
			want := c.reward(dense)
			if got := Value(m, pi, dense, 50, 1); math.Abs(got-want) > 1e-13 {
				t.Errorf("Value from the stationary distribution = %.15f, want %.15f", got, want)
			}
		}
	}
}

// TestClasses covers chains with transient states, several closed classes
// and period 2, solved both ways.
func TestClasses(t *testing.T) {
	det := func(next ...int) [][]env.Outcome { // one deterministic action
		out := make([][]env.Outcome, len(next))
		for s, j := range next {
			out[s] = []env.Outcome{{Next: j, Prob: 1, Reward: float64(s)}}
		}
		return out
	}
	rows := func(acts ...[][]env.Outcome) [][][]env.Outcome {
		out := make([][][]env.Outcome, len(acts[0]))
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
	split := &table{init: []float64{1, 0, 0}, out: [][][]env.Outcome{
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

func BenchmarkValueTaxi(b *testing.B) {
	m, pi := taxi.New(), taxiPolicy(b, "pi19")
	for b.Loop() {
		Value(m, pi, nil, 400, 1)
	}
}

func BenchmarkVisitationTaxi(b *testing.B) {
	m, pi := taxi.New(), taxiPolicy(b, "pi19")
	for b.Loop() {
		if _, err := Visitation(m, pi, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVisitationTaxiIterative(b *testing.B) {
	m, pi := taxi.New(), taxiPolicy(b, "pi19")
	c := newChain(m, pi)
	for b.Loop() {
		if _, err := c.visitation(m.Initial(), 1, false); err != nil {
			b.Fatal(err)
		}
	}
}

// The long-run value is the limit of the T-step value: on Taxi the two
// differ by about 0.02 at T = 400 (-0.141180 and -0.12173 for pi19), and
// Value approaches LongRun like 1/T (gamma = 1) or geometrically (gamma < 1).
func TestLongRunIsTheLimit(t *testing.T) {
	m := taxi.New()
	pi, _ := taxi.Policy("pi19")
	for _, c := range []struct {
		gamma, tol float64
		T          int
	}{{1, 2e-4, 100000}, {0.99, 1e-10, 5000}} {
		lr, err := LongRun(m, pi, c.gamma)
		if err != nil {
			t.Fatal(err)
		}
		v := Value(m, pi, nil, c.T, c.gamma)
		if math.Abs(v-lr) > c.tol {
			t.Errorf("gamma %g: Value(T=%d) = %.8f, LongRun = %.8f", c.gamma, c.T, v, lr)
		}
		if c.gamma == 1 {
			if math.Abs(lr-(-0.12173)) > 5e-6 {
				t.Errorf("pi19's long-run average reward %.6f, want -0.12173", lr)
			}
			if v400 := Value(m, pi, nil, 400, 1); math.Abs(v400-lr) < 0.015 {
				t.Errorf("T = 400 value %.6f is within 0.015 of the long-run %.6f; the two estimands should differ", v400, lr)
			}
		}
	}
}
