package mdp

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/policy"
)

// Value returns the normalised T-step value of pi in m from the start
// distribution d0 (nil means m.Initial()):
//
//	R^T_pi = sum_{t<T} gamma^t E[r_t] / sum_{t<T} gamma^t,
//
// the quantity every estimator in package ope estimates (the expectation of
// the paper's R^T(tau), Section 2; gamma = 1 gives the average reward per
// step). It
// pushes d0 through P_pi T-1 times, O(T * nnz(P_pi)), and stops early once
// the distribution has converged: when ||d_{t+1} - d_t||_1 times the number
// of remaining steps is below 1e-14, every later d_u is taken equal to
// d_{t+1}; since P_pi does not expand the L1 norm, this changes the value
// by at most 1e-14 * max_s |r_pi(s)|.
//
// m must be a valid table (Check); Value does not re-check it.
// Value panics if T < 1, gamma is outside (0, 1], len(d0) differs from
// m.NumStates() or pi and m differ in the number of actions: these are
// programmer's mistakes, to be validated before calling.
func Value(m Finite, pi policy.Discrete, d0 []float64, T int, gamma float64) float64 {
	c, d0 := prepare(m, pi, d0, T, gamma)
	return c.run(d0, T, gamma, nil)
}

// Return returns the expected discounted return of pi over T steps from
// d0 (nil means m.Initial()),
//
//	G^T_pi = E[ sum_{t<T} gamma^t r_t ] = R^T_pi * sum_{t<T} gamma^t,
//
// Value without its normalisation: the number COBS and most episodic OPE
// benchmarks report as a policy's value. With a terminal state modelled as
// an absorbing state of reward 0 (sim.Episodic), it is the value of the
// episode ended by absorption or by the horizon T, whichever comes first.
// It panics on the same mistakes as Value.
func Return(m Finite, pi policy.Discrete, d0 []float64, T int, gamma float64) float64 {
	return Value(m, pi, d0, T, gamma) * discountSum(T, gamma)
}

// discountSum returns sum_{t<T} gamma^t.
func discountSum(T int, gamma float64) float64 {
	if gamma == 1 {
		return float64(T)
	}
	return -math.Expm1(float64(T)*math.Log(gamma)) / (1 - gamma)
}

// VisitationT returns the normalised T-step visitation
//
//	d^T_pi = sum_{t<T} gamma_t d_t,   gamma_t = gamma^t / sum_{u<T} gamma^u,
//
// the distribution of the state of a step drawn from T-step logs with
// weights gamma_t (for gamma = 1, the state of a uniformly drawn step).
// d0 nil means m.Initial(). It uses the same early stop as Value, with an
// L1 error of at most 1e-14, and panics on the same mistakes.
func VisitationT(m Finite, pi policy.Discrete, d0 []float64, T int, gamma float64) []float64 {
	c, d0 := prepare(m, pi, d0, T, gamma)
	visit := make([]float64, c.n)
	c.run(d0, T, gamma, visit)
	return visit
}

func prepare(m Finite, pi policy.Discrete, d0 []float64, T int, gamma float64) (*chain, []float64) {
	if T < 1 {
		panic(fmt.Sprintf("mdp: horizon %d, want >= 1", T))
	}
	if !(gamma > 0 && gamma <= 1) {
		panic(fmt.Sprintf("mdp: discount %v outside (0, 1]", gamma))
	}
	if d0 == nil {
		d0 = m.Initial()
	}
	if len(d0) != m.NumStates() {
		panic(fmt.Sprintf("mdp: start distribution of length %d, MDP has %d states", len(d0), m.NumStates()))
	}
	return newChain(m, pi), d0
}

// earlyStop is the bound on the L1 error allowed by stopping the push once
// the distribution has converged.
const earlyStop = 1e-14

// run pushes d0 through the chain for T steps and returns
// sum_t gamma_t r_pi . d_t; if visit is not nil, it also accumulates
// sum_t gamma_t d_t into it.
func (c *chain) run(d0 []float64, T int, gamma float64, visit []float64) float64 {
	z := discountSum(T, gamma)
	cur := append([]float64(nil), d0...)
	nxt := make([]float64, c.n)
	value := 0.0
	g := 1 / z // gamma_t
	for t := 0; t < T; t++ {
		value += g * c.reward(cur)
		if visit != nil {
			axpy(visit, g, cur)
		}
		if t == T-1 {
			break
		}
		c.push(nxt, cur)
		cur, nxt = nxt, cur
		g *= gamma
		remaining := T - 1 - t // steps t+1 .. T-1 still to add, cur is d_{t+1}
		if remaining > 1 && l1dist(cur, nxt)*float64(remaining) <= earlyStop {
			// d_u = d_{t+1} for u = t+1 .. T-1: add their total weight at once.
			w := g * float64(remaining)
			if gamma < 1 {
				w = g * -math.Expm1(float64(remaining)*math.Log(gamma)) / (1 - gamma)
			}
			value += w * c.reward(cur)
			if visit != nil {
				axpy(visit, w, cur)
			}
			break
		}
	}
	return value
}

// axpy sets y += a x.
func axpy(y []float64, a float64, x []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

// l1dist returns sum_i |x_i - y_i|.
func l1dist(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += math.Abs(v - y[i])
	}
	return s
}

// LongRun returns the long-run value of pi, the Long-run estimand of
// package ope: for gamma = 1 the average reward sum_s d_pi(s) r_pi(s)
// under the stationary distribution (which must be unique), for
// gamma < 1 the normalised discounted value (1-gamma) E_{d0}[V(s0)] =
// sum_s d_pi(s) r_pi(s) under the normalised discounted visitation from
// m.Initial() (Visitation). It is the limit of Value as T grows.
func LongRun(m Finite, pi policy.Discrete, gamma float64) (float64, error) {
	d, err := Visitation(m, pi, gamma)
	if err != nil {
		return 0, err
	}
	return newChain(m, pi).reward(d), nil
}
