package lineargauss

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
)

// logN2 is the bivariate normal log-density written out with the explicit
// 2x2 inverse, an independent reference for the Cholesky-based code.
func logN2(x, mu []float64, c *mat.SymDense) float64 {
	a, b, d := c.At(0, 0), c.At(0, 1), c.At(1, 1)
	det := a*d - b*b
	u, v := x[0]-mu[0], x[1]-mu[1]
	return -math.Log(2*math.Pi) - 0.5*math.Log(det) - 0.5*(d*u*u-2*b*u*v+a*v*v)/det
}

func TestSolveLyapunov(t *testing.T) {
	s, err := SolveLyapunov(mat.NewDense(1, 1, []float64{0.7}), mat.NewSymDense(1, []float64{0.18}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.At(0, 0), 0.18/0.51; math.Abs(got-want) > 1e-15 {
		t.Errorf("1-d: S = %v, want %v", got, want)
	}

	// 2-d: compare with the fixed point of S <- M S M' + W reached by
	// iteration, an independent computation.
	m := mat.NewDense(2, 2, []float64{0.9, 0.3, -0.4, 0.6})
	w := mat.NewSymDense(2, []float64{0.5, 0.1, 0.1, 0.2})
	s, err = SolveLyapunov(m, w)
	if err != nil {
		t.Fatal(err)
	}
	it := mat.NewDense(2, 2, nil)
	for range 3000 {
		var n mat.Dense
		n.Product(m, it, m.T())
		n.Add(&n, w)
		it = &n
	}
	if !mat.EqualApprox(s, it, 1e-12) {
		t.Errorf("Lyapunov solution\n%v\niteration\n%v", mat.Formatted(s), mat.Formatted(it))
	}

	if _, err := SolveLyapunov(mat.NewDense(1, 1, []float64{1.01}), mat.NewSymDense(1, []float64{1})); err == nil {
		t.Error("unstable M accepted")
	}
}

// The numbers documented on Problem1D, by hand:
// d_pi = N(0.3, 0.13/0.75), d_pi0 = N(0, 0.18/0.51);
// R(pi) = -(0.13/0.75 + 0.09) + 0.3 - 0.25 - 0.1 (0.64 * 0.13/0.75 + 0.16 + 0.06^2),
// R(pi0) = -0.18/0.51 - 0.25 - 0.1 (0.16 * 0.18/0.51 + 0.36).
func TestProblem1DTruth(t *testing.T) {
	p := Problem1D()
	st, err := p.System.Stationary(p.Target)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := p.System.Stationary(p.Behavior)
	if err != nil {
		t.Fatal(err)
	}
	vt, vb := 0.13/0.75, 0.18/0.51
	for i, c := range []struct{ got, want float64 }{
		{st.Mean()[0], 0.3},
		{st.Cov().At(0, 0), vt},
		{sb.Mean()[0], 0},
		{sb.Cov().At(0, 0), vb},
		{must(p.System.AverageReward(p.Target)), -(vt + 0.09) + 0.3 - 0.25 - 0.1*(0.64*vt+0.16+0.06*0.06)},
		{must(p.System.AverageReward(p.Behavior)), -vb - 0.25 - 0.1*(0.16*vb+0.36)},
		{must(p.System.AverageReward(p.Target)), -0.24078666666666667},
		{must(p.System.AverageReward(p.Behavior)), -0.64458823529411765},
	} {
		if !scalar.EqualWithinAbsOrRel(c.got, c.want, 1e-14, 1e-14) {
			t.Errorf("case %d: got %.17g, want %.17g", i, c.got, c.want)
		}
	}
	// The reset distribution is d_pi0.
	if init := p.System.Init(); init.Mean()[0] != 0 || math.Abs(init.Cov().At(0, 0)-vb) > 1e-15 {
		t.Errorf("reset distribution N(%v, %v), want N(0, %v)", init.Mean(), init.Cov().At(0, 0), vb)
	}

	// E[w^2] by quadrature of d_pi^2 / d_pi0, an independent computation.
	r, err := p.Ratio()
	if err != nil {
		t.Fatal(err)
	}
	q := quad.Fixed(func(x float64) float64 {
		s := []float64{x}
		return math.Exp(2*r.Target.LogPDF(s) - r.Behavior.LogPDF(s))
	}, -8, 8, 200, quad.Legendre{}, 0)
	if got := r.SecondMoment(); math.Abs(got-q) > 1e-12 || math.Abs(got-1.375550748756402) > 1e-12 {
		t.Errorf("E[w^2] = %.17g, quadrature %.17g, documented 1.3755507487564", got, q)
	}
	// w at its mode-ish point, by hand: N(0.3; 0.3, vt) / N(0.3; 0, vb).
	want := math.Sqrt(vb/vt) * math.Exp(0.09/(2*vb))
	if got := r.W([]float64{0.3}); math.Abs(got-want) > 1e-14 {
		t.Errorf("w(0.3) = %.17g, want %.17g", got, want)
	}
}

func TestProblem2DTruth(t *testing.T) {
	p := Problem2D()
	st, err := p.System.Stationary(p.Target)
	if err != nil {
		t.Fatal(err)
	}
	// The stationary law solves its defining equations.
	m, b, w, err := p.System.closedLoop(p.Target)
	if err != nil {
		t.Fatal(err)
	}
	var res mat.Dense
	res.Product(m, st.Cov(), m.T())
	res.Add(&res, w)
	res.Sub(&res, st.Cov())
	if n := mat.Norm(&res, math.Inf(1)); n > 1e-14 {
		t.Errorf("Lyapunov residual %v", n)
	}
	mu := st.Mean()
	if mu0 := m.At(0, 0)*mu[0] + m.At(0, 1)*mu[1] + b[0]; math.Abs(mu0-mu[0]) > 1e-15 || math.Abs(mu[0]-0.25) > 1e-15 || math.Abs(mu[1]) > 1e-15 {
		t.Errorf("stationary mean %v, want (0.25, 0)", mu)
	}
	r, err := p.Ratio()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ got, want float64 }{
		{r.SecondMoment(), 1.524521358474513},
		{must(p.System.AverageReward(p.Target)), -0.32980864266547405},
		{must(p.System.AverageReward(p.Behavior)), -0.66357965009208131},
	} {
		if !scalar.EqualWithinAbsOrRel(c.got, c.want, 1e-13, 1e-13) {
			t.Errorf("case %d: got %.17g, want %.17g", i, c.got, c.want)
		}
	}
}

// batchMeans returns the mean of xs and its standard error from 100
// batch means, which accounts for the chain's autocorrelation.
func batchMeans(xs []float64) (mean, se float64) {
	const nb = 100
	size := len(xs) / nb
	var bm [nb]float64
	for k := range nb {
		s := 0.0
		for _, v := range xs[k*size : (k+1)*size] {
			s += v
		}
		bm[k] = s / float64(size)
		mean += bm[k] / nb
	}
	v := 0.0
	for _, x := range bm {
		v += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(v / (nb - 1) / nb)
}

// TestSimulation runs long chains under each policy and compares sample
// moments with the closed forms, and checks that the exact ratio turns
// behavior data into target expectations: the paper's estimator
//
//	R = sum_t w(s_t) beta(a_t|s_t) r_t / sum_t w(s_t) beta(a_t|s_t)
//
// with the true w recovers the target's average reward.
func TestSimulation(t *testing.T) {
	const n = 400000
	for pi, p := range []*Problem{Problem1D(), Problem2D()} {
		ratio, err := p.Ratio()
		if err != nil {
			t.Fatal(err)
		}
		for k, pol := range []*Policy{p.Target, p.Behavior} {
			st, _ := p.System.Stationary(pol)
			avg, _ := p.System.AverageReward(pol)
			rng := rand.New(rand.NewPCG(uint64(10*pi+k), 1))
			s := st.Rand(rng)
			d := p.System.StateDim()
			rew := make([]float64, n)
			first := make([]float64, n)  // s_1
			square := make([]float64, n) // s_d^2
			wb := make([]float64, n)     // w(s) beta(a|s), behavior chain only
			wbr := make([]float64, n)
			for t := range n {
				a := pol.Sample(rng, s)
				next, r := p.System.Step(rng, s, a)
				rew[t], first[t], square[t] = r, s[0], s[d-1]*s[d-1]
				if pol == p.Behavior {
					v := math.Exp(ratio.LogW(s) + p.Target.LogProb(s, a) - p.Behavior.LogProb(s, a))
					wb[t], wbr[t] = v, v*r
				}
				s = next
			}
			for i, c := range []struct {
				name string
				xs   []float64
				want float64
			}{
				{"average reward", rew, avg},
				{"E s_1", first, st.Mean()[0]},
				{"E s_d^2", square, st.Cov().At(d-1, d-1) + st.Mean()[d-1]*st.Mean()[d-1]},
			} {
				m, se := batchMeans(c.xs)
				if math.Abs(m-c.want) > 5*se {
					t.Errorf("problem %d policy %d case %d (%s): simulation %.5f +- %.5f, closed form %.5f", pi, k, i, c.name, m, se, c.want)
				}
			}
			if pol != p.Behavior {
				continue
			}
			num, _ := batchMeans(wbr)
			den, se := batchMeans(wb)
			target, _ := p.System.AverageReward(p.Target)
			if math.Abs(den-1) > 5*se || math.Abs(num/den-target) > 0.01 {
				t.Errorf("problem %d: E[w beta] = %.4f +- %.4f (want 1), weighted reward %.4f, target %.4f", pi, den, se, num/den, target)
			}
		}
	}
}

func TestValue(t *testing.T) {
	p := Problem2D()
	// Started from its own stationary law, the behavior's T-step average
	// reward is its average reward for every T.
	avg, _ := p.System.AverageReward(p.Behavior)
	for _, T := range []int{1, 7, 100} {
		v, err := p.System.Value(p.Behavior, 1, T)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(v-avg) > 1e-13 {
			t.Errorf("T=%d: behavior value %.17g, average reward %.17g", T, v, avg)
		}
	}
	// The target's T-step average reward tends to its average reward.
	tavg, _ := p.System.AverageReward(p.Target)
	v, _ := p.System.Value(p.Target, 1, 100000)
	if math.Abs(v-tavg) > 1e-3 {
		t.Errorf("T=1e5: target value %v, average reward %v", v, tavg)
	}
	// Discounted value against Monte Carlo.
	const gamma, T, n = 0.9, 30, 20000
	want, err := p.System.Value(p.Target, gamma, T)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	vals := make([]float64, n)
	norm := (1 - math.Pow(gamma, T)) / (1 - gamma)
	for i := range vals {
		s := p.System.Reset(rng)
		g := 1.0
		for range T {
			next, r := p.System.Step(rng, s, p.Target.Sample(rng, s))
			vals[i] += g * r / norm
			g *= gamma
			s = next
		}
	}
	m, se := batchMeans(vals)
	if math.Abs(m-want) > 5*se {
		t.Errorf("discounted value: Monte Carlo %.5f +- %.5f, exact %.5f", m, se, want)
	}
}

func TestLogDensities(t *testing.T) {
	// By hand: N(0; -0.8*1 + 0.3, 0.4^2) = -log(0.4 sqrt(2 pi)) - 1.25^2/2.
	p := Problem1D()
	want := -math.Log(0.4) - 0.5*math.Log(2*math.Pi) - 1.25*1.25/2
	if got := p.Target.LogProb([]float64{1}, []float64{0}); math.Abs(got-want) > 1e-15 {
		t.Errorf("log pi(0|1) = %.17g, want %.17g", got, want)
	}

	// A 2-action policy against the explicit bivariate formula.
	cov := mat.NewSymDense(2, []float64{0.5, 0.2, 0.2, 0.3})
	pol, err := NewPolicy(mat.NewDense(2, 3, []float64{1, 0, -1, 0.5, 0.5, 0}), []float64{0.1, -0.2}, cov)
	if err != nil {
		t.Fatal(err)
	}
	obs, u := []float64{0.3, -1, 2}, []float64{-1.5, 0.4}
	mu := pol.MeanAction(obs)
	if mu[0] != 0.3-2+0.1 || mu[1] != 0.15-0.5-0.2 {
		t.Errorf("mean action %v, want (-1.6, -0.55)", mu)
	}
	if got, want := pol.LogProb(obs, u), logN2(u, mu, cov); math.Abs(got-want) > 1e-14 {
		t.Errorf("log pi = %.17g, explicit %.17g", got, want)
	}
	g, _ := NewGaussian([]float64{1, 2}, cov)
	if got, want := g.LogPDF(u), logN2(u, []float64{1, 2}, cov); math.Abs(got-want) > 1e-14 {
		t.Errorf("log N = %.17g, explicit %.17g", got, want)
	}

	// A target twice as wide as the behavior has an infinite E[w^2].
	wide, _ := NewGaussian([]float64{0}, mat.NewSymDense(1, []float64{2.5}))
	narrow, _ := NewGaussian([]float64{0}, mat.NewSymDense(1, []float64{1}))
	if m := (Ratio{Target: wide, Behavior: narrow}).SecondMoment(); !math.IsInf(m, 1) {
		t.Errorf("E[w^2] = %v, want +Inf", m)
	}
}

func TestErrors(t *testing.T) {
	one := func(v float64) *mat.Dense { return mat.NewDense(1, 1, []float64{v}) }
	var1 := func(v float64) *mat.SymDense { return mat.NewSymDense(1, []float64{v}) }
	if _, err := NewSystem(mat.NewDense(1, 2, nil), one(1), var1(1), []float64{0}, var1(1), Reward{}); err == nil {
		t.Error("non-square A accepted")
	}
	if _, err := NewSystem(one(1), one(1), var1(-1), []float64{0}, var1(1), Reward{}); err == nil {
		t.Error("negative noise variance accepted")
	}
	if _, err := NewSystem(one(1), one(1), var1(1), []float64{0}, var1(1), Reward{S: []float64{1, 2}}); err == nil {
		t.Error("reward of the wrong size accepted")
	}
	if _, err := NewPolicy(one(1), []float64{0}, var1(0)); err == nil {
		t.Error("zero policy variance accepted")
	}
	sys, err := NewSystem(one(1.1), one(1), var1(1), []float64{0}, var1(1), Reward{})
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := NewPolicy(one(0.05), []float64{0}, var1(1)) // closed loop 1.15
	if _, err := sys.Stationary(pol); err == nil {
		t.Error("unstable closed loop has a stationary distribution")
	}
}

func ExampleProblem1D() {
	p := Problem1D()
	r, _ := p.Ratio()
	target, _ := p.System.AverageReward(p.Target)
	behavior, _ := p.System.AverageReward(p.Behavior)
	fmt.Printf("d_pi  = N(%.4f, %.4f)\n", r.Target.Mean()[0], r.Target.Cov().At(0, 0))
	fmt.Printf("d_pi0 = N(%.4f, %.4f)\n", r.Behavior.Mean()[0], r.Behavior.Cov().At(0, 0))
	fmt.Printf("w(0) = %.4f, w(1) = %.4f, E[w^2] = %.4f\n", r.W([]float64{0}), r.W([]float64{1}), r.SecondMoment())
	fmt.Printf("average reward: target %.5f, behavior %.5f\n", target, behavior)
	// Output:
	// d_pi  = N(0.3000, 0.1733)
	// d_pi0 = N(0.0000, 0.3529)
	// w(0) = 1.1007, w(1) = 1.4315, E[w^2] = 1.3756
	// average reward: target -0.24079, behavior -0.64459
}
