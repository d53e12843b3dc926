package value

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// sars is one logged step (s, a, r, s'); next < 0 means no next state.
type sars struct {
	s, a int
	r    float64
	next int
}

// logOf builds a dataset of the given episodes (ids "e0", "e1", ...)
// with a uniform behavior, the target's log-probabilities from pi and,
// if withProbs, the target_prob_k columns (and the final rows) from pi.
func logOf(t testing.TB, nS, nA int, pi [][]float64, withProbs bool, eps ...[]sars) *dataset.Dataset {
	t.Helper()
	var episodes []dataset.Episode
	for i, ep := range eps {
		e := dataset.Episode{ID: "e" + string(rune('0'+i))}
		if i >= 10 {
			e.ID = "e" + string(rune('a'+i-10))
		}
		for _, st := range ep {
			e.Steps = append(e.Steps, dataset.Step{State: st.s, Action: st.a, Reward: st.r,
				NextState: st.next, HasNext: st.next >= 0,
				LogBehavior: math.Log(1 / float64(nA)), LogTarget: math.Log(pi[st.s][st.a])})
		}
		episodes = append(episodes, e)
	}
	d, err := dataset.New(nS, nA, episodes)
	if err != nil {
		t.Fatal(err)
	}
	if withProbs {
		for _, s := range d.State {
			d.TargetProbs = append(d.TargetProbs, pi[s]...)
		}
		d.FinalTargetProbs = make([]float64, nA*d.NumEpisodes())
		d.HasFinalTarget = make([]bool, d.NumEpisodes())
		for e := range d.NumEpisodes() {
			if d.HasFinal[e] {
				copy(d.FinalTargetProbs[e*nA:], pi[d.FinalState[e]])
				d.HasFinalTarget[e] = true
			}
		}
	}
	return d
}

func tabularPolicy(t testing.TB, rows [][]float64) *policy.Tabular {
	t.Helper()
	p, err := policy.NewTabular(rows)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The hand-worked MDP: 2 states, 2 actions,
//
//	(s,a)   r(s,a)   P(.|s,a)
//	(0,0)     1      0: 1/2, 1: 1/2
//	(0,1)     0      1: 1
//	(1,0)     2      0: 1
//	(1,1)    -1      0: 1/4, 1: 3/4
//
// and the target pi(.|0) = (1/2, 1/2), pi(.|1) = (1/4, 3/4), so
//
//	r_pi = (1/2, -1/4),   P_pi = [[1/4, 3/4], [7/16, 9/16]].
//
// handLog is a log whose count model is exactly that MDP: the eight
// transitions (0,0->0) (0,0->1) (0,1->1) (1,0->0) (1,1->0) and three
// times (1,1->1), as one episode of two steps and six of one step (so the
// longest episode is H = 2). Its logged states are 0 three times and 1
// five times: c = (3/8, 5/8).
//
// Stationary, gamma = 1/2: (I - P_pi/2) v = r_pi reads
//
//	7 v0 - 3 v1 = 4,   -7 v0 + 23 v1 = -8   =>   v = (17/35, -1/5),
//
// and q(s,a) = r(s,a) + 1/2 sum P(s'|s,a) v(s'):
//
//	q(0,0) = 1 + (17/35 - 7/35)/4 = 15/14,   q(0,1) = -1/10,
//	q(1,0) = 2 + 17/70 = 157/70,             q(1,1) = -1 + (17/140 - 21/140)/2 = -71/70,
//
// and indeed v0 = (15/14 - 1/10)/2, v1 = (157/70 - 3*71/70)/4.
//
// Stationary, gamma = 1: the stationary distribution solves
// d0 3/4 = d1 7/16, d = (7/19, 12/19), so rho = 7/38 - 3/19 = 1/38. The
// Poisson equation gives v0 - v1 = (1/2 - 1/38) 4/3 = 12/19, and
// c . v = 0 gives v = (15/38, -9/38). With q(s,a) = r(s,a) - rho +
// sum P(s'|s,a) v(s'):
//
//	q(0,0) = 1 - 1/38 + 3/38 = 20/19,   q(0,1) = -1/38 - 9/38 = -5/19,
//	q(1,0) = 2 - 1/38 + 15/38 = 45/19,  q(1,1) = -1 - 1/38 + (15/4 - 27/4)/38 = -21/19.
//
// Finite horizon: q^1 = r = (1, 0; 2, -1), v^1 = r_pi = (1/2, -1/4), and
// q^2(s,a) = r(s,a) + gamma sum P(s'|s,a) v^1(s'): with P v^1 =
// (1/8, -1/4; 1/2, -1/16) row by row,
//
//	gamma = 1/2: q^2 = (17/16, -1/8; 9/4, -33/32),  v^2 = (15/32, -27/128);
//	gamma = 1:   q^2 = (9/8, -1/4; 5/2, -17/16),    v^2 = (7/16, -11/64).
var handPi = [][]float64{{0.5, 0.5}, {0.25, 0.75}}

func handLog(t testing.TB, withProbs bool) *dataset.Dataset {
	return logOf(t, 2, 2, handPi, withProbs,
		[]sars{{0, 0, 1, 1}, {1, 1, -1, 1}},
		[]sars{{0, 0, 1, 0}}, []sars{{0, 1, 0, 1}}, []sars{{1, 0, 2, 0}},
		[]sars{{1, 1, -1, 1}}, []sars{{1, 1, -1, 1}}, []sars{{1, 1, -1, 0}})
}

func TestTabularHand(t *testing.T) {
	type table struct {
		q [2][2]float64 // q(s,a), or q^H
		v [2]float64    // v(s), or v^H
	}
	q1 := [2][2]float64{{1, 0}, {2, -1}} // q^1 = r
	v1 := [2]float64{0.5, -0.25}         // v^1 = r_pi
	cases := []struct {
		finite bool
		gamma  float64
		probs  bool // pi from the target_prob_k columns, else Target.Policy
		want   table
		rho    float64 // NaN unless stationary and gamma = 1
	}{
		{false, 0.5, false, table{[2][2]float64{{15. / 14, -1. / 10}, {157. / 70, -71. / 70}}, [2]float64{17. / 35, -1. / 5}}, math.NaN()},
		{false, 0.5, true, table{[2][2]float64{{15. / 14, -1. / 10}, {157. / 70, -71. / 70}}, [2]float64{17. / 35, -1. / 5}}, math.NaN()},
		{false, 1, false, table{[2][2]float64{{20. / 19, -5. / 19}, {45. / 19, -21. / 19}}, [2]float64{15. / 38, -9. / 38}}, 1. / 38},
		{false, 1, true, table{[2][2]float64{{20. / 19, -5. / 19}, {45. / 19, -21. / 19}}, [2]float64{15. / 38, -9. / 38}}, 1. / 38},
		{true, 0.5, false, table{[2][2]float64{{17. / 16, -1. / 8}, {9. / 4, -33. / 32}}, [2]float64{15. / 32, -27. / 128}}, math.NaN()},
		{true, 1, true, table{[2][2]float64{{9. / 8, -1. / 4}, {5. / 2, -17. / 16}}, [2]float64{7. / 16, -11. / 64}}, math.NaN()},
	}
	const tol = 1e-12
	for i, c := range cases {
		d := handLog(t, c.probs)
		var target Target
		if !c.probs {
			target.Policy = tabularPolicy(t, handPi)
		}
		model, err := Tabular{Finite: c.finite}.Fit(d, c.gamma, target)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		m := model.(*TabularModel)
		if got := m.Rho(); math.IsNaN(c.rho) != math.IsNaN(got) || !math.IsNaN(c.rho) && math.Abs(got-c.rho) > tol {
			t.Errorf("case %d: rho = %.17g, want %.17g", i, got, c.rho)
		}
		H := 0
		if c.finite {
			H = 2
		}
		if m.Horizon() != H {
			t.Errorf("case %d: horizon %d, want %d", i, m.Horizon(), H)
		}
		for s := range 2 {
			if got := m.V(H, s); math.Abs(got-c.want.v[s]) > tol {
				t.Errorf("case %d: v(%d) = %.17g, want %.17g", i, s, got, c.want.v[s])
			}
			for a := range 2 {
				if got := m.Q(H, s, a); math.Abs(got-c.want.q[s][a]) > tol {
					t.Errorf("case %d: q(%d,%d) = %.17g, want %.17g", i, s, a, got, c.want.q[s][a])
				}
			}
		}
		// Values at every logged step.
		q, v, next, err := m.Values(d)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for e := range d.NumEpisodes() {
			lo, hi := d.Span(e)
			for j := lo; j < hi; j++ {
				s, a := int(d.State[j]), int(d.Action[j])
				ns, _ := d.NextState(e, j)
				wq, wv, wn := c.want.q[s][a], c.want.v[s], c.want.v[ns]
				if c.finite {
					switch hi - j { // steps left
					case 1:
						wq, wv, wn = q1[s][a], v1[s], 0
					case 2:
						wn = v1[ns]
					}
				}
				if math.Abs(q[j]-wq) > tol || math.Abs(v[j]-wv) > tol || math.Abs(next[j]-wn) > tol {
					t.Errorf("case %d: episode %d step %d: (q, v, next) = (%v, %v, %v), want (%v, %v, %v)",
						i, e, j-lo, q[j], v[j], next[j], wq, wv, wn)
				}
			}
		}
	}
}

// TestTabularRestart works the gamma = 1 rule for closed classes other
// than the principal one by hand, on one action (pi = 1) and the episode
// (0 -r=1-> 1) (1 -0-> 0) (0 -1-> 1) (1 -0-> 2), plus, in the trap case,
// a last step (2 -(-1)-> 2).
//
// Dead end: state 2 is never left; its reward is the data mean 1/2;
// c = (1/2, 1/2, 0). State 2 restarts from c: P = [[0,1,0], [1/2,0,1/2],
// [1/2,1/2,0]], stationary d = (3, 4, 2)/9, rho = 3/9 + 1/9 = 4/9.
// c . v = 0 gives v1 = -v0; v2 = r2 - rho = 1/18; v0 = 1 - rho + v1 gives
// v = (5/18, -5/18, 1/18). (The raw count model's chain ends in state 2:
// its long-run average would be 1/2.)
//
// Trap: state 2 loops to itself, reward -1; c = (2, 2, 1)/5; the
// component {0, 1} holds 4/5 of c and {2} is restarted: P's last row is c,
// d = (6, 8, 5)/19, rho = 6/19 - 5/19 = 1/19, v2 = -1 - 1/19 = -20/19,
// c . v = 0 gives v0 + v1 = 10/19 and v0 - v1 = 1 - rho = 18/19:
// v = (14/19, -4/19, -20/19).
func TestTabularRestart(t *testing.T) {
	one := [][]float64{{1}, {1}, {1}}
	ep := []sars{{0, 0, 1, 1}, {1, 0, 0, 0}, {0, 0, 1, 1}, {1, 0, 0, 2}}
	cases := []struct {
		steps []sars
		rho   float64
		v     []float64
	}{
		{ep, 4. / 9, []float64{5. / 18, -5. / 18, 1. / 18}},
		{append(ep[:4:4], sars{2, 0, -1, 2}), 1. / 19, []float64{14. / 19, -4. / 19, -20. / 19}},
	}
	for i, c := range cases {
		d := logOf(t, 3, 1, one, true, c.steps)
		model, err := Tabular{}.Fit(d, 1, Target{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		m := model.(*TabularModel)
		if m.Restarted != 1 {
			t.Errorf("case %d: %d states restarted, want 1", i, m.Restarted)
		}
		if math.Abs(m.Rho()-c.rho) > 1e-12 {
			t.Errorf("case %d: rho = %.17g, want %.17g", i, m.Rho(), c.rho)
		}
		for s, want := range c.v {
			if got := m.V(0, s); math.Abs(got-want) > 1e-12 {
				t.Errorf("case %d: v(%d) = %.17g, want %.17g", i, s, got, want)
			}
			if got := m.Q(0, s, 0); math.Abs(got-want) > 1e-12 { // one action: q = v
				t.Errorf("case %d: q(%d, 0) = %.17g, want %.17g", i, s, got, want)
			}
		}
		// Discounting keeps the count model's self-loop: v(2) = r2 / (1 - gamma).
		model, err = Tabular{}.Fit(d, 0.5, Target{})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		r2 := []float64{0.5, -1}[i]
		if got := model.(*TabularModel).V(0, 2); math.Abs(got-2*r2) > 1e-12 {
			t.Errorf("case %d: gamma 1/2: v(2) = %v, want %v", i, got, 2*r2)
		}
	}
}

func taxiPolicy(t testing.TB, name string) *policy.Tabular {
	t.Helper()
	p, err := taxi.Policy(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rPi returns r_pi(s) = sum_a pi(a|s) r(s,a).
func rPi(m mdp.Finite, pi policy.Discrete) []float64 {
	r := make([]float64, m.NumStates())
	for s := range r {
		for a := range m.NumActions() {
			r[s] += pi.Prob(s, a) * mdp.ExpectedReward(m, s, a)
		}
	}
	return r
}

// TestSolveTabularTaxi solves the true Taxi model: the stationary
// solutions give the exact long-run values of package mdp, the finite
// one mdp.Value, and q satisfies its Bellman equation.
func TestSolveTabularTaxi(t *testing.T) {
	m := taxi.New()
	d0 := m.Initial()
	for _, name := range []string{"pi19", "pi14"} {
		pi := taxiPolicy(t, name)
		r := rPi(m, pi)
		for _, gamma := range []float64{0.99, 1} {
			sol, err := SolveTabular(m, pi, gamma, 0, nil)
			if err != nil {
				t.Fatalf("%s, gamma %v: %v", name, gamma, err)
			}
			visit, err := mdp.Visitation(m, pi, gamma)
			if err != nil {
				t.Fatal(err)
			}
			want := dot(visit, r)
			var got float64
			if gamma < 1 {
				v := make([]float64, m.NumStates())
				for s := range v {
					v[s] = sol.V(0, s)
				}
				got = (1 - gamma) * dot(d0, v)
				if !math.IsNaN(sol.Rho()) {
					t.Errorf("%s, gamma %v: rho %v, want NaN", name, gamma, sol.Rho())
				}
			} else {
				got = sol.Rho()
				if name == "pi19" && math.Abs(got-(-0.12173)) > 5e-6 {
					t.Errorf("pi19: rho = %.8f, want -0.12173", got)
				}
			}
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("%s, gamma %v: long-run value %.15f, exact %.15f", name, gamma, got, want)
			}
			t.Logf("%s, gamma %v: long-run value %.12f (exact %.12f), %d GMRES steps, residual %.2g",
				name, gamma, got, want, sol.Iterations, sol.Residual)
			// Bellman residual of q: q(s,a) = r(s,a) - rho [gamma = 1] + gamma sum P v.
			worst := 0.0
			for s := range m.NumStates() {
				for a := range m.NumActions() {
					b := 0.0
					for _, o := range m.Outcomes(s, a) {
						b += o.Prob * (o.Reward + gamma*sol.V(0, o.Next))
					}
					if gamma == 1 {
						b -= sol.Rho()
					}
					worst = max(worst, math.Abs(sol.Q(0, s, a)-b))
				}
			}
			if worst > 1e-9 {
				t.Errorf("%s, gamma %v: Bellman residual of q %.3g", name, gamma, worst)
			}
		}
		for _, gamma := range []float64{1, 0.99} {
			const H = 400
			sol, err := SolveTabular(m, pi, gamma, H, nil)
			if err != nil {
				t.Fatal(err)
			}
			z := 0.0
			for k := range H {
				z += math.Pow(gamma, float64(k))
			}
			v := make([]float64, m.NumStates())
			for s := range v {
				v[s] = sol.V(H, s)
			}
			got, want := dot(d0, v)/z, mdp.Value(m, pi, nil, H, gamma)
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("%s, finite H = %d, gamma %v: %.15f, mdp.Value %.15f", name, H, gamma, got, want)
			}
			if name == "pi19" && gamma == 1 && math.Abs(got-(-0.141180)) > 5e-7 {
				t.Errorf("pi19, H = 400, gamma = 1: %.8f, want -0.141180", got)
			}
		}
	}
}

// TestSolveDense compares the block solves with dense LU solves of the
// whole systems on random MDPs, small (every block by LU) and large (one
// large block by GMRES), some with two absorbing states, which make the
// large block leak (the two-solve deflation of solveDeflated).
func TestSolveDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	for i := range 12 {
		nS, nA := 5+rng.IntN(60), 1+rng.IntN(4)
		if i%2 == 1 {
			nS = 250 + rng.IntN(300)
		}
		m := randomMDP(rng, nS, nA, i%3 == 0)
		probs := make([][]float64, nS)
		for s := range probs {
			probs[s] = make([]float64, nA)
			sum := 0.0
			for a := range probs[s] {
				probs[s][a] = rng.Float64()
				sum += probs[s][a]
			}
			for a := range probs[s] {
				probs[s][a] /= sum
			}
		}
		pi := tabularPolicy(t, probs)
		P := mat.NewDense(nS, nS, nil)
		r := mat.NewVecDense(nS, rPi(m, pi))
		for s := range nS {
			for a := range nA {
				for _, o := range m.Outcomes(s, a) {
					P.Set(s, o.Next, P.At(s, o.Next)+pi.Prob(s, a)*o.Prob)
				}
			}
		}
		for _, gamma := range []float64{0.3, 0.9, 0.999, 1} {
			sol, err := SolveTabular(m, pi, gamma, 0, nil)
			if sol != nil {
				t.Logf("case %d, %d states, gamma %v: %d GMRES steps, residual %.2g", i, nS, gamma, sol.Iterations, sol.Residual)
			}
			if gamma == 1 && i%3 == 0 {
				// Every third MDP has two absorbing states: no unique rho.
				if err == nil || !strings.Contains(err.Error(), "not unique") {
					t.Errorf("case %d: error %v, want 'not unique'", i, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("case %d, gamma %v: %v", i, gamma, err)
			}
			// Dense: (I - gamma P) v = r, or (I - P + 1 d0^T) h = r.
			A := mat.NewDense(nS, nS, nil)
			for s := range nS {
				for j := range nS {
					a := -gamma * P.At(s, j)
					if s == j {
						a++
					}
					if gamma == 1 {
						a += m.Initial()[j]
					}
					A.Set(s, j, a)
				}
			}
			var x mat.VecDense
			if err := x.SolveVec(A, r); err != nil {
				t.Fatalf("case %d, gamma %v: dense solve: %v", i, gamma, err)
			}
			rho := 0.0
			if gamma == 1 {
				rho = mat.Dot(mat.NewVecDense(nS, m.Initial()), &x)
				if math.Abs(sol.Rho()-rho) > 1e-11 {
					t.Errorf("case %d: rho %.15g, dense %.15g", i, sol.Rho(), rho)
				}
			}
			for s := range nS {
				want := x.AtVec(s) - rho
				if math.Abs(sol.V(0, s)-want) > 1e-10*max(1, math.Abs(want)) {
					t.Errorf("case %d, gamma %v: v(%d) = %.15g, dense %.15g", i, gamma, s, sol.V(0, s), want)
				}
			}
		}
	}
}

// randomMDP returns a sparse random MDP; with traps, its states 0 and 1
// are absorbing under every action.
func randomMDP(rng *rand.Rand, nS, nA int, traps bool) *table {
	m := &table{init: make([]float64, nS), out: make([][][]mdp.Outcome, nS)}
	for s := range nS {
		m.init[s] = 1 / float64(nS)
		m.out[s] = make([][]mdp.Outcome, nA)
		for a := range nA {
			if traps && s < 2 {
				m.out[s][a] = []mdp.Outcome{{Next: s, Prob: 1, Reward: float64(s)}}
				continue
			}
			k := 1 + rng.IntN(3)
			r := rng.NormFloat64()
			for range k {
				m.out[s][a] = append(m.out[s][a], mdp.Outcome{Next: rng.IntN(nS), Prob: 1 / float64(k), Reward: r})
			}
		}
	}
	return m
}

// table is a small mdp.Finite given by its outcome lists.
type table struct {
	init []float64
	out  [][][]mdp.Outcome // out[s][a]
}

func (m *table) NumStates() int                  { return len(m.out) }
func (m *table) NumActions() int                 { return len(m.out[0]) }
func (m *table) Initial() []float64              { return m.init }
func (m *table) Outcomes(s, a int) []mdp.Outcome { return m.out[s][a] }

// TestTabularCrossUse reads a model on logs other than the one it was
// fitted on: states never seen in fitting get q = v = 0, seen states the
// model's values, unknown next states NaN (stationary), and a
// finite-horizon model read on longer episodes extends its recursion.
func TestTabularCrossUse(t *testing.T) {
	pi := [][]float64{{0.5, 0.5}, {0.25, 0.75}, {1, 0}}
	// Fitted on states 0 and 1 only; state 2 exists but is never seen.
	fit := logOf(t, 3, 2, pi, false, []sars{{0, 0, 1, 1}, {1, 1, -1, 0}}, []sars{{1, 0, 2, 1}})
	// Read on: an episode through state 2, and one of three steps whose
	// last next state is unknown.
	other := logOf(t, 3, 2, pi, false, []sars{{2, 0, 5, 0}, {0, 1, 0, 2}}, []sars{{1, 1, 0, 0}, {0, 0, 1, 1}, {1, 0, 3, -1}})
	target := Target{Policy: tabularPolicy(t, pi)}
	for i, finite := range []bool{false, true} {
		for _, gamma := range []float64{0.9, 1} {
			model, err := Tabular{Finite: finite}.Fit(fit, gamma, target)
			if err != nil {
				t.Fatalf("case %d, gamma %v: %v", i, gamma, err)
			}
			m := model.(*TabularModel)
			q, v, next, err := m.Values(other)
			if err != nil {
				t.Fatalf("case %d, gamma %v: %v", i, gamma, err)
			}
			// The same numbers from the model solved for longer horizons on
			// the count model of fit (all its states active: state 2 is a
			// self-loop there, so only the seen states are compared).
			var ref *TabularModel
			if finite {
				cm, err := FitCountModel(fit)
				if err != nil {
					t.Fatal(err)
				}
				if ref, err = SolveTabular(cm, target.Policy, gamma, 3, nil); err != nil {
					t.Fatal(err)
				}
			}
			for e := range other.NumEpisodes() {
				lo, hi := other.Span(e)
				for j := lo; j < hi; j++ {
					s, a := int(other.State[j]), int(other.Action[j])
					ns, ok := other.NextState(e, j)
					h := hi - j
					var wq, wv float64 // 0 at state 2
					switch {
					case s != 2 && finite:
						wq, wv = ref.Q(h, s, a), ref.V(h, s)
					case s != 2:
						wq, wv = m.Q(0, s, a), m.V(0, s)
					}
					wn := math.NaN()
					switch {
					case finite && h == 1:
						wn = 0
					case ns == 2:
						wn = 0
					case ok && finite:
						wn = ref.V(h-1, ns)
					case ok:
						wn = m.V(0, ns)
					}
					if math.Abs(q[j]-wq) > 1e-12 || math.Abs(v[j]-wv) > 1e-12 ||
						math.IsNaN(wn) != math.IsNaN(next[j]) || !math.IsNaN(wn) && math.Abs(next[j]-wn) > 1e-12 {
						t.Errorf("case %d, gamma %v: episode %d step %d: (q, v, next) = (%v, %v, %v), want (%v, %v, %v)",
							i, gamma, e, j-lo, q[j], v[j], next[j], wq, wv, wn)
					}
				}
			}
		}
	}
}

func TestTabularErrors(t *testing.T) {
	good := handLog(t, false)
	withProbs := handLog(t, true)
	pol := Target{Policy: tabularPolicy(t, handPi)}
	continuous := &dataset.Dataset{StateDim: 2, IDs: []string{"x"}, Start: []int{0, 1},
		Obs: []float64{0, 1}, Action: []int32{0}, NumActions: 2, Reward: []float64{0},
		LogBehavior: []float64{0}, LogTarget: []float64{0}, HasFinal: []bool{false}, FinalObs: []float64{0, 0}}
	cases := []struct {
		d      *dataset.Dataset
		gamma  float64
		target Target
		want   string
	}{
		{good, 0, pol, "discount"},
		{good, 1.5, pol, "discount"},
		{good, math.NaN(), pol, "discount"},
		{continuous, 1, pol, "discrete states"},
		{good, 1, Target{}, "needs the target's whole action distribution (target_prob_k columns or a target policy)"},
		{withProbs, 1, Target{Continuous: dummyContinuous{}}, "needs the target's whole action distribution"},
		{good, 1, Target{Policy: policy.Uniform(2, 3)}, "3 actions"},
		{good, 1, Target{Policy: policy.Uniform(4, 2)}, "4 states"},
	}
	for i, c := range cases {
		_, err := Tabular{}.Fit(c.d, c.gamma, c.target)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: error %v, want one containing %q", i, err, c.want)
		}
	}
	// Values on data of another size.
	m, err := Tabular{}.Fit(good, 0.5, pol)
	if err != nil {
		t.Fatal(err)
	}
	bigger := logOf(t, 3, 2, [][]float64{{1, 0}, {1, 0}, {1, 0}}, false, []sars{{2, 0, 0, 1}})
	if _, _, _, err := m.Values(bigger); err == nil || !strings.Contains(err.Error(), "3 states") {
		t.Errorf("Values on 3 states: error %v", err)
	}
	// A true model with two closed classes under the target.
	split := &table{init: []float64{1, 0, 0}, out: [][][]mdp.Outcome{
		{{{Next: 1, Prob: 0.5}, {Next: 2, Prob: 0.5}}},
		{{{Next: 1, Prob: 1}}},
		{{{Next: 2, Prob: 1, Reward: 1}}},
	}}
	if _, err := SolveTabular(split, policy.Uniform(3, 1), 1, 0, nil); err == nil ||
		!strings.Contains(err.Error(), "states 1 and 2 are in different ones") {
		t.Errorf("two closed classes: error %v", err)
	}
	// The discounted and finite solves of the same chain are fine.
	for _, h := range []int{0, 5} {
		if _, err := SolveTabular(split, policy.Uniform(3, 1), 0.9, h, nil); err != nil {
			t.Errorf("horizon %d: %v", h, err)
		}
	}
}

// dummyContinuous is a policy over real actions, which a tabular learner
// cannot use.
type dummyContinuous struct{ policy.Continuous }

func TestTableFromData(t *testing.T) {
	pi := [][]float64{{0.5, 0.5}, {0.25, 0.75}, {0.1, 0.9}, {1, 0}}
	// States 0 and 1 are logged; 2 only as a final state (its row from the
	// final columns); 3 never appears (uniform).
	d := logOf(t, 4, 2, pi, true, []sars{{0, 0, 1, 1}, {1, 1, 0, 0}}, []sars{{1, 0, 0, 2}})
	tab, err := TableFromData(d)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0.5, 0.5}, {0.25, 0.75}, {0.1, 0.9}, {0.5, 0.5}}
	for s := range want {
		for a := range want[s] {
			if tab.Prob(s, a) != want[s][a] {
				t.Errorf("pi(%d|%d) = %v, want %v", a, s, tab.Prob(s, a), want[s][a])
			}
		}
	}
	// Rows within 1e-9 agree; further apart they are an error naming the
	// episode and step.
	near := logOf(t, 4, 2, pi, true, []sars{{0, 0, 1, 1}, {1, 1, 0, 0}}, []sars{{1, 0, 0, 2}})
	near.TargetProbs[2*2] += 5e-10 // episode e1 step 0, state 1
	near.TargetProbs[2*2+1] -= 5e-10
	if _, err := TableFromData(near); err != nil {
		t.Errorf("rows 5e-10 apart: %v", err)
	}
	far := logOf(t, 4, 2, pi, true, []sars{{0, 0, 1, 1}, {1, 1, 0, 0}}, []sars{{1, 0, 0, 2}})
	far.TargetProbs[2*2] += 1e-6
	far.TargetProbs[2*2+1] -= 1e-6
	if _, err := TableFromData(far); err == nil || !strings.Contains(err.Error(), `episode "e1" step 0`) ||
		!strings.Contains(err.Error(), "function of the state") {
		t.Errorf("disagreeing rows: error %v", err)
	}
	finalBad := logOf(t, 4, 2, pi, true, []sars{{0, 0, 1, 1}, {1, 1, 0, 0}}, []sars{{1, 0, 0, 0}})
	finalBad.FinalTargetProbs[1*2] = 0.9 // e1's final state 0 disagrees
	finalBad.FinalTargetProbs[1*2+1] = 0.1
	if _, err := TableFromData(finalBad); err == nil || !strings.Contains(err.Error(), `episode "e1" final state`) {
		t.Errorf("disagreeing final row: error %v", err)
	}
	notDist := logOf(t, 4, 2, pi, true, []sars{{0, 0, 1, 1}})
	notDist.TargetProbs[1] = 0.7
	if _, err := TableFromData(notDist); err == nil || !strings.Contains(err.Error(), `episode "e0" step 0`) {
		t.Errorf("row summing to 1.2: error %v", err)
	}
	if _, err := TableFromData(handLog(t, false)); err == nil || !strings.Contains(err.Error(), "target_prob_k") {
		t.Errorf("no columns: error %v", err)
	}
}

// TestTabularTaxiSample fits the three models on sampled Taxi data and
// checks them against the model-based value of the same count model and
// the truth.
func TestTabularTaxiSample(t *testing.T) {
	m := taxi.New()
	target, behavior := taxiPolicy(t, "pi19"), taxiPolicy(t, "pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(m), behavior, target, 200, 400)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := FitCountModel(d)
	if err != nil {
		t.Fatal(err)
	}
	d0 := cm.Initial()
	for _, gamma := range []float64{1, 0.99} {
		model, err := Tabular{Finite: true}.Fit(d, gamma, Target{Policy: target})
		if err != nil {
			t.Fatal(err)
		}
		fm := model.(*TabularModel)
		v := make([]float64, d.NumStates)
		for s := range v {
			v[s] = fm.V(400, s)
		}
		z := 0.0
		for k := range 400 {
			z += math.Pow(gamma, float64(k))
		}
		// The model-based estimate: the same count model pushed forward.
		got, want := dot(d0, v)/z, mdp.Value(cm, target, d0, 400, gamma)
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("gamma %v: finite fqe %.12f, model-based %.12f", gamma, got, want)
		}
		t.Logf("gamma %v: finite fqe %.6f (truth %.6f)", gamma, got, mdp.Value(m, target, nil, 400, gamma))
	}
	model, err := Tabular{}.Fit(d, 1, Target{Policy: target})
	if err != nil {
		t.Fatal(err)
	}
	rho := model.Rho()
	t.Logf("rho %.6f (truth -0.121727), %d states restarted", rho, model.(*TabularModel).Restarted)
	if math.Abs(rho-(-0.121727)) > 0.03 {
		t.Errorf("rho = %v, far from the truth -0.1217", rho)
	}
}
