package pointmass

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
)

// System is the point mass (see the package doc).
type System struct {
	Dt, VMax       float64
	SigmaV, SigmaX float64
	Accel          []float64
	CostV, CostU   float64
	InitX, InitV   float64
}

// Controller is a softmax policy around a linear controller:
// pi(a|s) proportional to exp(-Beta (Accel[a] - u*(s))^2),
// u*(s) = -(KX x + KV v).
type Controller struct {
	KX, KV, Beta float64
}

// Problem returns the default system, target and behavior of the package
// doc: Dt 0.2, VMax 0.5, SigmaV 0.1, SigmaX 0.05, accelerations -2..2,
// CostV 0.1, CostU 0.01, x_0 ~ N(0, 1.5^2), v_0 ~ N(0, 0.25^2).
func Problem() (sys *System, target, behavior Controller) {
	sys = &System{Dt: 0.2, VMax: 0.5, SigmaV: 0.1, SigmaX: 0.05, Accel: []float64{-2, -1, 0, 1, 2},
		CostV: 0.1, CostU: 0.01, InitX: 1.5, InitV: 0.25}
	return sys, Controller{KX: 1, KV: 1.5, Beta: 2}, Controller{KX: 0.5, KV: 1, Beta: 0.7}
}

// NumActions returns the number of accelerations.
func (sys *System) NumActions() int { return len(sys.Accel) }

// Probs writes pi(.|x, v) to dst (len(sys.Accel) entries).
func (sys *System) Probs(c Controller, dst []float64, x, v float64) {
	u := -(c.KX*x + c.KV*v)
	m := math.Inf(-1)
	for a, acc := range sys.Accel {
		d := acc - u
		dst[a] = -c.Beta * d * d
		m = math.Max(m, dst[a])
	}
	sum := 0.0
	for a, l := range dst {
		dst[a] = math.Exp(l - m)
		sum += dst[a]
	}
	for a := range dst {
		dst[a] /= sum
	}
}

// Reward returns r(s, a).
func (sys *System) Reward(x, v float64, a int) float64 {
	u := sys.Accel[a]
	return -(x*x + sys.CostV*v*v + sys.CostU*u*u)
}

// Step draws the next state after action a.
func (sys *System) Step(rng *rand.Rand, x, v float64, a int) (nx, nv float64) {
	nv = math.Max(-sys.VMax, math.Min(sys.VMax, v+sys.Dt*sys.Accel[a]+sys.SigmaV*rng.NormFloat64()))
	nx = x + sys.Dt*nv + sys.SigmaX*rng.NormFloat64()
	return nx, nv
}

// Reset draws a start state.
func (sys *System) Reset(rng *rand.Rand) (x, v float64) {
	x = sys.InitX * rng.NormFloat64()
	v = math.Max(-sys.VMax, math.Min(sys.VMax, sys.InitV*rng.NormFloat64()))
	return x, v
}

// draw draws an action from the distribution p.
func draw(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	acc := 0.0
	for a, pa := range p {
		if acc += pa; u < acc {
			return a
		}
	}
	return len(p) - 1
}

// Sample logs n episodes of T steps under behavior, recording the
// behavior's and the target's log-probabilities of the logged action and
// the target's whole action distribution at every state (target_prob_k
// and, after the last step, next_target_prob_k). The random numbers are
// drawn from rng in a fixed order, so the same seed gives the same log.
func (sys *System) Sample(rng *rand.Rand, behavior, target Controller, n, T int) (*dataset.Dataset, error) {
	if n <= 0 || T <= 0 {
		return nil, fmt.Errorf("pointmass: %d episodes of %d steps, want both positive", n, T)
	}
	nA := sys.NumActions()
	pb := make([]float64, nA)
	eps := make([]dataset.Episode, n)
	for i := range eps {
		x, v := sys.Reset(rng)
		steps := make([]dataset.Step, T)
		for t := range steps {
			pt := make([]float64, nA)
			sys.Probs(target, pt, x, v)
			sys.Probs(behavior, pb, x, v)
			a := draw(rng, pb)
			nx, nv := sys.Step(rng, x, v, a)
			steps[t] = dataset.Step{Obs: []float64{x, v}, Action: a, Reward: sys.Reward(x, v, a), HasNext: true,
				NextObs: []float64{nx, nv}, LogBehavior: math.Log(pb[a]), LogTarget: math.Log(pt[a]), TargetProbs: pt}
			x, v = nx, nv
		}
		pn := make([]float64, nA)
		sys.Probs(target, pn, x, v)
		steps[T-1].NextTargetProbs = pn
		eps[i] = dataset.Episode{ID: fmt.Sprint(i), Steps: steps}
	}
	return dataset.New(0, nA, eps)
}

// Rollouts is how Truth simulates: Episodes rollouts of the target with
// a generator seeded by Seed; for gamma = 1 each runs Burn steps before
// the Len steps whose rewards it averages.
type Rollouts struct {
	Episodes  int
	Burn, Len int
	Seed      uint64
}

// Truth returns the target's long-run value under discount gamma by
// Monte Carlo (see the package doc) and its standard error over the
// rollouts: for gamma < 1, (1 - gamma) sum_t gamma^t r_t from s_0 ~ d_0,
// truncated at the first t with gamma^t < 1e-9 (Burn and Len unused);
// for gamma = 1 the mean reward over steps Burn..Burn+Len-1.
func (sys *System) Truth(target Controller, gamma float64, r Rollouts) (mean, se float64, err error) {
	if !(gamma > 0 && gamma <= 1) {
		return 0, 0, fmt.Errorf("pointmass: discount %v outside (0, 1]", gamma)
	}
	if r.Episodes < 2 || (gamma == 1 && (r.Len <= 0 || r.Burn < 0)) {
		return 0, 0, fmt.Errorf("pointmass: truth needs at least 2 rollouts (and for gamma = 1 Len > 0, Burn >= 0): %+v", r)
	}
	rng := rand.New(rand.NewPCG(r.Seed, 0x706f696e746d6173)) // "pointmas"
	p := make([]float64, sys.NumActions())
	H := r.Burn + r.Len
	if gamma < 1 {
		H = int(math.Ceil(math.Log(1e-9)/math.Log(gamma))) + 1
	}
	var sum, sum2 float64
	for range r.Episodes {
		x, v := sys.Reset(rng)
		s, g := 0.0, 1.0
		for t := range H {
			sys.Probs(target, p, x, v)
			a := draw(rng, p)
			rew := sys.Reward(x, v, a)
			switch {
			case gamma < 1:
				s += (1 - gamma) * g * rew
				g *= gamma
			case t >= r.Burn:
				s += rew / float64(r.Len)
			}
			x, v = sys.Step(rng, x, v, a)
		}
		sum += s
		sum2 += s * s
	}
	m := float64(r.Episodes)
	mean = sum / m
	se = math.Sqrt(math.Max(0, sum2/m-mean*mean) / (m - 1))
	return mean, se, nil
}

// The truths of the default Problem: Truth over 100,000 rollouts with
// seed 1 (gamma = 1: Burn 500, Len 2000), with their standard errors.
const (
	TruthDiscounted   = -0.249287 // gamma = 0.99
	TruthDiscountedSE = 0.001225
	TruthAverage      = -0.054219 // gamma = 1
	TruthAverageSE    = 0.000014
)

// TruthRollouts are the rollouts of the constants above.
var TruthRollouts = Rollouts{Episodes: 100000, Burn: 500, Len: 2000, Seed: 1}
