package value

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/ihope-ope/ihope/env"
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
func newChain(m env.Tabular, pi policy.Discrete, states []int, idx []int32, restart []bool, restartRow []float64) (*chain, error) {
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

// Solver settings: the relative residual ||b - A x||_2 / ||b||_2 the
// solves must reach, the Krylov dimension between restarts and the cap on
// the total number of Krylov steps.
const (
	solveTol     = 1e-13
	gmresRestart = 40
	gmresMaxIter = 20000
)

// solveDiscounted solves (I - gamma P_pi) v = r_pi, Eq. (1) of Tabular's
// documentation, by GMRES.
func (c *chain) solveDiscounted(gamma float64) (v []float64, iters int, res float64, err error) {
	diag := make([]float64, c.n)
	for i := range diag {
		diag[i] = 1 - gamma*c.self[i]
	}
	apply := func(dst, x []float64) {
		c.mulP(dst, x)
		for i, xi := range x {
			dst[i] = xi - gamma*dst[i]
		}
	}
	v = make([]float64, c.n)
	iters, res, err = gmres(apply, diag, c.r, v)
	return v, iters, res, err
}

// solveDifferential solves the Poisson equation (I - P_pi) v = r_pi - rho 1
// with the normalisation norm . v = 0 (norm a distribution) as one
// nonsingular system,
//
//	(I - P_pi + 1 norm^T) h = r_pi,
//
// then rho = norm . h and v = h - rho 1: multiplying the system by the
// stationary distribution d of P_pi (d P_pi = d, d . 1 = 1) gives
// norm . h = d . r_pi = rho, so (I - P_pi) h = r_pi - rho 1, and
// norm . v = rho - rho = 0. The matrix is nonsingular when P_pi has one
// closed class (the caller checks): if it maps x to 0, the same product
// gives norm . x = 0, so x = P_pi x; a harmonic vector of a chain with one
// closed class is constant, and norm . x = 0 makes the constant 0.
func (c *chain) solveDifferential(norm []float64) (v []float64, rho float64, iters int, res float64, err error) {
	diag := make([]float64, c.n)
	for i := range diag {
		diag[i] = 1 - c.self[i] + norm[i]
		if !(diag[i] > 1e-12) {
			diag[i] = 1 // a state that only loops to itself: no scaling
		}
	}
	apply := func(dst, x []float64) {
		c.mulP(dst, x)
		nx := floats.Dot(norm, x)
		for i, xi := range x {
			dst[i] = xi - dst[i] + nx
		}
	}
	h := make([]float64, c.n)
	iters, res, err = gmres(apply, diag, c.r, h)
	if err != nil {
		return nil, 0, iters, res, err
	}
	rho = floats.Dot(norm, h)
	for i := range h {
		h[i] -= rho
	}
	return h, rho, iters, res, nil
}

// gmres solves A x = b by restarted GMRES (Saad and Schultz 1986) with
// the Jacobi preconditioner diag applied on the right, so that the
// residual it monitors is the true one, starting from x. It stops when
// ||b - A x||_2 <= solveTol ||b||_2, recomputing the residual from A at
// every restart; it returns the number of Krylov steps and the final
// relative residual, and an error if gmresMaxIter steps do not reach the
// tolerance.
//
// The chains solved here are sparse (Taxi: 2000 states, about 30,000
// entries from a log of 80,000 steps), where a dense LU factorisation
// (exact.Visitation's method) costs O(n^3), about 0.7 s; GMRES needs a
// few dozen matrix-vector products.
func gmres(apply func(dst, x []float64), diag, b, x []float64) (iters int, res float64, err error) {
	n := len(b)
	bnorm := floats.Norm(b, 2)
	if bnorm == 0 {
		clear(x)
		return 0, 0, nil
	}
	m := min(gmresRestart, n)
	basis := make([][]float64, m+1)
	for i := range basis {
		basis[i] = make([]float64, n)
	}
	h := make([][]float64, m+1) // Hessenberg matrix, column by column h[j][i]
	for j := range h {
		h[j] = make([]float64, m+1)
	}
	cs, sn, g, y := make([]float64, m), make([]float64, m), make([]float64, m+1), make([]float64, m)
	z, w := make([]float64, n), make([]float64, n)
	residual := func() float64 {
		apply(w, x)
		for i := range w {
			basis[0][i] = b[i] - w[i]
		}
		return floats.Norm(basis[0], 2)
	}
	beta := residual()
	for iters < gmresMaxIter {
		if beta <= solveTol*bnorm {
			return iters, beta / bnorm, nil
		}
		floats.Scale(1/beta, basis[0])
		clear(g)
		g[0] = beta
		k := 0
		for k < m && iters < gmresMaxIter {
			iters++
			floats.DivTo(z, basis[k], diag)
			apply(w, z)
			col := h[k]
			for i := 0; i <= k; i++ { // modified Gram-Schmidt
				col[i] = floats.Dot(w, basis[i])
				floats.AddScaled(w, -col[i], basis[i])
			}
			col[k+1] = floats.Norm(w, 2)
			breakdown := col[k+1] == 0 // x is exact in the Krylov space
			if !breakdown {
				floats.ScaleTo(basis[k+1], 1/col[k+1], w)
			}
			for i := 0; i < k; i++ { // earlier rotations
				col[i], col[i+1] = cs[i]*col[i]+sn[i]*col[i+1], -sn[i]*col[i]+cs[i]*col[i+1]
			}
			r := math.Hypot(col[k], col[k+1])
			cs[k], sn[k] = col[k]/r, col[k+1]/r
			col[k], col[k+1] = r, 0
			g[k+1] = -sn[k] * g[k]
			g[k] *= cs[k]
			k++
			if breakdown || math.Abs(g[k]) <= 0.5*solveTol*bnorm {
				break
			}
		}
		// Solve the k x k triangular system and update x += D^-1 V y.
		for i := k - 1; i >= 0; i-- {
			s := g[i]
			for j := i + 1; j < k; j++ {
				s -= h[j][i] * y[j]
			}
			y[i] = s / h[i][i]
		}
		clear(z)
		for i := range k {
			floats.AddScaled(z, y[i], basis[i])
		}
		for i := range x {
			x[i] += z[i] / diag[i]
		}
		prev := beta
		beta = residual()
		if !(beta < prev) && beta > solveTol*bnorm {
			return iters, beta / bnorm, fmt.Errorf("GMRES stagnates at relative residual %.3g (ill-conditioned system)", beta/bnorm)
		}
	}
	if beta <= solveTol*bnorm {
		return iters, beta / bnorm, nil
	}
	return iters, beta / bnorm, fmt.Errorf("GMRES did not converge in %d steps (relative residual %.3g)", iters, beta/bnorm)
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

// scc labels the strongly connected components of the chain's graph
// (Tarjan's algorithm, iterative so that long chains cannot exhaust the
// stack).
func (c *chain) scc() (comp []int, ncomp int) {
	n := c.n
	index := make([]int, n) // 0 = unvisited, else visit order + 1
	low := make([]int, n)
	onStack := make([]bool, n)
	comp = make([]int, n)
	var stack []int
	type frame struct{ s, k int }
	var call []frame
	counter := 0
	for root := range n {
		if index[root] != 0 {
			continue
		}
		call = append(call, frame{root, int(c.start[root])})
		counter++
		index[root], low[root] = counter, counter
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			s := f.s
			if f.k < int(c.start[s+1]) {
				j := int(c.next[f.k])
				f.k++
				if index[j] == 0 {
					counter++
					index[j], low[j] = counter, counter
					stack = append(stack, j)
					onStack[j] = true
					call = append(call, frame{j, int(c.start[j])})
				} else if onStack[j] {
					low[s] = min(low[s], index[j])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].s
				low[p] = min(low[p], low[s])
			}
			if low[s] == index[s] {
				for {
					j := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[j] = false
					comp[j] = ncomp
					if j == s {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp, ncomp
}
