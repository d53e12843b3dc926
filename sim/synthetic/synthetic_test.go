package synthetic

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// TestNumpyStream pins draws of numpy's RandomState(seed).normal(size=n),
// printed by numpy 1.24: the first and the 55th of seed 12345 (the last
// coefficient the transition function draws), and the first of seeds 0
// and 2^32 - 1.
func TestNumpyStream(t *testing.T) {
	cases := []struct {
		seed uint32
		i    int
		want float64
	}{
		{12345, 0, -0.20470765948471295},
		{12345, 1, 0.47894333805754824},
		{12345, 54, 1.327194613785634},
		{0, 0, 1.764052345967664},
		{0, 1, 0.4001572083672233},
		{0, 2, 0.9787379841057392},
		{4294967295, 0, 0.6484086742306527},
		{4294967295, 1, 0.6693235306338161},
	}
	for k, c := range cases {
		if got := newMT19937(c.seed).normals(c.i + 1)[c.i]; got != c.want {
			t.Errorf("case %d: seed %d draw %d = %.17g, numpy %.17g", k, c.seed, c.i, got, c.want)
		}
	}
}

// TestTrajectory checks five steps from s = (1, 2, 3, 4, 5)/|.| with
// actions 3, 7, 0, 9, 5 against SCOPE-RL's formulas evaluated by numpy
// (function.py's step and mean_reward_function with coefficients from
// RandomState(12345), as the classes draw them).
func TestTrajectory(t *testing.T) {
	e := New(Seed)
	s := []float64{1, 2, 3, 4, 5}
	for i := range s {
		s[i] /= math.Sqrt(55)
	}
	want := []struct {
		a      int
		reward float64
		next   []float64
	}{
		{3, 0.6563690215185728, []float64{0.04076913071763889, 0.8686982865973939, -0.1827070310168161, 0.27553094058476446, -0.36660879209420977}},
		{7, 0.24986739329747434, []float64{-0.05790735467662454, 0.4001455333332109, -0.7790121221002126, 0.11782560816396272, -0.46452936409827894}},
		{0, -0.2066158579018179, []float64{-0.13398302250308539, 0.24779739801129672, -0.320916213365119, 0.42748208066212373, -0.7968167003344895}},
		{9, -0.14740767738006064, []float64{-0.05845215744526797, -0.34823579193338466, -0.8396113794761755, -0.41168841340156725, -0.02967423514660093}},
		{5, 0.5471281163001709, []float64{-0.15286005216733436, -0.5769404543395011, 0.7445824065279227, -0.2968778336471518, 0.03512987867885501}},
	}
	for k, w := range want {
		before := append([]float64(nil), s...)
		next, r := e.Step(s, w.a)
		for i := range s {
			if s[i] != before[i] {
				t.Fatalf("step %d modified its state", k)
			}
		}
		if math.Abs(r-w.reward) > 1e-14 {
			t.Errorf("step %d: reward %.17g, numpy %.17g", k, r, w.reward)
		}
		for i := range next {
			if math.Abs(next[i]-w.next[i]) > 1e-14 {
				t.Errorf("step %d: next[%d] = %.17g, numpy %.17g", k, i, next[i], w.next[i])
			}
		}
		s = next
	}
	if c := e.Context(2); len(c) != ActionDim || c[0] != 0.092907876743717671 {
		t.Errorf("Context(2) = %v, want numpy's draws 6..8 of seed 12345", c)
	}
}

// TestPolicy checks the greedy action against a brute-force search and
// the epsilon-greedy probabilities.
func TestPolicy(t *testing.T) {
	e := New(Seed)
	rng := rand.New(rand.NewPCG(5, 5))
	p := e.EpsilonGreedy(BehaviorEpsilon)
	for range 100 {
		s := e.Reset(rng)
		if n := math.Hypot(math.Hypot(s[0], s[1]), math.Hypot(math.Hypot(s[2], s[3]), s[4])); math.Abs(n-1) > 1e-12 {
			t.Fatalf("start state of norm %v", n)
		}
		g := e.Greedy(s)
		sum, expected := 0.0, 0.0
		for a := range NumActions {
			if e.Reward(s, a) > e.Reward(s, g) {
				t.Fatalf("action %d pays more than the greedy %d", a, g)
			}
			want := 0.03
			if a == g {
				want = 0.73
			}
			if math.Abs(p.Prob(s, a)-want) > 1e-15 {
				t.Fatalf("pi(%d | s) = %v, want %v", a, p.Prob(s, a), want)
			}
			sum += p.Prob(s, a)
			expected += p.Prob(s, a) * e.Reward(s, a)
		}
		if math.Abs(sum-1) > 1e-12 || math.Abs(expected-p.ExpectedReward(s)) > 1e-12 {
			t.Fatalf("probabilities sum to %v; expected reward %v, want %v", sum, p.ExpectedReward(s), expected)
		}
	}
}

// TestHandValue: the start state is uniform on the sphere, so E[s0] = 0
// and the first reward of the uniform policy has expectation
// (1/10) sum_a theta_a . c_a / 3, every term linear in s0 averaging out.
func TestHandValue(t *testing.T) {
	e := New(Seed)
	want := 0.0
	for a := range NumActions {
		for j := range ActionDim {
			want += e.thetaA[j] * e.context[a][j] / ActionDim / NumActions
		}
	}
	rng := rand.New(rand.NewPCG(6, 6))
	for _, value := range []func(*rand.Rand, Policy, int, int, float64) (float64, float64){e.Evaluate, e.PreciseValue} {
		mean, se := value(rng, e.EpsilonGreedy(1), 100000, 1, 1)
		t.Logf("horizon 1, uniform policy: by hand %.6f, Monte Carlo %.6f ± %.6f", want, mean, se)
		if math.Abs(mean-want) > 4*se {
			t.Errorf("horizon 1, uniform policy: by hand %.6f, Monte Carlo %.6f ± %.6f", want, mean, se)
		}
	}
}

// TestMonteCarlo checks the pinned truths (PreciseValue, 4,000,000
// episodes) against plain rollouts (Evaluate, 20,000 episodes), within 4
// standard errors of the difference. With IHOPE_LONG=1 it also recomputes
// the truths as they were made (about 100 s).
func TestMonteCarlo(t *testing.T) {
	e := New(Seed)
	eps := append(append([]float64(nil), TargetEpsilons...), BehaviorEpsilon)
	if len(Truths) != len(eps) {
		t.Fatalf("%d truths for %d policies", len(Truths), len(eps))
	}
	for i, tr := range Truths {
		if tr.Epsilon != eps[i] {
			t.Fatalf("truth %d for epsilon %v, want %v", i, tr.Epsilon, eps[i])
		}
		rng := rand.New(rand.NewPCG(77, uint64(i)))
		mean, se := e.Evaluate(rng, e.EpsilonGreedy(tr.Epsilon), 20000, Horizon, Gamma)
		tol := 4 * math.Hypot(se, tr.SE)
		t.Logf("epsilon %.1f: truth %.6f ± %.6f, rollouts %.6f ± %.6f", tr.Epsilon, tr.Return, tr.SE, mean, se)
		if math.Abs(mean-tr.Return) > tol {
			t.Errorf("epsilon %v: truth %.6f, rollouts %.6f ± %.6f", tr.Epsilon, tr.Return, mean, se)
		}
		if os.Getenv("IHOPE_LONG") == "" {
			continue
		}
		// The truths were made with these generators.
		m, s := e.PreciseValue(rand.New(rand.NewPCG(2023, uint64(i))), e.EpsilonGreedy(tr.Epsilon), 4000000, Horizon, Gamma)
		if math.Abs(m-tr.Return) > 5e-7 || math.Abs(s-tr.SE) > 5e-7 {
			t.Errorf("epsilon %v: recomputed %.6f ± %.6f, pinned %.6f ± %.6f", tr.Epsilon, m, s, tr.Return, tr.SE)
		}
	}
}
