package value

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// qAt returns the model's q(s, a) at a state and a real action, for
// stationary models, or q^h for finite-horizon ones.
func (m *LinearModel) qAt(obs, act []float64, h int) float64 {
	f := m.f
	z := make([]float64, f.stateDim+f.actionDim)
	x := make([]float64, f.P)
	f.state.apply(z, obs)
	f.action.apply(z[f.stateDim:], act)
	f.joint(x, z, make([]float64, f.nb), make([]float64, f.amono.len()))
	if m.finite {
		return dot(x, m.Thetas[h-1])
	}
	return dot(x, m.Theta)
}

// hermite returns the nodes and weights of n-point Gauss-Hermite
// quadrature for expectations under N(0, 1): E g(Z) = sum_i w_i g(x_i),
// exact for polynomials of degree < 2n.
func hermite(n int) (x, w []float64) {
	x, w = make([]float64, n), make([]float64, n)
	quad.Hermite{}.FixedLocations(x, w, math.Inf(-1), math.Inf(1))
	for i := range x {
		x[i] *= math.Sqrt2
		w[i] /= math.Sqrt(math.Pi)
	}
	return x, w
}

// startValue returns E_{s~d0, u~pi(s)}[q(s, u)] = E_{d0}[v(s)] of a model
// of the 1-d linear-Gaussian problem, by Gauss-Hermite quadrature over the
// reset distribution and the target's Gaussian action noise: exact for
// the model's quadratic q, so the only error left is the fit's.
func startValue(m *LinearModel, p *lineargauss.Problem, h int) float64 {
	init := p.System.Init()
	mu0, sd0 := init.Mean()[0], math.Sqrt(init.Cov().At(0, 0))
	sdu := math.Sqrt(p.Target.Cov().At(0, 0))
	x, w := hermite(12)
	v := 0.0
	for i := range x {
		s := []float64{mu0 + sd0*x[i]}
		mu := p.Target.MeanAction(s)[0]
		for k := range x {
			v += w[i] * w[k] * m.qAt(s, []float64{mu + sdu*x[k]}, h)
		}
	}
	return v
}

// TestLinearLinearGauss fits LSTD-Q on logs of the 1-d linear-Gaussian
// problem (behavior pi0, target pi), whose q is quadratic in (s, u): the
// degree-2 features represent it exactly, so the error of
// (1 - gamma) E_{d0}[v(s0)] (gamma < 1) or of rho (gamma = 1) is sampling
// error alone and falls like 1/sqrt(n). Over R = 40 seeds per n, the test
// asserts that the root mean square error falls by at least 2 from
// n = 20 to n = 320 episodes (1/sqrt(16) = 4 for pure sampling error),
// that the mean error at n = 320 is within 3 standard errors of 0 (no
// bias beyond the sampling error), and that every seed at n = 320 lies
// within 4 standard deviations of the seeds' spread at n = 320, an
// absolute tolerance set from the measured spread (tol; the measured
// values are logged with -v). R = 40 with IHOPE_STAT=1; the everyday run
// takes the first 12 seeds and asks for a fall by 1.5 (those seeds fall by
// 1.95 and 2.1: their n = 320 errors are the larger ones), the other
// bounds unchanged. A bias that does not shrink with n falls by about 1.
func TestLinearLinearGauss(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 72 models")
	}
	R, fall := 12, 1.5
	if testsets.Stat() {
		R, fall = 40, 2
	}
	p := lineargauss.Problem1D()
	for _, c := range []struct {
		gamma float64
		tol   float64 // 4 x the spread of the errors at n = 320, measured
	}{
		{0.9, 0.013}, // sd 0.0033 over 40 seeds
		{1, 0.016},   // sd 0.0040
	} {
		last := linearGaussConvergence(t, c.gamma, R, fall, func(_ *dataset.Dataset, r int) Target {
			return Target{Continuous: p.Target, Seed: uint64(r)}
		})
		for r, e := range last {
			if math.Abs(e) > c.tol {
				t.Errorf("gamma %v n = 320 seed %d: error %.5f beyond %v", c.gamma, r, e, c.tol)
			}
		}
	}
}

// linearGaussConvergence fits LSTD-Q on R seeds of logs of the 1-d
// linear-Gaussian problem at n = 20, 80 and 320 episodes of T = 100 steps,
// the target's actions given by target (the logs, the seed), and checks
// that the root mean square error of (1 - gamma) E_{d0}[v(s0)] (gamma < 1)
// or rho (gamma = 1) falls by at least fall from n = 20 to 320 and that
// the mean error at n = 320 lies within 3 standard errors of 0. It returns
// the errors at n = 320.
func linearGaussConvergence(t *testing.T, gamma float64, R int, fall float64, target func(d *dataset.Dataset, r int) Target) []float64 {
	t.Helper()
	p := lineargauss.Problem1D()
	const T = 100
	var truth float64
	var err error
	if gamma < 1 {
		truth, err = p.System.Value(p.Target, gamma, 2000)
	} else {
		truth, err = p.System.AverageReward(p.Target)
	}
	if err != nil {
		t.Fatal(err)
	}
	rmse := map[int]float64{}
	var last []float64
	for _, n := range []int{20, 80, 320} {
		errs := make([]float64, R)
		for r := range R {
			rng := rand.New(rand.NewPCG(uint64(r), uint64(n)))
			d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, n, T)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Linear{}.FitLinear(d, gamma, target(d, r))
			if err != nil {
				t.Fatal(err)
			}
			est := m.Rho()
			if gamma < 1 {
				est = (1 - gamma) * startValue(m, p, 0)
			}
			errs[r] = est - truth
		}
		s := 0.0
		for _, e := range errs {
			s += e * e
		}
		rmse[n] = math.Sqrt(s / float64(R))
		mean, sd := stat.MeanStdDev(errs, nil)
		t.Logf("gamma %v n %3d: truth %.5f, mean error %+.5f, sd %.5f, rmse %.5f", gamma, n, truth, mean, sd, rmse[n])
		last = errs
	}
	if !(rmse[320] < rmse[20]/fall) {
		t.Errorf("gamma %v: rmse %.5f at n = 20, %.5f at n = 320: want a fall by at least %g", gamma, rmse[20], rmse[320], fall)
	}
	if mean, sd := stat.MeanStdDev(last, nil); math.Abs(mean) > 3*sd/math.Sqrt(float64(R)) {
		t.Errorf("gamma %v n = 320: mean error %.5f, more than 3 standard errors (%.5f) from 0", gamma, mean, sd/math.Sqrt(float64(R)))
	}
	return last
}

// TestLinearFiniteLinearGauss checks the finite-horizon form against the
// exact T-step value of the 1-d linear-Gaussian problem
// (lineargauss.System.Value, normalised by sum_{t<T} gamma^t): q^h is
// quadratic for every h, so the degree-2 features represent every q^h
// exactly and the error is sampling error.
func TestLinearFiniteLinearGauss(t *testing.T) {
	p := lineargauss.Problem1D()
	const n, T = 400, 20
	for _, gamma := range []float64{0.9, 1} {
		rng := rand.New(rand.NewPCG(3, 1))
		d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, n, T)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Linear{Finite: true}.FitLinear(d, gamma, Target{Continuous: p.Target, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(m.Rho()) || len(m.Thetas) != T {
			t.Fatalf("gamma %v: rho %v, %d horizons, want NaN and %d", gamma, m.Rho(), len(m.Thetas), T)
		}
		for _, h := range []int{1, 5, T} {
			want, err := p.System.Value(p.Target, gamma, h)
			if err != nil {
				t.Fatal(err)
			}
			nh := 0.0
			for k := range h {
				nh += math.Pow(gamma, float64(k))
			}
			got := startValue(m, p, h) / nh
			t.Logf("gamma %v h %2d: %.5f, exact %.5f", gamma, h, got, want)
			// h = 1 regresses the noiseless quadratic reward: exact
			// but for the ridge. Beyond, with 8000 transitions, the
			// errors' standard deviation over 30 seeds was 0.004 (h = 5)
			// to 0.0064 (h = 20, gamma = 1); 0.025 is 4 of the largest.
			tol := 0.025
			if h == 1 {
				tol = 1e-6
			}
			if math.Abs(got-want) > tol {
				t.Errorf("gamma %v h %d: value %.5f, exact %.5f", gamma, h, got, want)
			}
		}
	}
}

// discreteLog builds logs of a world with real states of dimension dim
// and k discrete actions: n episodes of T steps, states drawn at random
// (each step's next state is the next step's state; the final state is
// drawn too), actions uniform, and the target's action distribution a
// random row per state (TargetProbs, FinalTargetProbs). Rewards are 0.
func discreteLog(rng *rand.Rand, dim, k, n, T int) *dataset.Dataset {
	var b dataset.Builder
	b.Init(0, k, dim, 0)
	state := func() []float64 {
		s := make([]float64, dim)
		for i := range s {
			s[i] = 2*rng.Float64() - 1 + float64(i)
		}
		return s
	}
	row := func() []float64 {
		p := make([]float64, k)
		sum := 0.0
		for a := range p {
			p[a] = rng.Float64()
			sum += p[a]
		}
		for a := range p {
			p[a] /= sum
		}
		return p
	}
	var probs, final []float64
	for e := range n {
		s := state()
		for range T {
			next := state()
			b.Add(dataset.Step{State: -1, Obs: s, Action: rng.IntN(k), HasNext: true, NextState: -1, NextObs: next,
				LogBehavior: -math.Log(float64(k)), LogTarget: -math.Log(float64(k))})
			probs = append(probs, row()...)
			s = next
		}
		final = append(final, row()...)
		b.EndEpisode(fmt.Sprint(e))
	}
	d, err := b.Dataset()
	if err != nil {
		panic(err)
	}
	d.TargetProbs, d.FinalTargetProbs = probs, final
	d.HasFinalTarget = make([]bool, n)
	for e := range d.HasFinalTarget {
		d.HasFinalTarget[e] = true
	}
	return d
}

// TestLinearExactDiscrete builds noiseless logs whose q is exactly linear
// in the features, q(s, a) = phi(s, a)^T theta*, with rewards
// r_j = q(s_j, a_j) - gamma E_{a'~pi(s'_j)} q(s'_j, a') (and, for
// gamma = 1, r_j = q(s_j, a_j) + rho* - E q(s'_j, pi)): every transition
// satisfies the Bellman equation exactly, so LSTD-Q without ridge must
// return theta* (and rho*) to rounding.
func TestLinearExactDiscrete(t *testing.T) {
	for _, gamma := range []float64{0.9, 1} {
		rng := rand.New(rand.NewPCG(1, 2))
		d := discreteLog(rng, 2, 3, 20, 30)
		f, err := newLinFeatures(d, featureSpec{kind: "poly", degree: 2})
		if err != nil {
			t.Fatal(err)
		}
		if f.P != 6 || f.p != 18 {
			t.Fatalf("features %d per action, %d in all; want 6 and 18", f.P, f.p)
		}
		theta := make([]float64, f.p)
		for i := range theta {
			theta[i] = rng.NormFloat64()
		}
		rho := 0.0
		sc := f.newScratch(realTarget{numActions: 3})
		qj := func(j int) float64 {
			blk := f.stateAction(sc.x, sc, d, j)
			return dot(sc.x, theta[blk*f.P:(blk+1)*f.P])
		}
		if gamma == 1 {
			// The normalisation: the mean of q over the logged steps is
			// 0; shift theta* by a constant function.
			mean := 0.0
			for j := range d.NumSteps() {
				mean += qj(j)
			}
			mean /= float64(d.NumSteps())
			for a := range 3 {
				theta[a*f.P] -= mean // the constant monomial of every block
			}
			rho = 0.7
		}
		for e := range d.NumEpisodes() {
			lo, hi := d.Span(e)
			for j := lo; j < hi; j++ {
				obs, _ := d.NextObs(e, j)
				probs, _ := d.NextTargetProbs(e, j)
				f.expected(sc, obs, probs)
				d.Reward[j] = qj(j) + rho - gamma*dot(sc.psi, theta)
			}
		}
		m, err := Linear{Features: "poly", Ridge: -1}.FitLinear(d, gamma, Target{})
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i, v := range m.Theta {
			worst = max(worst, math.Abs(v-theta[i]))
		}
		t.Logf("gamma %v: largest error in theta %.3g (rho %.15f)", gamma, worst, m.Rho())
		if worst > 1e-9 {
			t.Errorf("gamma %v: theta off by %.3g\n got %.6f\nwant %.6f", gamma, worst, m.Theta, theta)
		}
		if gamma == 1 && math.Abs(m.Rho()-rho) > 1e-9 {
			t.Errorf("gamma 1: rho %.12f, want %.12f", m.Rho(), rho)
		}
		if gamma < 1 && !math.IsNaN(m.Rho()) {
			t.Errorf("gamma %v: rho %v, want NaN", gamma, m.Rho())
		}
		// Values: q and the Bellman equation q = r + gamma next (- rho).
		q, v, next, err := m.Values(d)
		if err != nil {
			t.Fatal(err)
		}
		for j := range q {
			if math.Abs(q[j]-qj(j)) > 1e-9 {
				t.Fatalf("gamma %v step %d: q %v, want %v", gamma, j, q[j], qj(j))
			}
			if r := q[j] + rho - gamma*next[j]; math.Abs(r-d.Reward[j]) > 1e-9 {
				t.Fatalf("gamma %v step %d: q + rho - gamma next = %v, reward %v", gamma, j, r, d.Reward[j])
			}
			want := 0.0
			for a, pa := range d.TargetProbsAt(j) {
				f.state.apply(sc.z, d.ObsAt(j))
				f.basis(sc.x, sc.z)
				want += pa * dot(sc.x, theta[a*f.P:(a+1)*f.P])
			}
			if math.Abs(v[j]-want) > 1e-9 {
				t.Fatalf("gamma %v step %d: v %v, want %v", gamma, j, v[j], want)
			}
		}
	}
}

// TestLinearValuesContract checks the shape of Values: next[j] = v[j+1]
// within episodes (the same Monte Carlo draws at the same state), NaN
// after a last step without a final state, 0 after a finite-horizon
// model's last steps; and that Workers does not change a bit.
func TestLinearValuesContract(t *testing.T) {
	p := lineargauss.Problem1D()
	rng := rand.New(rand.NewPCG(5, 5))
	d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 30, 15)
	if err != nil {
		t.Fatal(err)
	}
	d.HasFinal[2] = false
	pi := Target{Continuous: p.Target, Samples: 4, Seed: 1}
	for _, finite := range []bool{false, true} {
		m1, err := Linear{Finite: finite, Workers: 1}.FitLinear(d, 0.95, pi)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := Linear{Finite: finite, Workers: 2}.FitLinear(d, 0.95, pi)
		if err != nil {
			t.Fatal(err)
		}
		q, v, next, err := m1.Values(d)
		if err != nil {
			t.Fatal(err)
		}
		q2, v2, next2, err := m2.Values(d)
		if err != nil {
			t.Fatal(err)
		}
		for j := range q {
			if math.Float64bits(q[j]) != math.Float64bits(q2[j]) || math.Float64bits(v[j]) != math.Float64bits(v2[j]) ||
				math.Float64bits(next[j]) != math.Float64bits(next2[j]) {
				t.Fatalf("finite %v step %d: 1 and 2 workers differ", finite, j)
			}
		}
		for e := range d.NumEpisodes() {
			lo, hi := d.Span(e)
			for j := lo; j < hi-1; j++ {
				if next[j] != v[j+1] {
					t.Fatalf("finite %v episode %d step %d: next %v, v of the next step %v", finite, e, j-lo, next[j], v[j+1])
				}
			}
			last := next[hi-1]
			switch {
			case finite && last != 0:
				t.Errorf("finite episode %d: next after the last step %v, want 0", e, last)
			case !finite && e == 2 && !math.IsNaN(last):
				t.Errorf("episode 2 (no final state): next after the last step %v, want NaN", last)
			case !finite && e != 2 && !(math.Abs(last) < math.Inf(1)):
				t.Errorf("episode %d: next after the last step %v, want finite", e, last)
			}
		}
	}
}

func TestLinearErrors(t *testing.T) {
	p := lineargauss.Problem1D()
	rng := rand.New(rand.NewPCG(1, 1))
	cont, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	disc := discreteLog(rng, 2, 3, 3, 5)
	noProbs := disc.Clone()
	noProbs.TargetProbs = nil
	var tab dataset.Builder
	tab.Init(2, 2, 0, 0)
	tab.Add(dataset.Step{State: 0, Action: 1, HasNext: true, NextState: 1})
	tab.EndEpisode("0")
	tabular, err := tab.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	nanState := cont.Clone()
	nanState.Obs[3] = math.NaN()
	badProb := disc.Clone()
	badProb.TargetProbs = append([]float64(nil), disc.TargetProbs...)
	badProb.TargetProbs[4] = -0.1
	for _, c := range []struct {
		name  string
		l     Linear
		d     *dataset.Dataset
		gamma float64
		pi    Target
		want  string
	}{
		{"gamma 0", Linear{}, cont, 0, Target{Continuous: p.Target}, "discount"},
		{"gamma > 1", Linear{}, cont, 1.1, Target{Continuous: p.Target}, "discount"},
		{"no continuous target", Linear{}, cont, 0.9, Target{}, "Target.Continuous"},
		{"negative samples", Linear{}, cont, 0.9, Target{Continuous: p.Target, Samples: -1}, "Samples"},
		{"no target probs", Linear{}, noProbs, 0.9, Target{}, "target_prob_k"},
		{"tabular policy with real states", Linear{}, disc, 0.9, Target{Policy: uniformPolicy{3}}, "Target.Policy"},
		{"continuous target with discrete actions", Linear{}, disc, 0.9, Target{Continuous: p.Target}, "discrete actions"},
		{"discrete states", Linear{}, tabular, 0.9, Target{}, "tabular learner"},
		{"degree", Linear{Degree: -1}, cont, 0.9, Target{Continuous: p.Target}, "degree"},
		{"too many features", Linear{Degree: 100}, disc, 0.9, Target{}, "features"},
		{"ridge", Linear{Ridge: math.NaN()}, cont, 0.9, Target{Continuous: p.Target}, "ridge"},
		{"non-finite state", Linear{}, nanState, 0.9, Target{Continuous: p.Target}, "not finite"},
		{"negative probability", Linear{}, badProb, 0.9, Target{}, "target probability"},
	} {
		_, err := c.l.Fit(c.d, c.gamma, c.pi)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// Values on logs of another shape, or without target probabilities.
	m, err := Linear{}.Fit(disc, 0.9, Target{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*dataset.Dataset{cont, noProbs} {
		if _, _, _, err := m.Values(d); err == nil {
			t.Errorf("Values on incompatible logs: no error")
		}
	}
}

// uniformPolicy is a policy.Discrete for the error tests.
type uniformPolicy struct{ k int }

func (u uniformPolicy) NumActions() int                  { return u.k }
func (u uniformPolicy) Prob(_, _ int) float64            { return 1 / float64(u.k) }
func (u uniformPolicy) Sample(rng *rand.Rand, _ int) int { return rng.IntN(u.k) }

// TestMonomials checks the count and the values of the polynomial
// features: degree 2 in (a, b) is 1, a, b, a^2, ab, b^2.
func TestMonomials(t *testing.T) {
	for _, c := range []struct{ n, degree int }{{1, 1}, {2, 2}, {3, 2}, {4, 3}, {13, 2}} {
		if got, want := newMonomials(c.n, c.degree).len(), numMonomials(c.n, c.degree, 1<<30); got != want {
			t.Errorf("n %d degree %d: %d monomials, want C(n+d, d) = %d", c.n, c.degree, got, want)
		}
	}
	x := make([]float64, 6)
	newMonomials(2, 2).eval(x, []float64{2, 3})
	if want := []float64{1, 2, 3, 4, 6, 9}; !slices.Equal(x, want) {
		t.Errorf("monomials of (2, 3): %v, want %v", x, want)
	}
}

// TestExpectedFeaturesSplit checks that the expected features of real
// actions, computed as state monomials times the mean action monomials,
// equal the mean of the joint monomials over the same draws.
func TestExpectedFeaturesSplit(t *testing.T) {
	p := lineargauss.Problem2D()
	rng := rand.New(rand.NewPCG(8, 8))
	d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newLinFeatures(d, featureSpec{kind: "poly", degree: 3})
	if err != nil {
		t.Fatal(err)
	}
	tgt := realTarget{actionDim: 1, cont: p.Target, samples: 5, seed: 3}
	sc := f.newScratch(tgt)
	obs := d.ObsAt(4)
	f.expected(sc, obs, nil)
	want := make([]float64, f.p)
	x := make([]float64, f.p)
	z := make([]float64, 3)
	newMCSampler(tgt).draw(obs, func(_ int, a []float64) {
		f.state.apply(z, obs)
		f.action.apply(z[2:], a)
		newMonomials(3, 3).eval(x, z)
		for i, v := range x {
			want[i] += v / 5
		}
	})
	for i := range want {
		if math.Abs(sc.psi[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("feature %d: %v, direct mean %v", i, sc.psi[i], want[i])
		}
	}
}

// TestLinearUnknownNext checks the discrete-action logs whose last steps
// have a final state but no target distribution there: those
// transitions are left out of the fit and reported, their next value is
// NaN; and an action never logged is reported.
func TestLinearUnknownNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	d := discreteLog(rng, 1, 3, 10, 8)
	for j := range d.Action {
		d.Reward[j] = rng.NormFloat64()
		if d.Action[j] == 2 {
			d.Action[j] = 1
		}
	}
	d.HasFinalTarget = nil
	m, err := Linear{}.FitLinear(d, 0.9, Target{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Skipped != 10 || m.Transitions != 70 {
		t.Errorf("skipped %d, fitted %d; want 10 and 70", m.Skipped, m.Transitions)
	}
	w := strings.Join(m.Warnings(), "\n")
	if !strings.Contains(w, "10 transitions left out") || !strings.Contains(w, "actions [2] never appear") {
		t.Errorf("warnings %q", w)
	}
	_, _, next, err := m.Values(d)
	if err != nil {
		t.Fatal(err)
	}
	for e := range d.NumEpisodes() {
		_, hi := d.Span(e)
		if !math.IsNaN(next[hi-1]) || math.IsNaN(next[hi-2]) {
			t.Fatalf("episode %d: next values %v at the last two steps, want a number then NaN", e, next[hi-2:hi])
		}
	}
}

// TestLinearTailLinearGauss checks the finite-horizon tail (Backups
// exact backward regressions, then the stationary or differential
// solution with its constant matched at h = Backups) against the exact
// T-step value of the 1-d linear-Gaussian problem, for horizons far
// beyond the exact backups: the closed loop mixes within a few steps, so
// the tail's error gamma^h |E[v(s_h) | s, a] - kappa| is negligible and
// what is left is the fit's sampling error.
func TestLinearTailLinearGauss(t *testing.T) {
	p := lineargauss.Problem1D()
	const n, T = 100, 200
	for _, gamma := range []float64{0.9, 1} {
		rng := rand.New(rand.NewPCG(3, 1))
		d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, n, T)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Linear{Finite: true, Backups: 20}.FitLinear(d, gamma, Target{Continuous: p.Target, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		full, err := Linear{Finite: true, Backups: -1}.FitLinear(d, gamma, Target{Continuous: p.Target, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []int{10, 20, 21, 50, T} {
			want, err := p.System.Value(p.Target, gamma, h)
			if err != nil {
				t.Fatal(err)
			}
			nh := 0.0
			for k := range h {
				nh += math.Pow(gamma, float64(k))
			}
			got, exact := startValue(m, p, h)/nh, startValue(full, p, h)/nh
			t.Logf("gamma %v h %3d: tail %.5f, all backups %.5f, exact %.5f", gamma, h, got, exact, want)
			if math.Abs(got-want) > 0.025 {
				t.Errorf("gamma %v h %d: tail value %.5f, exact %.5f", gamma, h, got, want)
			}
		}
	}
}

// TestLinearBackupsChosen checks the choice of the exact backups. Where
// the projected backups converge (the linear-Gaussian system, whose q^h
// the quadratic features represent) the chosen ones give the values of
// all-exact backups. Where they expand (Pendulum, whose swing-up value no
// quadratic represents, gamma = 1, T = 1000) only the first few are kept
// and the 1000-step value stays within the rewards' range, which
// all-exact backups leave (their coefficients grow by about 5% per
// backup: the case keeps its teeth by checking that they do).
func TestLinearBackupsChosen(t *testing.T) {
	lg := lineargauss.Problem1D()
	pend, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	behavior, err := pendulum.Behavior(1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name             string
		sys              sim.Continuous
		behavior, target policy.Continuous
		n, T             int
		converges        bool    // the backups converge
		maxReward        float64 // |r| <= maxReward
	}{
		{"linear-Gaussian", lg.System, lg.Behavior, lg.Target, 100, 300, true, math.Inf(1)},
		// |r| = theta^2 + 0.1 thetadot^2 + 0.001 u^2 <= pi^2 + 6.4 + 0.004.
		{"Pendulum", pend, behavior, target, 20, 1000, false, 16.3},
	}
	// largest returns max_i |v^T_i(s^i_0)|/T_i and the start values.
	largest := func(m *LinearModel, d *dataset.Dataset) (float64, []float64) {
		_, v, _, err := m.Values(d)
		if err != nil {
			t.Fatal(err)
		}
		worst, starts := 0.0, []float64{}
		for i := range d.NumEpisodes() {
			lo, hi := d.Span(i)
			worst = math.Max(worst, math.Abs(v[lo])/float64(hi-lo))
			starts = append(starts, v[lo]/float64(hi-lo))
		}
		return worst, starts
	}
	for _, c := range cases {
		d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(5, 1)), c.sys, c.behavior, c.target, c.n, c.T)
		if err != nil {
			t.Fatal(err)
		}
		fit := func(backups int) *LinearModel {
			m, err := Linear{Finite: true, Backups: backups}.FitLinear(d, 1, Target{Continuous: c.target, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		chosen, exact := fit(0), fit(-1)
		worst, got := largest(chosen, d)
		worstExact, want := largest(exact, d)
		t.Logf("%s: %d exact backups, largest |v^T(s0)|/T %.3g (all exact: %.3g)", c.name, chosen.ExactBackups, worst, worstExact)
		if !(worst <= c.maxReward) {
			t.Errorf("%s: |v^T(s0)|/T = %.3g beyond the rewards' bound %g", c.name, worst, c.maxReward)
		}
		if c.converges {
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-4 {
					t.Fatalf("%s: episode %d: v^T(s0)/T %.6f with %d exact backups, %.6f with all", c.name, i, got[i], chosen.ExactBackups, want[i])
				}
			}
			continue
		}
		if chosen.ExactBackups > 100 {
			t.Errorf("%s: %d exact backups kept, want few", c.name, chosen.ExactBackups)
		}
		if worstExact <= c.maxReward {
			t.Errorf("%s: all-exact backups stay within the rewards' range (%.3g): the case no longer tests the choice", c.name, worstExact)
		}
	}
}

// TestLinearLoggedDraws fits LSTD-Q with the target known only by one
// action drawn at every logged state and next state (policy.Draws, what
// ihope estimate --target-draws reads), on the 1-d linear-Gaussian
// problem whose q the degree-2 features represent exactly: one draw is
// unbiased for E_pi q(s', .) and enters Phi'_pi linearly, so the fit stays
// consistent. Over R = 20 seeds the root mean square error falls by at
// least 2 from n = 20 to n = 320 episodes, and the mean error at n = 320
// lies within 3 standard errors of 0, as with the policy itself
// (TestLinearLinearGauss). R = 20 with IHOPE_STAT=1; the everyday run
// takes the first 8 seeds and asks for a fall by 1.5.
func TestLinearLoggedDraws(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 120 models")
	}
	R, fall := 8, 1.5
	if testsets.Stat() {
		R, fall = 20, 2
	}
	p := lineargauss.Problem1D()
	for _, gamma := range []float64{0.9, 1} {
		linearGaussConvergence(t, gamma, R, fall, func(d *dataset.Dataset, r int) Target {
			var states, actions [][]float64
			draw := rand.New(rand.NewPCG(uint64(r), 99))
			d.TargetStates(func(obs []float64, _, _ int, _ bool) bool {
				states, actions = append(states, obs), append(actions, p.Target.Sample(draw, obs))
				return true
			})
			draws, err := policy.NewDraws(states, actions)
			if err != nil {
				t.Fatal(err)
			}
			return Target{Continuous: draws, Samples: 1}
		})
	}
}
