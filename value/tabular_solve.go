package value

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/internal/scc"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
)

// chain is the Markov chain P_pi of a policy in a tabular MDP restricted
// to a closed set of states, renumbered 0..n-1, stored row-wise (CSR):
// the successors of state i are next[start[i]:start[i+1]] with
// probabilities prob[...]; r[i] is the expected reward r_pi(i).
type chain struct {
	n     int
	start []int32
	next  []int32
	prob  []float64
	r     []float64
	self  []float64 // P_pi(i|i), for the Jacobi preconditioner
}

// newChain builds P_pi and r_pi on the states of idx (idx[s] is the
// compact index of state s, -1 outside the set), merging the outcomes of
// all actions that lead to the same next state. A state with restart[i]
// set takes the row restartRow instead of its outcomes (its reward stays
// r_pi). It returns an error if an outcome leaves the set.
func newChain(m mdp.Finite, pi policy.Discrete, states []int, idx []int32, restart []bool, restartRow []float64) (*chain, error) {
	n, nA := len(states), m.NumActions()
	c := &chain{n: n, start: make([]int32, n+1), r: make([]float64, n), self: make([]float64, n)}
	acc := make([]float64, n) // scratch row, zero between states
	seen := make([]bool, n)
	var touched []int32
	for i, s := range states {
		r := 0.0
		for a := range nA {
			p := pi.Prob(s, a)
			if p == 0 {
				continue
			}
			for _, o := range m.Outcomes(s, a) {
				q := p * o.Prob
				if q == 0 {
					continue
				}
				r += q * o.Reward
				if restart != nil && restart[i] {
					continue
				}
				j := idx[o.Next]
				if j < 0 {
					return nil, fmt.Errorf("state %d action %d leads to state %d, outside the states solved for", s, a, o.Next)
				}
				if !seen[j] {
					seen[j] = true
					touched = append(touched, j)
				}
				acc[j] += q
			}
		}
		c.r[i] = r
		if restart != nil && restart[i] {
			for j, q := range restartRow {
				if q != 0 {
					c.next = append(c.next, int32(j))
					c.prob = append(c.prob, q)
				}
			}
		} else {
			for _, j := range touched {
				c.next = append(c.next, j)
				c.prob = append(c.prob, acc[j])
				acc[j], seen[j] = 0, false
			}
			touched = touched[:0]
		}
		for k := int(c.start[i]); k < len(c.next); k++ {
			if int(c.next[k]) == i {
				c.self[i] = c.prob[k]
			}
		}
		c.start[i+1] = int32(len(c.next))
	}
	return c, nil
}

// mulP sets dst = P x (dst is overwritten).
func (c *chain) mulP(dst, x []float64) {
	for i := range c.n {
		lo, hi := c.start[i], c.start[i+1]
		next, prob := c.next[lo:hi], c.prob[lo:hi]
		sum := 0.0
		for k, j := range next {
			sum += prob[k] * x[j]
		}
		dst[i] = sum
	}
}

// Solver settings: the relative residual ||b - A x||_2 / ||b||_2 each
// block solve must reach, the Krylov dimension between restarts, the cap
// on the Krylov steps of one solve, the largest block solved by dense LU
// directly and the largest solved by dense LU when GMRES fails.
const (
	solveTol     = 1e-13
	gmresRestart = 40
	gmresMaxIter = 3000
	denseBlock   = 200
	denseLimit   = 3000
)

// solveDiscounted solves (I - gamma P_pi) v = r_pi, Eq. (1) of Tabular's
// documentation, block by block (blocks, solveBlock).
func (c *chain) solveDiscounted(gamma float64) (v []float64, iters int, res float64, err error) {
	v = make([]float64, c.n)
	comp, members := c.blocks()
	for k := range members {
		it, err := c.solveBlock(v, comp, k, members[k], gamma, c.r, 0, nil)
		iters += it
		if err != nil {
			return nil, iters, 0, err
		}
	}
	return v, iters, c.residual(v, gamma, 0), nil
}

// solveDifferential solves the Poisson equation (I - P_pi) v = r_pi - rho 1
// with the normalisation norm . v = 0 (norm a distribution) on a chain
// with one closed class R (the caller checks). On R it solves the
// nonsingular system
//
//	(I - P_RR + 1 u^T) h = r_R,   u = norm on R, rescaled to sum to 1 (uniform if norm(R) = 0),
//
// then rho = u . h and v_R = h - rho 1: multiplying the system by the
// stationary distribution d of P_RR (d P_RR = d, d . 1 = 1) gives
// u . h = d . r_R = rho, so (I - P_RR) h = r_R - rho 1. The matrix is
// nonsingular: if it maps x to 0, the same product gives u . x = 0, so
// x = P_RR x, a harmonic vector of an irreducible chain, is constant, and
// u . x = 0 makes it 0. The transient blocks follow, (I - P_KK) v_K =
// r_K - rho 1 + P_K,out v_out, and a last shift by norm . v gives the
// normalisation (a constant solves (I - P_pi) v = 0).
func (c *chain) solveDifferential(norm []float64) (v []float64, rho float64, iters int, res float64, err error) {
	v = make([]float64, c.n)
	comp, members := c.blocks()
	// R is the closed component: the first in Tarjan's order, since
	// every other component leads to it.
	R := members[0]
	u := make([]float64, len(R))
	sum := 0.0
	for i, s := range R {
		u[i] = norm[s]
		sum += u[i]
	}
	for i := range u {
		if sum > 0 {
			u[i] /= sum
		} else {
			u[i] = 1 / float64(len(R))
		}
	}
	it, err := c.solveBlock(v, comp, 0, R, 1, c.r, 0, u)
	iters += it
	if err != nil {
		return nil, 0, iters, 0, err
	}
	for i, s := range R {
		rho += u[i] * v[s]
	}
	for _, s := range R {
		v[s] -= rho
	}
	for k := 1; k < len(members); k++ {
		it, err := c.solveBlock(v, comp, k, members[k], 1, c.r, rho, nil)
		iters += it
		if err != nil {
			return nil, 0, iters, 0, err
		}
	}
	shift := floats.Dot(norm, v)
	for i := range v {
		v[i] -= shift
	}
	return v, rho, iters, c.residual(v, 1, rho), nil
}

// residual returns ||r - rho 1 - (I - gamma P) v||_2 / ||r - rho 1||_2.
func (c *chain) residual(v []float64, gamma, rho float64) float64 {
	pv := make([]float64, c.n)
	c.mulP(pv, v)
	var num, den float64
	for i := range v {
		b := c.r[i] - rho
		e := b - (v[i] - gamma*pv[i])
		num += e * e
		den += b * b
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// blocks returns the strongly connected components of the chain's graph:
// comp[i] is the component of state i and members[k] the states of
// component k, in Tarjan's completion order, so that every transition
// between components leads to an earlier one. Solving the components in
// that order makes (I - gamma P) block triangular: each block sees the
// values of the states it leads to already solved.
//
// Why blocks: sparse logs give the empirical chain many small closed or
// nearly closed components (a state that loops to itself, two states that
// lead only to each other), each adding an eigenvalue near 1 - gamma to
// I - gamma P; restarted GMRES on the whole system stalls on dozens of
// them (Taxi, 20 episodes of 100 steps, gamma = 0.999). Per block, the
// small ones are solved exactly by LU and the large one is left with one
// such eigenvalue.
func (c *chain) blocks() (comp []int, members [][]int) {
	comp, ncomp := c.scc()
	start := make([]int, ncomp+1)
	for _, k := range comp {
		start[k+1]++
	}
	for k := range ncomp {
		start[k+1] += start[k]
	}
	flat := make([]int, c.n)
	pos := append([]int(nil), start[:ncomp]...)
	for i, k := range comp {
		flat[pos[k]] = i
		pos[k]++
	}
	members = make([][]int, ncomp)
	for k := range members {
		members[k] = flat[start[k]:start[k+1]:start[k+1]]
	}
	return comp, members
}

// solveBlock solves, for the states K of component k,
//
//	(I - gamma P_KK + 1 u^T) x = r_K - rho 1 + gamma P_K,out v_out
//
// (no rank-one term if u is nil), with v_out the values already in v of
// the states K leads to outside itself, and stores x in v. A block of one
// state is solved by division, one of at most denseBlock states by dense
// LU, a larger one by GMRES with the Jacobi preconditioner (to a relative
// residual of solveTol; deflated, solveDeflated, if u is nil), falling
// back to dense LU if GMRES fails on a block of at most denseLimit
// states. It returns the GMRES steps taken.
func (c *chain) solveBlock(v []float64, comp []int, k int, K []int, gamma float64, r []float64, rho float64, u []float64) (int, error) {
	m := len(K)
	local := make(map[int]int32, m)
	for i, s := range K {
		local[s] = int32(i)
	}
	// The block's rows (CSR, local indices) and right-hand side.
	sub := &chain{n: m, start: make([]int32, m+1), r: make([]float64, m), self: make([]float64, m)}
	closed := true
	for i, s := range K {
		b := r[s] - rho
		for q := c.start[s]; q < c.start[s+1]; q++ {
			j := int(c.next[q])
			if comp[j] == k {
				sub.next = append(sub.next, local[j])
				sub.prob = append(sub.prob, c.prob[q])
				if j == s {
					sub.self[i] = c.prob[q]
				}
			} else {
				closed = false
				b += gamma * c.prob[q] * v[j]
			}
		}
		sub.r[i] = b
		sub.start[i+1] = int32(len(sub.next))
	}
	x := make([]float64, m)
	var iters int
	var err error
	switch {
	case m == 1:
		a := 1 - gamma*sub.self[0]
		if u != nil {
			a += u[0]
		}
		if a == 0 {
			return 0, fmt.Errorf("state %d: singular equation", K[0])
		}
		x[0] = sub.r[0] / a
	case m <= denseBlock:
		err = sub.solveDense(x, gamma, u)
	case u != nil:
		iters, err = sub.solveGMRES(x, sub.r, gamma, u)
	default:
		iters, err = sub.solveDeflated(x, gamma, closed)
	}
	if err != nil && m > denseBlock && m <= denseLimit {
		clear(x)
		err = sub.solveDense(x, gamma, u)
	}
	if err != nil {
		return iters, err
	}
	for i, s := range K {
		v[s] = x[i]
	}
	return iters, nil
}

// solveDeflated solves A x = r, A = I - gamma P (gamma < 1, or P leaking:
// A is nonsingular), by GMRES on the deflated matrix B = A + gamma 1 u^T,
// u uniform, and the Sherman-Morrison formula
//
//	x = y + gamma (u . y) / (1 - gamma u . z) z,   B y = r,   B z = 1.
//
// Why: for gamma near 1 the near-constant vector is an eigenvector of A
// with eigenvalue about 1 - gamma, which restarted GMRES resolves only
// slowly (one long Taxi episode, gamma = 0.9999: 20,000 steps); B maps 1
// to 1 when P is stochastic, so the eigenvalue moves to 1 (z = 1 and the
// formula reads x = y + gamma (u . y) / (1 - gamma) 1, one solve), and
// nearly so when P leaks a little. B is nonsingular: B x = 0 with
// u . x != 0 would give x = -gamma (u . x) A^-1 1 and so
// 1 = -gamma u . A^-1 1 < 0, since A^-1 1 = sum_k (gamma P)^k 1 >= 0.
func (c *chain) solveDeflated(x []float64, gamma float64, closed bool) (int, error) {
	u := make([]float64, c.n)
	for i := range u {
		u[i] = gamma / float64(c.n) // gamma u, the rank-one term of B
	}
	iters, err := c.solveGMRES(x, c.r, gamma, u)
	if err != nil {
		return iters, err
	}
	uy := floats.Sum(x) / float64(c.n)
	if closed {
		floats.AddConst(gamma*uy/(1-gamma), x)
		return iters, nil
	}
	z := make([]float64, c.n)
	ones := make([]float64, c.n)
	for i := range ones {
		ones[i] = 1
	}
	it, err := c.solveGMRES(z, ones, gamma, u)
	iters += it
	if err != nil {
		return iters, err
	}
	uz := floats.Sum(z) / float64(c.n)
	floats.AddScaled(x, gamma*uy/(1-gamma*uz), z)
	return iters, nil
}

// solveGMRES solves (I - gamma P + 1 u^T) x = b (u may be nil) by GMRES.
func (c *chain) solveGMRES(x, b []float64, gamma float64, u []float64) (int, error) {
	diag := make([]float64, c.n)
	for i := range diag {
		diag[i] = 1 - gamma*c.self[i]
		if u != nil {
			diag[i] += u[i]
		}
		if !(diag[i] > 1e-12) {
			diag[i] = 1
		}
	}
	apply := func(dst, x []float64) {
		c.mulP(dst, x)
		ux := 0.0
		if u != nil {
			ux = floats.Dot(u, x)
		}
		for i, xi := range x {
			dst[i] = xi - gamma*dst[i] + ux
		}
	}
	iters, _, err := kernelloss.GMRES(apply, diag, b, x, solveTol, gmresRestart, gmresMaxIter)
	return iters, err
}

// solveDense solves (I - gamma P + 1 u^T) x = r (u may be nil) by LU
// with partial pivoting and one step of iterative refinement, as
// mdp.Visitation does. It returns an error if the matrix is
// numerically singular (condition number above 1e13).
func (c *chain) solveDense(x []float64, gamma float64, u []float64) error {
	n := c.n
	a := mat.NewDense(n, n, nil)
	raw := a.RawMatrix()
	for i := range n {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		row[i] = 1
		for q := c.start[i]; q < c.start[i+1]; q++ {
			row[c.next[q]] -= gamma * c.prob[q]
		}
		if u != nil {
			floats.Add(row, u)
		}
	}
	var lu mat.LU
	lu.Factorize(a)
	if cond := lu.Cond(); cond > 1e13 || math.IsNaN(cond) {
		return fmt.Errorf("a block of %d states is numerically singular (condition number %.3g)", n, cond)
	}
	xv := mat.NewVecDense(n, x)
	if err := lu.SolveVecTo(xv, false, mat.NewVecDense(n, c.r)); err != nil && !errors.As(err, new(mat.Condition)) {
		return err
	}
	res := mat.NewVecDense(n, nil)
	res.MulVec(a, xv)
	res.SubVec(mat.NewVecDense(n, c.r), res)
	var corr mat.VecDense
	if err := lu.SolveVecTo(&corr, false, res); err == nil || errors.As(err, new(mat.Condition)) {
		xv.AddVec(xv, &corr)
	}
	return nil
}

// closedClasses returns the closed communicating classes of the chain
// (the strongly connected components with no edge leaving them), each
// given by its smallest state, in increasing order. P_pi has a unique
// stationary distribution, and the Poisson equation a unique rho, exactly
// when there is one.
func (c *chain) closedClasses() []int {
	comp, ncomp := c.scc()
	leaves := make([]bool, ncomp)
	for i := range c.n {
		for k := c.start[i]; k < c.start[i+1]; k++ {
			if comp[c.next[k]] != comp[i] {
				leaves[comp[i]] = true
			}
		}
	}
	done := make([]bool, ncomp)
	var out []int
	for i := range c.n {
		if k := comp[i]; !leaves[k] && !done[k] {
			done[k] = true
			out = append(out, i)
		}
	}
	return out
}

// minorClasses returns the states of the closed classes of the chain
// other than the principal one, and their number. The principal class is
// the strongly connected component with the largest weight under norm
// (ties: the one with the smallest state); it need not be closed itself
// (it may leak into a trap), but no closed class other than it is kept.
// With the returned states restarting from norm, the chain has one closed
// class: the principal component has positive weight, so every restart
// can reach it.
func (c *chain) minorClasses(norm []float64) (restart []bool, k int) {
	comp, ncomp := c.scc()
	weight := make([]float64, ncomp)
	first := make([]int, ncomp) // smallest state of each component
	for i := range first {
		first[i] = c.n
	}
	closed := make([]bool, ncomp)
	for i := range closed {
		closed[i] = true
	}
	for i := range c.n {
		weight[comp[i]] += norm[i]
		first[comp[i]] = min(first[comp[i]], i)
		for k := c.start[i]; k < c.start[i+1]; k++ {
			if comp[c.next[k]] != comp[i] {
				closed[comp[i]] = false
			}
		}
	}
	star := 0
	for j := range ncomp {
		if weight[j] > weight[star] || weight[j] == weight[star] && first[j] < first[star] {
			star = j
		}
	}
	restart = make([]bool, c.n)
	for i := range c.n {
		if j := comp[i]; closed[j] && j != star {
			restart[i] = true
			k++
		}
	}
	return restart, k
}

// scc labels the strongly connected components of the chain's graph.
func (c *chain) scc() (comp []int, ncomp int) { return scc.Tarjan(c.n, c.start, c.next) }
