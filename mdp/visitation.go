package mdp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/policy"
)

// DenseLimit is the largest number of states whose visitation is solved by
// a dense LU factorisation (O(k^3) time and 16 k^2 bytes; about 0.7 s and
// 64 MB for the 2000 Taxi states). Larger chains are solved iteratively.
const DenseLimit = 3000

// tolerance of the iterative solvers, in L1 norm.
const iterTol = 1e-14

// maxIter bounds the iterative solvers.
const maxIter = 1_000_000

// Visitation returns the state distribution d_pi that the paper's density
// ratio is defined with (Section 2, Eq. (dpi), and Lemma lem:fixdpidisc):
//
//   - gamma = 1: the stationary distribution of P_pi, d = d P_pi with
//     sum d = 1. It must be unique: the chain must have exactly one closed
//     communicating class, otherwise Visitation returns an error. States
//     outside that class (transient states) get exactly 0.
//   - 0 < gamma < 1: the normalised discounted visitation from m.Initial(),
//     d = (1-gamma) sum_t gamma^t d_t, the solution of
//     d = (1-gamma) d_0 + gamma d P_pi. States not reachable from the
//     support of d_0 get exactly 0.
//
// The recurrent (or reachable) states are found on the graph of P_pi, and
// the linear system restricted to them is solved by dense LU with one step
// of iterative refinement when they number at most DenseLimit, otherwise by
// power iteration (gamma = 1, on the lazy chain (I + P_pi)/2, which has the
// same stationary distribution and is aperiodic) or the Neumann series
// (gamma < 1) to an L1 accuracy of about 1e-14. Visitation returns an error
// if the dense system is numerically singular (condition number above
// 1e13, a nearly decomposable chain), if the iteration does not converge,
// or if the result's residual ||d - (1-gamma) d_0 - gamma d P_pi||_1
// exceeds 1e-10. Negative rounding noise is set to 0 and d is rescaled to
// sum to 1.
func Visitation(m Finite, pi policy.Discrete, gamma float64) ([]float64, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("mdp: discount %v outside (0, 1]", gamma)
	}
	if pi.NumActions() != m.NumActions() {
		return nil, fmt.Errorf("mdp: policy has %d actions, MDP %d", pi.NumActions(), m.NumActions())
	}
	c := newChain(m, pi)
	d0 := m.Initial()
	if len(d0) != c.n {
		return nil, fmt.Errorf("mdp: initial distribution of length %d, MDP has %d states", len(d0), c.n)
	}
	return c.visitation(d0, gamma, c.n <= DenseLimit)
}

// visitation computes d_pi on the states that can carry mass, densely or
// iteratively, and checks the residual.
func (c *chain) visitation(d0 []float64, gamma float64, dense bool) ([]float64, error) {
	var support []int
	if gamma == 1 {
		closed := c.closedClasses()
		if len(closed) != 1 {
			return nil, fmt.Errorf("mdp: stationary distribution not unique: the chain has %d closed classes (states %d and %d are in different ones)",
				len(closed), closed[0][0], closed[1][0])
		}
		support = closed[0]
	} else {
		support = c.reachable(d0)
	}
	sub := c.restrict(support)
	b := make([]float64, len(support)) // d0 on the support
	for i, s := range support {
		b[i] = d0[s]
	}
	var x []float64
	var err error
	if dense && len(support) <= DenseLimit {
		x, err = sub.solveDense(b, gamma)
	} else {
		x, err = sub.solveIter(b, gamma)
	}
	if err != nil {
		return nil, err
	}
	d := make([]float64, c.n)
	for i, s := range support {
		d[s] = x[i]
	}
	if r := c.residual(d, d0, gamma); !(r <= 1e-10) {
		return nil, fmt.Errorf("mdp: visitation residual %.3g too large (ill-conditioned chain?)", r)
	}
	return d, nil
}

// residual returns ||d - (1-gamma) d0 - gamma d P||_1 (for gamma = 1,
// ||d - d P||_1).
func (c *chain) residual(d, d0 []float64, gamma float64) float64 {
	dp := make([]float64, c.n)
	c.push(dp, d)
	r := 0.0
	for s := range d {
		r += math.Abs(d[s] - (1-gamma)*d0[s] - gamma*dp[s])
	}
	return r
}

// restrict returns the chain restricted to a closed set of states,
// renumbered 0..len(states)-1 in the given order.
func (c *chain) restrict(states []int) *chain {
	if len(states) == c.n {
		return c
	}
	index := make([]int32, c.n)
	for i := range index {
		index[i] = -1
	}
	for i, s := range states {
		index[s] = int32(i)
	}
	sub := &chain{n: len(states), start: make([]int32, len(states)+1), r: make([]float64, len(states))}
	for i, s := range states {
		sub.r[i] = c.r[s]
		for k := c.start[s]; k < c.start[s+1]; k++ {
			j := index[c.next[k]]
			if j < 0 {
				panic("mdp: restriction to a set that is not closed")
			}
			sub.next = append(sub.next, j)
			sub.prob = append(sub.prob, c.prob[k])
		}
		sub.start[i+1] = int32(len(sub.next))
	}
	return sub
}

// solveDense solves d (I - gamma P) = (1-gamma) b, with sum d = 1 replacing
// the last equation when gamma = 1, by LU on the transposed system
// (I - gamma P)^T d = (1-gamma) b, then refines once with the residual
// computed from the sparse P.
func (c *chain) solveDense(b []float64, gamma float64) ([]float64, error) {
	n := c.n
	a := mat.NewDense(n, n, nil)
	raw := a.RawMatrix()
	for i := 0; i < n; i++ {
		raw.Data[i*raw.Stride+i] = 1
	}
	for s := 0; s < n; s++ { // A[j][s] -= gamma P[s][j]
		for k := c.start[s]; k < c.start[s+1]; k++ {
			raw.Data[int(c.next[k])*raw.Stride+s] -= gamma * c.prob[k]
		}
	}
	rhs := make([]float64, n)
	for i := range rhs {
		rhs[i] = (1 - gamma) * b[i]
	}
	if gamma == 1 {
		for j := 0; j < n; j++ {
			raw.Data[(n-1)*raw.Stride+j] = 1
		}
		rhs[n-1] = 1
	}
	var lu mat.LU
	lu.Factorize(a)
	if cond := lu.Cond(); cond > 1e13 || math.IsNaN(cond) {
		return nil, fmt.Errorf("mdp: visitation system is numerically singular (condition number %.3g)", cond)
	}
	x := mat.NewVecDense(n, nil)
	if err := lu.SolveVecTo(x, false, mat.NewVecDense(n, rhs)); err != nil && !errors.As(err, new(mat.Condition)) {
		return nil, fmt.Errorf("mdp: visitation solve: %w", err)
	}
	d := x.RawVector().Data
	// One step of iterative refinement: r = rhs - A d with A applied
	// through the sparse P, then d += A^{-1} r.
	ad := make([]float64, n)
	c.push(ad, d)
	res := make([]float64, n)
	for i := range res {
		res[i] = rhs[i] - (d[i] - gamma*ad[i])
	}
	if gamma == 1 {
		sum := 0.0
		for _, v := range d {
			sum += v
		}
		res[n-1] = 1 - sum
	}
	corr := mat.NewVecDense(n, nil)
	if err := lu.SolveVecTo(corr, false, mat.NewVecDense(n, res)); err == nil || errors.As(err, new(mat.Condition)) {
		for i, v := range corr.RawVector().Data {
			d[i] += v
		}
	}
	return normalize(d), nil
}

// solveIter solves the same system by fixed-point iteration: for gamma = 1
// the lazy power iteration d <- (d + d P)/2 from the uniform distribution,
// stopped when the geometric estimate of the remaining error,
// delta_k r/(1-r) with delta_k = ||d_{k+1} - d_k||_1 and r the observed
// rate delta_k/delta_{k-1}, is below iterTol; for gamma < 1 the Neumann
// iteration d <- (1-gamma) b + gamma d P from b, whose error is at most
// delta_k gamma/(1-gamma).
func (c *chain) solveIter(b []float64, gamma float64) ([]float64, error) {
	n := c.n
	d := make([]float64, n)
	if gamma == 1 {
		for i := range d {
			d[i] = 1 / float64(n)
		}
	} else {
		copy(d, b)
	}
	dp := make([]float64, n)
	prev := math.Inf(1)
	for k := 0; k < maxIter; k++ {
		c.push(dp, d)
		delta := 0.0
		for i := range d {
			var v float64
			if gamma == 1 {
				v = 0.5 * (d[i] + dp[i])
			} else {
				v = (1-gamma)*b[i] + gamma*dp[i]
			}
			delta += math.Abs(v - d[i])
			d[i] = v
		}
		var bound float64
		if gamma == 1 {
			r := delta / prev
			bound = math.Inf(1)
			if k >= 10 && r < 1 {
				bound = delta * r / (1 - r)
			}
			prev = delta
		} else {
			bound = delta * gamma / (1 - gamma)
		}
		if bound <= iterTol || delta == 0 {
			return normalize(d), nil
		}
	}
	return nil, fmt.Errorf("mdp: visitation did not converge in %d iterations", maxIter)
}

// normalize sets negative rounding noise to 0 and rescales d to sum to 1.
func normalize(d []float64) []float64 {
	sum := 0.0
	for i, v := range d {
		if v < 0 {
			d[i] = 0
			continue
		}
		sum += v
	}
	for i := range d {
		d[i] /= sum
	}
	return d
}

// Ratio returns the stationary density ratio of the paper's Section 3,
//
//	w_{pi/pi0}(s) = d_pi(s) / d_pi0(s),
//
// with d_pi and d_pi0 from Visitation(m, ., gamma). Where d_pi0(s) = 0 the
// ratio is undefined and Ratio returns 0 there; if d_pi puts mass on such
// states, pi is not absolutely continuous w.r.t. pi0's visitation and no
// ratio-based estimator can be consistent (the mass d_pi puts there is
// 1 - sum_s d_pi0(s) w(s)).
func Ratio(m Finite, pi, pi0 policy.Discrete, gamma float64) ([]float64, error) {
	d, err := Visitation(m, pi, gamma)
	if err != nil {
		return nil, fmt.Errorf("mdp: ratio: target: %w", err)
	}
	d0, err := Visitation(m, pi0, gamma)
	if err != nil {
		return nil, fmt.Errorf("mdp: ratio: behavior: %w", err)
	}
	w := make([]float64, len(d))
	for s := range w {
		if d0[s] > 0 {
			w[s] = d[s] / d0[s]
		}
	}
	return w, nil
}
