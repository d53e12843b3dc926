package mdp_test

import (
	"math"
	"testing"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// The tests on the Taxi world live outside package mdp, which taxi imports.

func taxiPolicy(t testing.TB, name string) *policy.Tabular {
	t.Helper()
	p, err := taxi.Policy(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTaxiValue is the check value of the authors' Taxi: pi19, gamma = 1,
// 400 steps from the reset distribution.
func TestTaxiValue(t *testing.T) {
	got := mdp.Value(taxi.New(), taxiPolicy(t, "pi19"), nil, 400, 1)
	if math.Abs(got-(-0.141180)) > 5e-7 {
		t.Errorf("mdp.Value(pi19, T=400, gamma=1) = %.8f, want -0.141180", got)
	}
}

// bruteForce computes Value and VisitationT independently: straight from
// the outcome lists, no merged chain, no early stop, weights from math.Pow.
func bruteForce(m mdp.Finite, pi policy.Discrete, T int, gamma float64) (float64, []float64) {
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
		if got := mdp.Value(m, pi, nil, c.T, c.gamma); math.Abs(got-wantV) > 1e-12 {
			t.Errorf("case %d: Value = %.15f, brute force %.15f", i, got, wantV)
		}
		if got := mdp.VisitationT(m, pi, nil, c.T, c.gamma); mdp.L1Dist(got, wantD) > 1e-12 {
			t.Errorf("case %d: VisitationT differs from brute force by %.3g in L1", i, mdp.L1Dist(got, wantD))
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
	c := mdp.NewChain(m, pi)
	for _, gamma := range []float64{1, 0.99} {
		dense, err := c.Visitation(m.Initial(), gamma, true)
		if err != nil {
			t.Fatal(err)
		}
		iter, err := c.Visitation(m.Initial(), gamma, false)
		if err != nil {
			t.Fatal(err)
		}
		if diff := mdp.L1Dist(dense, iter); diff > 1e-12 {
			t.Errorf("gamma %v: dense and iterative visitations differ by %.3g in L1", gamma, diff)
		}
		if r := c.Residual(dense, m.Initial(), gamma); r > 1e-14 {
			t.Errorf("gamma %v: residual %.3g", gamma, r)
		}
		for s, v := range dense {
			if !(v > 0) {
				t.Fatalf("gamma %v: d(%d) = %v, want > 0 (every Taxi state is recurrent under pi19)", gamma, s, v)
			}
		}
		if gamma < 1 {
			// gamma^5000 = 1.5e-22: the normalised T-step visitation is d_pi.
			if diff := mdp.L1Dist(mdp.VisitationT(m, pi, nil, 5000, gamma), dense); diff > 1e-12 {
				t.Errorf("mdp.VisitationT(T=5000, gamma=%v) differs from Visitation by %.3g", gamma, diff)
			}
		} else {
			// A stationary start stays stationary: the 50-step value is r_pi . d.
			want := c.Reward(dense)
			if got := mdp.Value(m, pi, dense, 50, 1); math.Abs(got-want) > 1e-13 {
				t.Errorf("Value from the stationary distribution = %.15f, want %.15f", got, want)
			}
		}
	}
}

func BenchmarkValueTaxi(b *testing.B) {
	m, pi := taxi.New(), taxiPolicy(b, "pi19")
	for b.Loop() {
		mdp.Value(m, pi, nil, 400, 1)
	}
}

func BenchmarkVisitationTaxi(b *testing.B) {
	m, pi := taxi.New(), taxiPolicy(b, "pi19")
	for b.Loop() {
		if _, err := mdp.Visitation(m, pi, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVisitationTaxiIterative(b *testing.B) {
	m, pi := taxi.New(), taxiPolicy(b, "pi19")
	c := mdp.NewChain(m, pi)
	for b.Loop() {
		if _, err := c.Visitation(m.Initial(), 1, false); err != nil {
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
		lr, err := mdp.LongRun(m, pi, c.gamma)
		if err != nil {
			t.Fatal(err)
		}
		v := mdp.Value(m, pi, nil, c.T, c.gamma)
		if math.Abs(v-lr) > c.tol {
			t.Errorf("gamma %g: mdp.Value(T=%d) = %.8f, LongRun = %.8f", c.gamma, c.T, v, lr)
		}
		if c.gamma == 1 {
			if math.Abs(lr-(-0.12173)) > 5e-6 {
				t.Errorf("pi19's long-run average reward %.6f, want -0.12173", lr)
			}
			if v400 := mdp.Value(m, pi, nil, 400, 1); math.Abs(v400-lr) < 0.015 {
				t.Errorf("T = 400 value %.6f is within 0.015 of the long-run %.6f; the two estimands should differ", v400, lr)
			}
		}
	}
}
