package ring_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
)

func TestNew(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 2, 4, 10} {
		if _, err := ring.New(n); err == nil {
			t.Errorf("New(%d): no error", n)
		}
	}
	m, err := ring.New(5)
	if err != nil {
		t.Fatal(err)
	}
	if err := mdp.Check(m); err != nil {
		t.Fatal(err)
	}
	moves := []struct{ s, a, next int }{{0, ring.L, 4}, {0, ring.R, 1}, {4, ring.R, 0}, {2, ring.L, 1}}
	for _, c := range moves {
		o := m.Outcomes(c.s, c.a)
		if len(o) != 1 || o[0].Next != c.next || o[0].Prob != 1 || o[0].Reward != float64(c.a) {
			t.Errorf("Outcomes(%d, %d) = %+v, want next %d reward %d", c.s, c.a, o, c.next, c.a)
		}
	}
	p := ring.Policy(5, 0.3)
	if p.Prob(3, ring.R) != 0.3 || p.Prob(3, ring.L) != 0.7 {
		t.Errorf("Policy(5, 0.3) row 3 = %v", p.Row(3))
	}
}

// binomialMoments returns, under the behavior (P(R) = rho), the exact
// E[w], E[w^2], E[wR], E[(wR)^2] and E[w^2 (R - (1-rho))^2] of a
// T+1-step trajectory, summing over F ~ Binomial(T+1, rho) with
// w = C^(2F - (T+1)), C = (1-rho)/rho, R = F/(T+1).
func binomialMoments(rho float64, T int) (w1, w2, wr1, wr2, wis float64) {
	n := T + 1
	logC := math.Log((1 - rho) / rho)
	for f := 0; f <= n; f++ {
		lg1, _ := math.Lgamma(float64(n + 1))
		lg2, _ := math.Lgamma(float64(f + 1))
		lg3, _ := math.Lgamma(float64(n - f + 1))
		logp := lg1 - lg2 - lg3 + float64(f)*math.Log(rho) + float64(n-f)*math.Log(1-rho)
		k := float64(2*f - n)
		r := float64(f) / float64(n)
		p1 := math.Exp(logp + k*logC)
		p2 := math.Exp(logp + 2*k*logC)
		w1 += p1
		w2 += p2
		wr1 += p1 * r
		wr2 += p2 * r * r
		wis += p2 * (r - (1 - rho)) * (r - (1 - rho))
	}
	return
}

// TestVarianceFormulas checks the Proposition of Appendix B against the
// exact binomial law of F. The paper's printed B_{rho,T} (with
// (1-rho)^4/rho) fails this test for every rho != 1 (at rho = 0.5 it gives
// a negative variance 1/(4(T+1)) - 1/8); see ring.B.
func TestVarianceFormulas(t *testing.T) {
	for _, rho := range []float64{0.1, 0.25, 0.4, 0.45, 0.5, 0.6, 0.8} {
		for _, T := range []int{0, 1, 2, 5, 20, 60} {
			w1, w2, wr1, wr2, wis := binomialMoments(rho, T)
			if math.Abs(w1-1) > 1e-12 || math.Abs(wr1-(1-rho)) > 1e-12 {
				t.Fatalf("rho %v T %d: E[w] = %v, E[wR] = %v, want 1 and %v", rho, T, w1, wr1, 1-rho)
			}
			check := func(name string, got, want float64) {
				t.Helper()
				if !scalar.EqualWithinAbsOrRel(got, want, 1e-13, 1e-10) {
					t.Errorf("rho %v T %d: %s = %.15g, exact %.15g", rho, T, name, got, want)
				}
			}
			check("WeightVariance", ring.WeightVariance(rho, T), w2-1)
			check("WeightRewardVariance", ring.WeightRewardVariance(rho, T), wr2-wr1*wr1)
			check("WISVariance", ring.WISVariance(rho, T), wis)
		}
	}
}

// TestKnownValues pins numbers known in closed form.
func TestKnownValues(t *testing.T) {
	cases := []struct {
		name      string
		got, want float64
	}{
		{"A(0.4)", ring.A(0.4), 7.0 / 6},
		{"A(0.5)", ring.A(0.5), 1},
		{"A(0.1)", ring.A(0.1), 1 + 0.64/0.09},
		{"WeightVariance(0.4, 0)", ring.WeightVariance(0.4, 0), 1.0 / 6},
		{"WeightVariance(0.4, 10)", ring.WeightVariance(0.4, 10), math.Pow(7.0/6, 11) - 1},
		{"WeightVariance(0.5, 100)", ring.WeightVariance(0.5, 100), 0},
		// Remark after the Proposition: at rho = 1/2, Var[wR] = 1/(4(T+1)).
		{"WeightRewardVariance(0.5, 9)", ring.WeightRewardVariance(0.5, 9), 1.0 / 40},
		{"WeightRewardVariance(0.5, 0)", ring.WeightRewardVariance(0.5, 0), 0.25},
		// T = 0: w = C or 1/C, R = 1 or 0: E[(wR)^2] = rho C^2 = 9/4 * 0.4.
		{"WeightRewardVariance(0.4, 0)", ring.WeightRewardVariance(0.4, 0), 0.4*2.25 - 0.36},
		{"B(0.4, 0)", ring.B(0.4, 0), 0.24 + 0.1296/0.16},
	}
	for _, c := range cases {
		if !scalar.EqualWithinAbsOrRel(c.got, c.want, 1e-15, 1e-14) {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
	for _, v := range []float64{ring.A(0), ring.A(1), ring.WeightVariance(0.4, -1), ring.WeightRewardVariance(1.2, 3), ring.WISVariance(math.NaN(), 3), ring.B(0.5, -2)} {
		if !math.IsNaN(v) {
			t.Errorf("invalid argument gave %v, want NaN", v)
		}
	}
}

// binomialLaw returns the exact law of (w_{0:T}, R^T) under the behavior:
// F = f with probability p[f], w = w[f], R = f/(T+1).
func binomialLaw(rho float64, T int) (p, w, r []float64) {
	n := T + 1
	c := (1 - rho) / rho
	lg1, _ := math.Lgamma(float64(n + 1))
	for f := 0; f <= n; f++ {
		lg2, _ := math.Lgamma(float64(f + 1))
		lg3, _ := math.Lgamma(float64(n - f + 1))
		p = append(p, math.Exp(lg1-lg2-lg3+float64(f)*math.Log(rho)+float64(n-f)*math.Log(1-rho)))
		w = append(w, math.Pow(c, float64(2*f-n)))
		r = append(r, float64(f)/float64(n))
	}
	return p, w, r
}

// sampleVarianceSE returns the variance of x ~ law (p, x) and the standard
// error of its sample variance from N draws, sqrt((mu4 - sigma^4)/N).
func sampleVarianceSE(p, x []float64, N int) (sigma2, se float64) {
	mean, mu4 := 0.0, 0.0
	for f := range p {
		mean += p[f] * x[f]
	}
	for f := range p {
		d := x[f] - mean
		sigma2 += p[f] * d * d
		mu4 += p[f] * d * d * d * d
	}
	return sigma2, math.Sqrt((mu4 - sigma2*sigma2) / float64(N))
}

// TestMonteCarlo samples N trajectories of T+1 = 11 steps on the 5-ring
// under the behavior rho = 0.4 and compares the sample variances of
// w_{0:T} and w_{0:T} R^T with the formulas, within 4 standard errors of
// the sample variance (computed from the exact law). With these N the
// standard errors are about 0.10 (Var[w] = 4.45) and 0.09 (Var[wR] = 2.97;
// the paper's printed B would give 1.02).
func TestMonteCarlo(t *testing.T) {
	const (
		n   = 5
		rho = 0.4
		T   = 10
		N   = 400000
	)
	m, err := ring.New(n)
	if err != nil {
		t.Fatal(err)
	}
	sampler := sim.NewSampler(m)
	behavior, target := ring.Policy(n, rho), ring.Policy(n, 1-rho)
	rng := rand.New(rand.NewPCG(2018, 0))
	ws := make([]float64, N)
	wrs := make([]float64, N)
	for i := range ws {
		s := sampler.Reset(rng)
		logw, sum := 0.0, 0.0
		for t := 0; t <= T; t++ {
			a := behavior.Sample(rng, s)
			logw += math.Log(target.Prob(s, a)) - math.Log(behavior.Prob(s, a))
			var r float64
			s, r = sampler.Step(rng, s, a)
			sum += r
		}
		ws[i] = math.Exp(logw)
		wrs[i] = ws[i] * sum / (T + 1)
	}
	variance := func(x []float64) float64 {
		mean, ss := 0.0, 0.0
		for _, v := range x {
			mean += v
		}
		mean /= float64(len(x))
		for _, v := range x {
			ss += (v - mean) * (v - mean)
		}
		return ss / float64(len(x)-1)
	}
	p, w, r := binomialLaw(rho, T)
	wr := make([]float64, len(w))
	for f := range w {
		wr[f] = w[f] * r[f]
	}
	cases := []struct {
		name    string
		sample  []float64
		formula float64
		law     []float64
	}{
		{"Var[w]", ws, ring.WeightVariance(rho, T), w},
		{"Var[wR]", wrs, ring.WeightRewardVariance(rho, T), wr},
	}
	for _, c := range cases {
		exactVar, se := sampleVarianceSE(p, c.law, N)
		if math.Abs(exactVar-c.formula) > 1e-12*c.formula {
			t.Errorf("%s: formula %.15g, exact law %.15g", c.name, c.formula, exactVar)
		}
		got := variance(c.sample)
		t.Logf("%s: sample %.4f, formula %.4f, standard error %.4f", c.name, got, c.formula, se)
		if math.Abs(got-c.formula) > 4*se {
			t.Errorf("%s: sample %.4f, formula %.4f, standard error %.4f", c.name, got, c.formula, se)
		}
	}
}

// TestExact: under any policy that picks R with the same probability
// everywhere, the uniform distribution is stationary (P is a mixture of
// two rotations), so d_pi = d_pi0 = uniform and w = 1, for gamma = 1 and,
// since the reset is uniform, for gamma < 1 too.
func TestExact(t *testing.T) {
	for _, n := range []int{3, 7, 11} {
		m, err := ring.New(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, rho := range []float64{0.1, 0.3, 0.5} {
			target, behavior := ring.Policy(n, 1-rho), ring.Policy(n, rho)
			for _, gamma := range []float64{1, 0.9, 0.5} {
				d, err := mdp.Visitation(m, behavior, gamma)
				if err != nil {
					t.Fatal(err)
				}
				for s, v := range d {
					if math.Abs(v-1/float64(n)) > 1e-12 {
						t.Errorf("n %d rho %v gamma %v: d(%d) = %.17g, want 1/%d", n, rho, gamma, s, v, n)
					}
				}
				w, err := mdp.Ratio(m, target, behavior, gamma)
				if err != nil {
					t.Fatal(err)
				}
				for s, v := range w {
					if math.Abs(v-1) > 1e-12 {
						t.Errorf("n %d rho %v gamma %v: w(%d) = %.17g, want 1", n, rho, gamma, s, v)
					}
				}
				// The target's average reward is 1 - rho at every horizon.
				if v := mdp.Value(m, target, nil, 50, gamma); math.Abs(v-(1-rho)) > 1e-12 {
					t.Errorf("n %d rho %v gamma %v: value %.17g, want %v", n, rho, gamma, v, 1-rho)
				}
			}
		}
	}
}
