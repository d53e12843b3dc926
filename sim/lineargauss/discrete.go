package lineargauss

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
)

// Discrete is the discrete-action variant of the 1-d system: the action
// a in 0..len(Actions)-1 pushes the state by B Actions[a],
//
//	s_{t+1} = A s_t + B u_{a_t} + Sigma w_t,   w_t ~ N(0, 1),   s_0 ~ N(InitMean, InitSD^2),
//	r(s, a) = -s^2 - Cost u_a^2,
//
// and a policy is a softmax of logits linear in the state (Softmax). The
// states' distribution under a policy is no longer Gaussian (the push
// depends on the state through the policy), so the truth is computed by
// quadrature instead of in closed form (LongRun): to about 1e-12 on the
// default grid, as the test of two grids shows.
type Discrete struct {
	A, B, Sigma      float64
	Actions          []float64
	InitMean, InitSD float64
	Cost             float64
	// Grid sets the quadrature: GridHalfWidth L and GridPoints N (odd)
	// of the trapezoid rule on [-L, L]; 0 means 10 and 1001.
	GridHalfWidth float64
	GridPoints    int
}

// Softmax is a policy over the actions of a Discrete system:
// pi(a|s) proportional to exp(K[a] s + C[a]).
type Softmax struct {
	K, C []float64
}

// Probs writes pi(.|s) to dst.
func (p Softmax) Probs(dst []float64, s float64) {
	m := math.Inf(-1)
	for a := range dst {
		dst[a] = p.K[a]*s + p.C[a]
		m = math.Max(m, dst[a])
	}
	sum := 0.0
	for a, v := range dst {
		dst[a] = math.Exp(v - m)
		sum += dst[a]
	}
	for a := range dst {
		dst[a] /= sum
	}
}

// DiscreteProblem returns the default discrete-action problem: A = 0.8,
// B = 0.5, Sigma = 0.5, pushes -1, 0, 1, s_0 ~ N(0, 1), Cost 0.1; the
// target steers towards 0 (logits -2 u s), the behavior drifts outwards
// (logits 0.5 u s).
func DiscreteProblem() (sys *Discrete, target, behavior Softmax) {
	sys = &Discrete{A: 0.8, B: 0.5, Sigma: 0.5, Actions: []float64{-1, 0, 1}, InitSD: 1, Cost: 0.1}
	target = Softmax{K: []float64{2, 0, -2}, C: make([]float64, 3)}
	behavior = Softmax{K: []float64{-0.5, 0, 0.5}, C: make([]float64, 3)}
	return sys, target, behavior
}

// Reward returns r(s, a).
func (sys *Discrete) Reward(s float64, a int) float64 {
	u := sys.Actions[a]
	return -s*s - sys.Cost*u*u
}

// Sample logs n episodes of T steps under behavior, recording the
// target's whole action distribution at every state (target_prob_k and,
// after the last step, next_target_prob_k).
func (sys *Discrete) Sample(rng *rand.Rand, behavior, target Softmax, n, T int) (*dataset.Dataset, error) {
	nA := len(sys.Actions)
	if len(behavior.K) != nA || len(behavior.C) != nA || len(target.K) != nA || len(target.C) != nA {
		return nil, fmt.Errorf("lineargauss: policies must have %d actions", nA)
	}
	pb := make([]float64, nA)
	eps := make([]dataset.Episode, n)
	for i := range eps {
		s := sys.InitMean + sys.InitSD*rng.NormFloat64()
		steps := make([]dataset.Step, T)
		for t := range steps {
			pt := make([]float64, nA)
			target.Probs(pt, s)
			behavior.Probs(pb, s)
			u, a := rng.Float64(), nA-1
			for k, acc := 0, 0.0; k < nA; k++ {
				if acc += pb[k]; u < acc {
					a = k
					break
				}
			}
			next := sys.A*s + sys.B*sys.Actions[a] + sys.Sigma*rng.NormFloat64()
			steps[t] = dataset.Step{Obs: []float64{s}, Action: a, Reward: sys.Reward(s, a), HasNext: true,
				NextObs: []float64{next}, LogBehavior: math.Log(pb[a]), LogTarget: math.Log(pt[a]), TargetProbs: pt}
			s = next
		}
		pn := make([]float64, nA)
		target.Probs(pn, s)
		steps[T-1].NextTargetProbs = pn
		eps[i] = dataset.Episode{ID: fmt.Sprint(i), Steps: steps}
	}
	return dataset.New(0, nA, eps)
}

// grid returns the quadrature nodes and the trapezoid weight.
func (sys *Discrete) grid() (x []float64, h float64) {
	L, N := sys.GridHalfWidth, sys.GridPoints
	if L == 0 {
		L = 10
	}
	if N == 0 {
		N = 1001
	}
	h = 2 * L / float64(N-1)
	x = make([]float64, N)
	for i := range x {
		x[i] = -L + float64(i)*h
	}
	return x, h
}

// Visitation returns the quadrature nodes and the density of the
// target's state visitation at them: stationary for gamma = 1, the
// normalised discounted visitation from s_0 ~ N(InitMean, InitSD^2)
// otherwise, the solution of
//
//	d(y) = (1 - gamma) d0(y) + gamma int d(x) sum_a pi(a|x) N(y; A x + B u_a, Sigma^2) dx
//
// (for gamma = 1 without the start term and with int d = 1) by the
// trapezoid rule on the grid (a Nystrom discretisation: a dense linear
// solve of GridPoints unknowns).
func (sys *Discrete) Visitation(pi Softmax, gamma float64) (x, d []float64, err error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, nil, fmt.Errorf("lineargauss: discount %v outside (0, 1]", gamma)
	}
	x, h := sys.grid()
	N, nA := len(x), len(sys.Actions)
	// M = I - gamma h K^T, K(i, j) = sum_a pi(a|x_i) N(x_j; A x_i + B u_a, Sigma^2).
	m := mat.NewDense(N, N, nil)
	p := make([]float64, nA)
	norm := 1 / (sys.Sigma * math.Sqrt(2*math.Pi))
	for i, xi := range x {
		pi.Probs(p, xi)
		for j, xj := range x {
			k := 0.0
			for a, pa := range p {
				z := (xj - sys.A*xi - sys.B*sys.Actions[a]) / sys.Sigma
				k += pa * norm * math.Exp(-z*z/2)
			}
			m.Set(j, i, -gamma*h*k)
		}
	}
	b := make([]float64, N)
	for j, xj := range x {
		m.Set(j, j, m.At(j, j)+1)
		z := (xj - sys.InitMean) / sys.InitSD
		b[j] = (1 - gamma) * math.Exp(-z*z/2) / (sys.InitSD * math.Sqrt(2*math.Pi))
	}
	if gamma == 1 { // replace the last equation by int d = 1
		for i := range N {
			m.Set(N-1, i, h)
		}
		b[N-1] = 1
	}
	var v mat.VecDense
	if err := v.SolveVec(m, mat.NewVecDense(N, b)); err != nil {
		return nil, nil, fmt.Errorf("lineargauss: visitation: %w", err)
	}
	return x, v.RawVector().Data, nil
}

// LongRun returns the target's long-run value by quadrature: the average
// reward (gamma = 1) or (1 - gamma) E_{s0}[V(s0)] (gamma < 1), both
// int d(x) sum_a pi(a|x) r(x, a) dx with d the Visitation.
func (sys *Discrete) LongRun(pi Softmax, gamma float64) (float64, error) {
	x, d, err := sys.Visitation(pi, gamma)
	if err != nil {
		return 0, err
	}
	_, h := sys.grid()
	p := make([]float64, len(sys.Actions))
	v := 0.0
	for i, xi := range x {
		pi.Probs(p, xi)
		for a, pa := range p {
			v += h * d[i] * pa * sys.Reward(xi, a)
		}
	}
	if math.IsNaN(v) {
		return 0, errors.New("lineargauss: the quadrature gave NaN")
	}
	return v, nil
}
