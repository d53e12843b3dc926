package gridwalk_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/gridwalk"
	"github.com/ihope-ope/ihope/sim/rollout"
)

func newGrid(t testing.TB) *gridwalk.GridWalk {
	t.Helper()
	g, err := gridwalk.New(gridwalk.DefaultLength)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestTable(t *testing.T) {
	g := newGrid(t)
	if err := mdp.Check(g); err != nil {
		t.Fatal(err)
	}
	if g.NumStates() != 100 || g.NumActions() != 4 {
		t.Fatalf("%d states, %d actions", g.NumStates(), g.NumActions())
	}
	for s, p := range g.Initial() {
		if p != 0.01 {
			t.Fatalf("Initial()[%d] = %v, want 0.01", s, p)
		}
	}
	cases := []struct {
		x, y, a, nx, ny int
	}{
		{0, 0, gridwalk.XPlus, 1, 0},
		{0, 0, gridwalk.XMinus, 0, 0}, // into the wall: stays
		{0, 0, gridwalk.YMinus, 0, 0},
		{3, 4, gridwalk.YPlus, 3, 5},
		{9, 9, gridwalk.XPlus, 9, 9},
		{9, 9, gridwalk.YMinus, 9, 8},
		{5, 9, gridwalk.YPlus, 5, 9},
	}
	for i, c := range cases {
		out := g.Outcomes(g.Encode(c.x, c.y), c.a)
		d := (9 - c.nx) + (9 - c.ny)
		want := mdp.Outcome{Next: g.Encode(c.nx, c.ny), Prob: 1, Reward: math.Exp(-2 * float64(d) / 10)}
		if len(out) != 1 || out[0] != want {
			t.Errorf("case %d: (%d, %d) action %d: %+v, want %+v", i, c.x, c.y, c.a, out, want)
		}
	}
	if s := g.Encode(3, 7); s != 37 {
		t.Errorf("Encode(3, 7) = %d, want 37 (dice_rl's x * 10 + y)", s)
	}
	if x, y := g.Decode(37); x != 3 || y != 7 {
		t.Errorf("Decode(37) = (%d, %d)", x, y)
	}
	if _, err := gridwalk.New(1); err == nil {
		t.Error("New(1) accepted")
	}
}

// TestShortestPathActions pins dice_rl's tie-breaking (see
// shortestPathActions) and checks that every greedy action is on a
// shortest path.
func TestShortestPathActions(t *testing.T) {
	g := newGrid(t)
	for s := 0; s < g.NumStates(); s++ {
		x, y := g.Decode(s)
		want := gridwalk.YPlus
		if y == 9 {
			want = gridwalk.XPlus
		}
		if a := g.Greedy(s); a != want {
			t.Errorf("(%d, %d): greedy action %d, want %d", x, y, a, want)
		}
		next := g.Outcomes(s, g.Greedy(s))[0].Next
		nx, ny := g.Decode(next)
		if d, nd := g.Distance(x, y), g.Distance(nx, ny); d > 0 && nd != d-1 || d == 0 && nd != 0 {
			t.Errorf("(%d, %d): greedy step to distance %d from %d", x, y, nd, d)
		}
	}
	pi := g.Target() // epsilon 0.1
	for s := 0; s < g.NumStates(); s++ {
		for a := 0; a < 4; a++ {
			want := 0.025
			if a == g.Greedy(s) {
				want = 0.925
			}
			if math.Abs(pi.Prob(s, a)-want) > 1e-15 {
				t.Fatalf("target(%d | %d) = %v, want %v", a, s, pi.Prob(s, a), want)
			}
		}
	}
	if e := gridwalk.Epsilon(gridwalk.BehaviorAlpha); math.Abs(e-0.7) > 1e-15 {
		t.Errorf("behavior epsilon %v, want 0.7", e)
	}
}

// cells returns the number of cells at Manhattan distance d from the
// corner of the 10 x 10 grid: d+1 up to the anti-diagonal, 19-d beyond.
func cells(d int) int { return min(d+1, 19-d) }

// TestHandValues checks two values computed by hand.
//
// The uniform policy (epsilon = 1) moves to each neighbour with
// probability 1/4 and stays put with 1/4 per wall, a symmetric transition
// matrix: the uniform start distribution is stationary. The expected
// reward of every step is then the mean over cells of exp(-0.2 d),
//
//	(1/100) sum_{d=0}^{18} cells(d) exp(-0.2 d) = 0.227534...,
//
// whatever the horizon and the discount, and it is also the long-run value.
//
// The shortest-path policy (epsilon = 0) walks from a cell at distance d
// straight to the goal and stays there: its rewards are exp(-0.2 (d-1)),
// ..., exp(-0.2), 1, then 1 forever, so its 100-step value with
// gamma = 0.99 is the mean over cells of sum_t 0.99^t r_t, normalised.
func TestHandValues(t *testing.T) {
	g := newGrid(t)
	uniform := 0.0
	for d := 0; d <= 18; d++ {
		uniform += float64(cells(d)) * math.Exp(-0.2*float64(d)) / 100
	}
	const T, gamma = 100, 0.99
	greedy, z := 0.0, 0.0
	for d := 0; d <= 18; d++ {
		ret, disc := 0.0, 1.0
		for step := range T {
			r := 1.0
			if step < d {
				r = math.Exp(-0.2 * float64(d-1-step))
			}
			ret += disc * r
			disc *= gamma
		}
		greedy += float64(cells(d)) / 100 * ret
	}
	for disc, step := 1.0, 0; step < T; step++ {
		z += disc
		disc *= gamma
	}
	greedy /= z

	walk, straight := g.EpsilonGreedy(1), g.EpsilonGreedy(0)
	cases := []struct {
		name string
		pi   policy.Discrete
		got  func(policy.Discrete) (float64, error)
		want float64
	}{
		{"uniform, 100 steps, gamma 0.99", walk, value(g, T, gamma), uniform},
		{"uniform, 7 steps, gamma 1", walk, value(g, 7, 1), uniform},
		{"uniform, long run, gamma 0.99", walk, longRun(g, gamma), uniform},
		{"uniform, average reward", walk, longRun(g, 1), uniform},
		{"shortest path, 100 steps, gamma 0.99", straight, value(g, T, gamma), greedy},
		{"shortest path, average reward", straight, longRun(g, 1), 1},
	}
	for i, c := range cases {
		got, err := c.got(c.pi)
		if err != nil {
			t.Fatalf("case %d (%s): %v", i, c.name, err)
		}
		if !scalar.EqualWithinAbsOrRel(got, c.want, 1e-12, 1e-12) {
			t.Errorf("case %d (%s): exact %.15g, by hand %.15g", i, c.name, got, c.want)
		}
	}
}

func value(m mdp.Finite, T int, gamma float64) func(policy.Discrete) (float64, error) {
	return func(pi policy.Discrete) (float64, error) { return mdp.Value(m, pi, nil, T, gamma), nil }
}

func longRun(m mdp.Finite, gamma float64) func(policy.Discrete) (float64, error) {
	return func(pi policy.Discrete) (float64, error) { return mdp.LongRun(m, pi, gamma) }
}

// TestTruths pins the truths of the package documentation and checks that
// they fall as the target family moves towards the behavior.
func TestTruths(t *testing.T) {
	g := newGrid(t)
	cases := []struct {
		alpha                    float64
		horizon, discounted, avg float64
	}{
		{1, 0.90921958, 0.93870063, 0.98976178},
		{0, 0.59335591, 0.65607895, 0.76535946},
	}
	for i, c := range cases {
		pi := g.Policy(c.alpha)
		h := mdp.Value(g, pi, nil, gridwalk.Horizon, gridwalk.Gamma)
		d, err := mdp.LongRun(g, pi, gridwalk.Gamma)
		if err != nil {
			t.Fatal(err)
		}
		a, err := mdp.LongRun(g, pi, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range [][2]float64{{h, c.horizon}, {d, c.discounted}, {a, c.avg}} {
			if math.Abs(v[0]-v[1]) > 5e-9 {
				t.Errorf("case %d (alpha %v): truth %.10f, pinned %.8f", i, c.alpha, v[0], v[1])
			}
		}
	}
	prev := math.Inf(1)
	for _, alpha := range gridwalk.TargetAlphas {
		v := mdp.Value(g, g.Policy(alpha), nil, gridwalk.Horizon, gridwalk.Gamma)
		if !(v < prev) {
			t.Errorf("alpha %v: value %v not below the previous %v", alpha, v, prev)
		}
		prev = v
	}
}

// TestMonteCarlo checks the three truths of the target and the behavior
// against on-policy rollouts, within 4 standard errors (standard
// deviation of the per-rollout values over the square root of their
// number):
//
//   - the 100-step normalised value (gamma = 0.99): rollouts of 100 steps,
//     exactly the quantity;
//   - the long-run discounted value (1 - gamma) E[V(s0)]: rollouts
//     truncated at 2000 steps, which drops at most 0.99^2000 < 2e-9;
//   - the average reward (gamma = 1): the mean reward of steps 200..1199
//     of each rollout, the first 200 steps left out so that the start has
//     been forgotten (both chains mix within a few dozen steps).
func TestMonteCarlo(t *testing.T) {
	g := newGrid(t)
	rng := rand.New(rand.NewPCG(10, 10))
	for _, alpha := range []float64{gridwalk.TargetAlpha, gridwalk.BehaviorAlpha} {
		pi := g.Policy(alpha)
		z := 0.0
		for disc, step := 1.0, 0; step < gridwalk.Horizon; step++ {
			z += disc
			disc *= gridwalk.Gamma
		}
		discounted, _ := mdp.LongRun(g, pi, gridwalk.Gamma)
		average, _ := mdp.LongRun(g, pi, 1)
		cases := []struct {
			name string
			want float64
			n    int
			draw func() float64
		}{
			{"100-step value", mdp.Value(g, pi, nil, gridwalk.Horizon, gridwalk.Gamma), 20000,
				func() float64 { return rollout.Return(rng, g, pi, gridwalk.Horizon, 1/z, gridwalk.Gamma) }},
			{"long-run discounted", discounted, 1000,
				func() float64 { return rollout.Return(rng, g, pi, 2000, 1-gridwalk.Gamma, gridwalk.Gamma) }},
			{"average reward", average, 1000,
				func() float64 { return tailAverage(rng, g, pi, 200, 1000) }},
		}
		for i, c := range cases {
			mean, m2 := 0.0, 0.0
			for j := range c.n {
				v := c.draw()
				d := v - mean
				mean += d / float64(j+1)
				m2 += d * (v - mean)
			}
			se := math.Sqrt(m2 / float64(c.n-1) / float64(c.n))
			t.Logf("alpha %v, %s: exact %.6f, Monte Carlo %.6f ± %.6f", alpha, c.name, c.want, mean, se)
			if math.Abs(mean-c.want) > 4*se {
				t.Errorf("case %d (alpha %v, %s): exact %.6f, Monte Carlo %.6f ± %.6f", i, alpha, c.name, c.want, mean, se)
			}
		}
	}
}

// tailAverage rolls pi out for burn+n steps and returns the mean reward of
// the last n.
func tailAverage(rng *rand.Rand, e sim.Discrete, pi policy.Discrete, burn, n int) float64 {
	s := e.Reset(rng)
	sum := 0.0
	for step := range burn + n {
		var r float64
		s, r = e.Step(rng, s, pi.Sample(rng, s))
		if step >= burn {
			sum += r
		}
	}
	return sum / float64(n)
}
