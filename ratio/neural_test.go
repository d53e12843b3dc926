package ratio

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/nn"
)

// arChain describes a linear-Gaussian system with Gaussian policies whose
// stationary (and discounted) state distributions are Gaussian, so that
// the true density ratio is known in closed form:
//
//	s_{t+1} = a s_t + u_t + sigma eps_t,   u_t ~ N(mu, tau^2 I),
//
// per coordinate, with action mean mu = 0 under the behavior policy and
// mu = (shift, 0, ...) under the target policy. Started from the
// behavior's stationary law N(0, v), v = (tau^2 + sigma^2)/(1 - a^2), the
// state at time t under the target is N(mu_t, v) with
// mu_t = shift (1 - a^t)/(1 - a) in coordinate 0, so
//
//	w(s) = sum_t omega_t N(s_0; mu_t, v) / N(s_0; 0, v),
//
// omega_t proportional to gamma^t for t < T (for gamma = 1 and large T,
// the stationary ratio with mu_inf = shift/(1 - a)). The reward is the
// first coordinate of the state.
type arChain struct {
	dim                  int
	a, tau, sigma, shift float64
}

func (c arChain) v() float64 { return (c.tau*c.tau + c.sigma*c.sigma) / (1 - c.a*c.a) }

// logNormal returns log N(x; mu, s2).
func logNormal(x, mu, s2 float64) float64 {
	return -0.5*math.Log(2*math.Pi*s2) - (x-mu)*(x-mu)/(2*s2)
}

// sample draws n episodes of T steps under the behavior policy.
func (c arChain) sample(rng *rand.Rand, n, T int) *dataset.Dataset {
	d := &dataset.Dataset{StateDim: c.dim, NumStates: 0, NumActions: 0}
	sd := math.Sqrt(c.v())
	for e := range n {
		s := make([]float64, c.dim)
		for k := range s {
			s[k] = sd * rng.NormFloat64()
		}
		steps := make([]dataset.Step, T)
		for t := range steps {
			u := make([]float64, c.dim)
			next := make([]float64, c.dim)
			lb, lt := 0.0, 0.0
			for k := range u {
				u[k] = c.tau * rng.NormFloat64()
				next[k] = c.a*s[k] + u[k] + c.sigma*rng.NormFloat64()
				lb += logNormal(u[k], 0, c.tau*c.tau)
				mu := 0.0
				if k == 0 {
					mu = c.shift
				}
				lt += logNormal(u[k], mu, c.tau*c.tau)
			}
			steps[t] = dataset.Step{
				State: -1, Obs: s, Action: -1, ActionVec: u, Reward: s[0],
				HasNext: true, NextState: -1, NextObs: next,
				LogBehavior: lb, LogTarget: lt,
			}
			s = next
		}
		d.Episodes = append(d.Episodes, dataset.Episode{ID: string(rune('a' + e%26)), Steps: steps})
	}
	return d
}

// trueRatio returns w(s) and the true value of the normalised T-step
// reward under the target policy.
func (c arChain) trueRatio(gamma float64, T int) (w func(s []float64) float64, value float64) {
	v := c.v()
	if gamma == 1 {
		mu := c.shift / (1 - c.a)
		return func(s []float64) float64 {
			return math.Exp(logNormal(s[0], mu, v) - logNormal(s[0], 0, v))
		}, mu
	}
	var omega, mus []float64
	g, tot := 1.0, 0.0
	for t := range T {
		omega = append(omega, g)
		mus = append(mus, c.shift*(1-math.Pow(c.a, float64(t)))/(1-c.a))
		value += g * mus[t]
		tot += g
		g *= gamma
	}
	for t := range omega {
		omega[t] /= tot
	}
	return func(s []float64) float64 {
		r := 0.0
		for t, o := range omega {
			r += o * math.Exp(logNormal(s[0], mus[t], v)-logNormal(s[0], 0, v))
		}
		return r
	}, value / tot
}

// pearson returns the correlation of x and y.
func pearson(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// weightedEstimate returns sum v r / sum v with v = gamma^t w(s_t) beta_t,
// and the naive gamma^t-weighted average of the logged rewards.
func weightedEstimate(d *dataset.Dataset, gamma float64, w []float64) (est, naive float64) {
	var num, den, nnum, nden float64
	k := 0
	for e := range d.Episodes {
		g := 1.0
		for t := range d.Episodes[e].Steps {
			st := &d.Episodes[e].Steps[t]
			v := g * w[k] * st.Ratio()
			num += v * st.Reward
			den += v
			nnum += g * st.Reward
			nden += g
			g *= gamma
			k++
		}
	}
	return num / den, nnum / nden
}

func TestNeuralGaussianChain(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two networks")
	}
	c := arChain{dim: 2, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	for k, tc := range []struct {
		gamma float64
		n, T  int
	}{
		{1, 20, 500},
		{0.95, 200, 100},
	} {
		rng := rand.New(rand.NewPCG(uint64(100+k), 0))
		d := c.sample(rng, tc.n, tc.T)
		var evals int
		l := Neural{MaxIter: 1500, Progress: func(iter int, loss, held float64) {
			evals++
			t.Logf("gamma %v iter %d loss %.3g held-out %.3g", tc.gamma, iter, loss, held)
		}}
		m, err := l.Fit(rng, d, tc.gamma)
		if err != nil {
			t.Fatal(err)
		}
		w, err := m.StepRatios(d)
		if err != nil {
			t.Fatal(err)
		}
		wTrue, truth := c.trueRatio(tc.gamma, tc.T)
		var tw []float64
		for e := range d.Episodes {
			for s := range d.Episodes[e].Steps {
				tw = append(tw, wTrue(d.Episodes[e].Steps[s].Obs))
			}
		}
		r := pearson(w, tw)
		est, naive := weightedEstimate(d, tc.gamma, w)
		oracle, _ := weightedEstimate(d, tc.gamma, tw)
		t.Logf("gamma %v: %d iterations (best %d), h = %.3g, Pearson %.3f, estimate %.3f, true-ratio estimate %.3f, naive %.3f, truth %.3f",
			tc.gamma, m.Iterations, m.BestIter, m.Bandwidth, r, est, oracle, naive, truth)
		if r < 0.9 {
			t.Errorf("gamma %v: Pearson correlation of learned and true ratio %.3f, want > 0.9", tc.gamma, r)
		}
		if math.Abs(est-truth) > 0.25*math.Abs(naive-truth) {
			t.Errorf("gamma %v: estimate %.3f, naive %.3f, truth %.3f: want the error below a quarter of the naive one",
				tc.gamma, est, naive, truth)
		}
		if evals == 0 {
			t.Errorf("Progress never called")
		}
	}
}

var _ = nn.Tanh
