package cobs_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/cobs"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// world is one of the package's worlds with its evaluation setting.
type world struct {
	name string
	m    interface {
		mdp.Finite
		sim.Discrete
	}
	target, behavior *policy.Tabular
	T                int
	gamma            float64
	truth            float64 // mdp.Return of the target, pinned
}

func worlds() []world {
	g, mc, mf, mw := cobs.NewDefaultGraph(), cobs.NewToyMC(), cobs.NewModelFail(), cobs.NewModelWin()
	return []world{
		{"graph", g, g.Target(), g.Behavior(), cobs.GraphLength, cobs.GraphGamma, -4.1430341911},
		{"toymc", mc, mc.Target(), mc.Behavior(), cobs.ToyMCHorizon, cobs.ToyMCGamma, -91.8941304543},
		{"modelfail", mf, mf.Target(), mf.Behavior(), cobs.ModelFailHorizon, cobs.ModelGamma, -1.2},
		{"modelwin", mw, mw.Target(), mw.Behavior(), cobs.ModelWinHorizon, cobs.ModelGamma, 1.2},
	}
}

// discountSum returns sum_{t<T} gamma^t by the loop a reader would write.
func discountSum(T int, gamma float64) float64 {
	z, g := 0.0, 1.0
	for range T {
		z += g
		g *= gamma
	}
	return z
}

// TestTables checks every world's table, its absorbing states and its
// policies' rows.
func TestTables(t *testing.T) {
	for i, w := range worlds() {
		if err := mdp.Check(w.m); err != nil {
			t.Errorf("case %d (%s): %v", i, w.name, err)
		}
		abs, episodic := w.m.(sim.Episodic)
		if episodic {
			if err := sim.CheckAbsorbing(w.m, abs.Absorbing); err != nil {
				t.Errorf("case %d (%s): %v", i, w.name, err)
			}
			n := 0
			for s := 0; s < w.m.NumStates(); s++ {
				if abs.Absorbing(s) {
					n++
					// Every policy agrees there: ratio 1 on padded steps.
					if w.target.Prob(s, 0) != 1 || w.behavior.Prob(s, 0) != 1 {
						t.Errorf("case %d (%s): absorbing state %d rows %v, %v, want (1, 0)", i, w.name, s, w.target.Row(s), w.behavior.Row(s))
					}
				}
			}
			if n != 1 {
				t.Errorf("case %d (%s): %d absorbing states, want 1", i, w.name, n)
			}
		}
		if w.name == "modelwin" && episodic {
			t.Errorf("modelwin has no terminal state but is Episodic")
		}
	}
	levels := []float64{0.001, 0.2, 0.4, 0.6, 0.8}
	for k, want := range levels {
		if got := cobs.Level(k); math.Abs(got-want) > 1e-15 {
			t.Errorf("Level(%d) = %v, want %v", k, got, want)
		}
	}
	mc := cobs.NewToyMC()
	if p := mc.Target().Row(cobs.ToyMCLeft); p[cobs.Right] != 0.2 || p[cobs.Left] != 0.8 {
		t.Errorf("ToyMC target row %v, want Right 0.2", p)
	}
	mw := cobs.NewModelWin()
	if p := mw.Behavior(); p.Prob(0, cobs.A0) != 0.8 || p.Prob(1, cobs.A0) != 0.5 || p.Prob(2, cobs.A1) != 0.5 {
		t.Errorf("ModelWin behavior rows %v %v %v", p.Row(0), p.Row(1), p.Row(2))
	}
}

// TestGraphTransitions checks single transitions of the Graph against
// COBS's step(): from layer j, A0 reaches the odd state of layer j+1 with
// probability 1 - slip; the last layer pays +1 (odd) or -1 (even) into the
// absorbing state 2L-1 = 31.
func TestGraphTransitions(t *testing.T) {
	g := cobs.NewDefaultGraph()
	sparse, err := cobs.NewGraph(cobs.GraphConfig{Length: 16, Slip: 0.25, Sparse: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		m              *cobs.Graph
		s, a, next     int
		prob, reward   float64
		numberOutcomes int
	}{
		{g, 0, cobs.A0, 1, 0.75, 1, 2},
		{g, 0, cobs.A0, 2, 0.25, -1, 2},
		{g, 0, cobs.A1, 2, 0.75, -1, 2},
		{g, 1, cobs.A0, 3, 0.75, 1, 2},  // odd: s+2 with 1-slip
		{g, 1, cobs.A1, 4, 0.75, -1, 2}, // odd: s+3 with 1-slip
		{g, 2, cobs.A0, 3, 0.75, 1, 2},  // even: s+1 with 1-slip
		{g, 2, cobs.A1, 3, 0.25, 1, 2},
		{g, 28, cobs.A1, 30, 0.75, -1, 2},
		{g, 29, cobs.A1, 31, 1, 1, 1},  // 2L-3: +1, done
		{g, 30, cobs.A0, 31, 1, -1, 1}, // 2L-2: -1, done
		{g, 31, cobs.A1, 31, 1, 0, 1},
		{sparse, 0, cobs.A0, 1, 0.75, 0, 2},
		{sparse, 29, cobs.A0, 31, 1, 1, 1},
		{sparse, 30, cobs.A0, 31, 1, -1, 1},
		{cobs.NewModelFail(), 0, cobs.A1, 2, 1, -1, 1},
		{cobs.NewModelFail(), 1, cobs.A1, 3, 1, 1, 1},
	}
	for i, c := range cases {
		out := c.m.Outcomes(c.s, c.a)
		if len(out) != c.numberOutcomes {
			t.Errorf("case %d: %d outcomes, want %d", i, len(out), c.numberOutcomes)
		}
		found := false
		for _, o := range out {
			if o.Next == c.next {
				found = true
				if o.Prob != c.prob || o.Reward != c.reward {
					t.Errorf("case %d: (%d, %d) -> %d with P %v, reward %v; want %v, %v", i, c.s, c.a, c.next, o.Prob, o.Reward, c.prob, c.reward)
				}
			}
		}
		if !found {
			t.Errorf("case %d: (%d, %d) never reaches %d", i, c.s, c.a, c.next)
		}
	}
	for i, c := range []cobs.GraphConfig{{Length: 1}, {Length: 4, Slip: -0.1}, {Length: 4, Slip: 1.5}, {Length: 4, Observations: 1}, {Length: 4, Observations: 8}} {
		if _, err := cobs.NewGraph(c); err == nil {
			t.Errorf("case %d: NewGraph(%+v) accepted", i, c)
		}
	}
}

// TestObservations checks COBS's state_to_pomdp_state: numpy's array_split
// of the states 1..2L-2 into k-1 groups, the start state seen as 0 and the
// absorbing state as k-1.
func TestObservations(t *testing.T) {
	cases := []struct {
		cfg  cobs.GraphConfig
		want []int
	}{
		// ModelFail: states 0, 1, 2 aliased, the absorbing state apart.
		{cobs.GraphConfig{Length: 2, Observations: 2}, []int{0, 0, 0, 1}},
		// L = 4, k = 3: states 1..6 in 2 groups of 3.
		{cobs.GraphConfig{Length: 4, Observations: 3}, []int{0, 0, 0, 0, 1, 1, 1, 2}},
		// L = 4, k = 5: 6 states in 4 groups: sizes 2, 2, 1, 1.
		{cobs.GraphConfig{Length: 4, Observations: 5}, []int{0, 0, 0, 1, 1, 2, 3, 4}},
		// Fully observed.
		{cobs.GraphConfig{Length: 3}, []int{0, 1, 2, 3, 4, 5}},
	}
	for i, c := range cases {
		g, err := cobs.NewGraph(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for s, want := range c.want {
			if got := g.Observe(s); got != want {
				t.Errorf("case %d: Observe(%d) = %d, want %d", i, s, got, want)
			}
		}
		if n := g.NumObservations(); n != c.want[len(c.want)-1]+1 {
			t.Errorf("case %d: %d observations, want %d", i, n, c.want[len(c.want)-1]+1)
		}
	}
	// COBS's Graph-POMDP configuration (cfgs/toy_graph_pomdp_cfg.json):
	// L = 16, 6 observations: states 1..30 in 5 groups of 6.
	g, err := cobs.NewGraph(cobs.GraphConfig{Length: 16, Slip: 0.25, Sparse: true, Observations: 6})
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 30; s++ {
		if got, want := g.Observe(s), (s-1)/6; got != want {
			t.Errorf("Graph-POMDP: Observe(%d) = %d, want %d", s, got, want)
		}
	}
}

// TestHandValues checks one value per world computed by hand.
//
// Graph: whatever the state, A0 reaches an odd (+1) state with probability
// 1 - slip and A1 with probability slip, so a policy with P(A0) = p enters
// an odd state with probability q = (1 - slip) p + slip (1 - p) and every
// one of the L steps (the last repeats the sign of layer L-1) has expected
// reward 2q - 1 = (1 - 2 slip)(2p - 1): p - 0.5 at slip 0.25. So
//
//	G = (p - 0.5) sum_{t<16} 0.98^t:  -0.3 * 13.81 = -4.143 for the target,
//	                                  +0.5 * 13.81 =  6.905 for p = 1,
//
// and with sparse rewards only the last step pays: (p - 0.5) 0.98^15.
//
// ToyMC: always Right ends after 11 steps of -1: G = -sum_{t<11} 0.99^t;
// always Left never ends: -sum_{t<250} 0.99^t = -91.894.
//
// ModelFail: deterministic, two steps of the same sign: G = 2 (2p - 1),
// -1.2 for the target (p = 0.2).
//
// ModelWin: the 10 decisions in state 0 (t = 0, 2, ..., 18) each pay
// 2 (0.4 p + 0.6 (1 - p)) - 1 = 0.2 - 0.4 p in expectation, the other
// steps 0: G = 10 (0.2 - 0.4 p) = 1.2 for the target.
func TestHandValues(t *testing.T) {
	g := cobs.NewDefaultGraph()
	sparse, _ := cobs.NewGraph(cobs.GraphConfig{Length: 16, Slip: 0.25, Sparse: true})
	mc, mf, mw := cobs.NewToyMC(), cobs.NewModelFail(), cobs.NewModelWin()
	z16 := discountSum(16, 0.98)
	cases := []struct {
		name  string
		m     mdp.Finite
		pi    policy.Discrete
		T     int
		gamma float64
		want  float64
	}{
		{"graph target", g, g.Target(), 16, 0.98, -0.3 * z16},
		{"graph behavior", g, g.Behavior(), 16, 0.98, 0.3 * z16},
		{"graph deterministic A0", g, g.Policy(1), 16, 0.98, 0.5 * z16},
		{"graph beyond the end", g, g.Policy(1), 100, 0.98, 0.5 * z16},
		{"sparse graph target", sparse, sparse.Target(), 16, 0.98, -0.3 * math.Pow(0.98, 15)},
		{"toymc always right", mc, mc.Policy(1), 250, 0.99, -discountSum(11, 0.99)},
		{"toymc always left", mc, mc.Policy(0), 250, 0.99, -discountSum(250, 0.99)},
		{"modelfail target", mf, mf.Target(), 2, 1, 2 * (2*0.2 - 1)},
		{"modelwin target", mw, mw.Target(), 20, 1, 10 * (0.2 - 0.4*0.2)},
		{"modelwin behavior", mw, mw.Behavior(), 20, 1, 10 * (0.2 - 0.4*0.8)},
	}
	for i, c := range cases {
		got := mdp.Return(c.m, c.pi, nil, c.T, c.gamma)
		if !scalar.EqualWithinAbsOrRel(got, c.want, 1e-12, 1e-12) {
			t.Errorf("case %d (%s): exact %.15g, by hand %.15g", i, c.name, got, c.want)
		}
	}
}

// TestTruths pins the exact truths docs/benchmark.md lists, and checks that the
// long-run value of the Graph (discounted, gamma = 0.98) is its 16-step
// return: every episode is absorbed after 16 steps, so mdp.LongRun,
// which knows nothing of episodes, gives the same truth through the
// absorbing state.
func TestTruths(t *testing.T) {
	for i, w := range worlds() {
		got := mdp.Return(w.m, w.target, nil, w.T, w.gamma)
		if math.Abs(got-w.truth) > 5e-11 {
			t.Errorf("case %d (%s): truth %.10f, pinned %.10f", i, w.name, got, w.truth)
		}
	}
	g := cobs.NewDefaultGraph()
	lr, err := mdp.LongRun(g, g.Target(), cobs.GraphGamma)
	if err != nil {
		t.Fatal(err)
	}
	ret := mdp.Return(g, g.Target(), nil, cobs.GraphLength, cobs.GraphGamma)
	if got := lr / (1 - cobs.GraphGamma); math.Abs(got-ret) > 1e-12 {
		t.Errorf("graph: long-run value / (1 - gamma) = %.15g, 16-step return %.15g", got, ret)
	}
}

// TestMonteCarlo checks each world's exact return of the target and the
// behavior against the mean of on-policy rollouts, within 4 standard
// errors.
//
// ToyMC's target (Right with probability 0.2, from x = 0) reaches +11
// within 250 steps with probability 2.4e-7, so every rollout returns
// -sum_{t<250} 0.99^t and the sample's standard error is 0, while the
// exact value differs from that return by 1.8e-5. The standard error is
// therefore floored at the resolution of N rollouts, (largest - smallest
// possible return) / N, what one rollout of the other kind would move the
// mean by.
func TestMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2019))
	for i, w := range worlds() {
		n := 100000
		if w.T > 100 {
			n = 20000 // ToyMC: 250 steps a rollout
		}
		for _, pi := range []struct {
			name string
			p    *policy.Tabular
		}{{"target", w.target}, {"behavior", w.behavior}} {
			want := mdp.Return(w.m, pi.p, nil, w.T, w.gamma)
			mean, m2 := 0.0, 0.0
			for j := range n {
				v := rollout.Return(rng, w.m, pi.p, w.T, 1, w.gamma)
				d := v - mean
				mean += d / float64(j+1)
				m2 += d * (v - mean)
			}
			se := math.Sqrt(m2 / float64(n-1) / float64(n))
			if w.name == "toymc" {
				se = math.Max(se, discountSum(w.T, w.gamma)/float64(n))
			}
			t.Logf("%s %s: exact %.6f, Monte Carlo %.6f ± %.6f (%d rollouts)", w.name, pi.name, want, mean, se, n)
			if math.Abs(mean-want) > 4*se {
				t.Errorf("case %d (%s %s): exact %.6f, Monte Carlo %.6f ± %.6f", i, w.name, pi.name, want, mean, se)
			}
		}
	}
}
