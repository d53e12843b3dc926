package ratio

import (
	"errors"
	"fmt"
	"math"
)

// system is the quadratic problem of Tabular in Jacobi-scaled variables.
//
// With the unknown states j = 0..m-1 (state ids states[j]), A scaled by the
// total transition weight and D = diag(sqrt((A^T A)_jj + lambda)), the
// variable is y = D w, the matrix Ahat = A D^-1 and the constraint
// chat^T y = 1 with chat = D^-1 c. The solve minimises
//
//	|| Ahat y - b ||^2 + lambda || D^-1 y ||^2   subject to   chat^T y = 1
//
// by conjugate gradients on Mhat = Ahat^T Ahat + lambda D^-2 restricted to
// the hyperplane chat^T v = 0 (projected CG; the scaling is the Jacobi
// preconditioner, diag(Mhat) = 1). Ahat is stored by columns (CSC) with
// rows indexed by state id, so both Ahat v and Ahat^T u are one pass over
// its non-zeros.
type system struct {
	nS, m  int
	states []int

	colPtr []int32
	rowIdx []int32
	val    []float64

	b    []float64 // per state id
	dinv []float64 // D^-1
	chat []float64
	cc   float64   // chat . chat
	lamD []float64 // lambda D^-2, nil when lambda = 0
	atb  []float64 // Ahat^T b

	// mask is 1 on the free unknowns and 0 on those held at 0 (active
	// set); cm = chat * mask and cmm = cm . cm.
	mask []float64
	cm   []float64
	cmm  float64

	ref float64 // projected residual at the cold start: the scale of Tol

	u       []float64 // per state id
	r, p, q []float64
}

func newSystem(c *Counts, ridge float64) (*system, error) {
	nS := c.NumStates
	if nS <= 0 || nS > math.MaxInt32 {
		return nil, fmt.Errorf("ratio: %d states", nS)
	}
	if len(c.Norm) != nS {
		return nil, fmt.Errorf("ratio: normalisation weights for %d states, want %d", len(c.Norm), nS)
	}
	if c.Restart != nil && len(c.Restart) != nS {
		return nil, fmt.Errorf("ratio: restart weights for %d states, want %d", len(c.Restart), nS)
	}
	total := 0.0
	for i, e := range c.Edges {
		if e.From < 0 || e.From >= nS || e.To < 0 || e.To >= nS {
			return nil, fmt.Errorf("ratio: edge %d from %d to %d: state outside [0, %d)", i, e.From, e.To, nS)
		}
		if !finiteNonNeg(e.Weight) || !finiteNonNeg(e.RatioWeight) {
			return nil, fmt.Errorf("ratio: edge %d from %d to %d: weights %v, %v, want finite and >= 0", i, e.From, e.To, e.Weight, e.RatioWeight)
		}
		total += e.Weight
	}
	inflow := make([]float64, nS)
	normSum := 0.0
	for s := 0; s < nS; s++ {
		if !finiteNonNeg(c.Norm[s]) {
			return nil, fmt.Errorf("ratio: state %d: normalisation weight %v, want finite and >= 0", s, c.Norm[s])
		}
		normSum += c.Norm[s]
		if c.Restart != nil {
			if !finiteNonNeg(c.Restart[s]) {
				return nil, fmt.Errorf("ratio: state %d: restart weight %v, want finite and >= 0", s, c.Restart[s])
			}
			inflow[s] = c.Restart[s]
			total += c.Restart[s]
		}
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return nil, fmt.Errorf("ratio: total transition weight %v, want finite and > 0", total)
	}
	if !(normSum > 0) || math.IsInf(normSum, 0) {
		return nil, fmt.Errorf("ratio: normalisation weights sum to %v, want finite and > 0", normSum)
	}
	edges := c.Edges
	if !groupedOnce(edges, nS) {
		sums := newEdgeSums(nS, len(edges))
		for _, e := range edges {
			sums.add(e.From, e.To, e.Weight, e.RatioWeight)
		}
		edges = sums.sorted()
	}
	for _, e := range edges {
		inflow[e.To] += e.Weight
	}

	// Columns of A, by state: rho beta at row s' for every edge s -> s',
	// minus the inflow of s on the diagonal. All-zero columns are dropped.
	sys := &system{nS: nS}
	sys.colPtr = make([]int32, 1, nS+1)
	sys.rowIdx = make([]int32, 0, len(edges)+nS)
	sys.val = make([]float64, 0, len(edges)+nS)
	var diag, cvec []float64
	k := 0
	for s := 0; s < nS; s++ {
		first := len(sys.val)
		dk := -1 // position of the diagonal entry
		for ; k < len(edges) && edges[k].From == s; k++ {
			e := edges[k]
			if e.To == s {
				dk = len(sys.val)
			}
			if e.RatioWeight != 0 || e.To == s {
				sys.rowIdx = append(sys.rowIdx, int32(e.To))
				sys.val = append(sys.val, e.RatioWeight/total)
			}
		}
		if inflow[s] != 0 {
			if dk < 0 {
				dk = len(sys.val)
				sys.rowIdx = append(sys.rowIdx, int32(s))
				sys.val = append(sys.val, 0)
			}
			sys.val[dk] -= inflow[s] / total
		}
		d := 0.0
		for _, v := range sys.val[first:] {
			d += v * v
		}
		if d == 0 {
			sys.rowIdx = sys.rowIdx[:first]
			sys.val = sys.val[:first]
			continue
		}
		sys.states = append(sys.states, s)
		sys.colPtr = append(sys.colPtr, int32(len(sys.val)))
		diag = append(diag, d)
		cvec = append(cvec, c.Norm[s]/normSum)
	}
	sys.m = len(sys.states)
	if sys.m == 0 {
		return nil, errors.New("ratio: no transition constrains the ratio (every column of the loss is zero)")
	}
	cs := 0.0
	for _, v := range cvec {
		cs += v
	}
	if !(cs > 0) {
		return nil, errors.New("ratio: no logged state enters the loss, so the normalisation cannot be met")
	}

	meanDiag := 0.0
	for _, d := range diag {
		meanDiag += d
	}
	meanDiag /= float64(sys.m)
	lambda := ridge * meanDiag
	sys.dinv = make([]float64, sys.m)
	sys.chat = make([]float64, sys.m)
	if lambda > 0 {
		sys.lamD = make([]float64, sys.m)
	}
	for j := range sys.m {
		sys.dinv[j] = 1 / math.Sqrt(diag[j]+lambda)
		for k := sys.colPtr[j]; k < sys.colPtr[j+1]; k++ {
			sys.val[k] *= sys.dinv[j]
		}
		sys.chat[j] = cvec[j] * sys.dinv[j]
		sys.cc += sys.chat[j] * sys.chat[j]
		if lambda > 0 {
			sys.lamD[j] = lambda * sys.dinv[j] * sys.dinv[j]
		}
	}
	sys.b = make([]float64, nS)
	if c.Restart != nil {
		for s, r := range c.Restart {
			sys.b[s] = -r / total
		}
	}
	sys.atb = make([]float64, sys.m)
	sys.mulT(sys.b, sys.atb)
	sys.mask = make([]float64, sys.m)
	sys.cm = make([]float64, sys.m)
	for j := range sys.mask {
		sys.mask[j] = 1
	}
	sys.setMask()
	sys.u = make([]float64, nS)
	sys.r = make([]float64, sys.m)
	sys.p = make([]float64, sys.m)
	sys.q = make([]float64, sys.m)
	return sys, nil
}

// groupedOnce reports whether edges are grouped by From in increasing
// order with no (From, To) pair twice, as Aggregate returns them: summing
// them by pair (edgeSums) would then give them back as they are.
func groupedOnce(edges []Edge, nS int) bool {
	last := make([]int32, nS) // 1 + the From of the last edge into s
	for k, e := range edges {
		if k > 0 && e.From < edges[k-1].From || last[e.To] == int32(e.From)+1 {
			return false
		}
		last[e.To] = int32(e.From) + 1
	}
	return true
}

func finiteNonNeg(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// setMask recomputes cm and cmm after a change of mask.
func (sys *system) setMask() {
	sys.cmm = 0
	for j, c := range sys.chat {
		sys.cm[j] = c * sys.mask[j]
		sys.cmm += sys.cm[j] * sys.cm[j]
	}
}

// mul sets u = Ahat v (u indexed by state id).
func (sys *system) mul(v, u []float64) {
	clear(u)
	for j, vj := range v {
		lo, hi := sys.colPtr[j], sys.colPtr[j+1]
		rows, vals := sys.rowIdx[lo:hi], sys.val[lo:hi:hi]
		vals = vals[:len(rows)]
		for k, i := range rows {
			u[i] += vals[k] * vj
		}
	}
}

// mulT sets v = Ahat^T u.
func (sys *system) mulT(u, v []float64) {
	for j := range v {
		lo, hi := sys.colPtr[j], sys.colPtr[j+1]
		rows, vals := sys.rowIdx[lo:hi], sys.val[lo:hi:hi]
		vals = vals[:len(rows)]
		s := 0.0
		for k, i := range rows {
			s += vals[k] * u[i]
		}
		v[j] = s
	}
}

// apply sets q = Mhat v = Ahat^T Ahat v + lambda D^-2 v.
func (sys *system) apply(v, q []float64) {
	sys.mul(v, sys.u)
	sys.mulT(sys.u, q)
	if sys.lamD != nil {
		for j, l := range sys.lamD {
			q[j] += l * v[j]
		}
	}
}

// project maps v onto the free unknowns of the hyperplane cm . v = 0.
func (sys *system) project(v []float64) {
	dot := 0.0
	for j := range v {
		v[j] *= sys.mask[j]
		dot += sys.cm[j] * v[j]
	}
	f := dot / sys.cmm
	for j, c := range sys.cm {
		v[j] -= f * c
	}
}

// residual sets r to the projected negative gradient P(Ahat^T b - Mhat y)
// and returns its norm.
func (sys *system) residual(y, r []float64) float64 {
	sys.apply(y, r)
	for j := range r {
		r[j] = sys.atb[j] - r[j]
	}
	sys.project(r)
	return math.Sqrt(dot(r, r))
}

// dot is a sequential dot product. gonum's floats.Dot sums in four
// interleaved partial sums (its SSE2 kernel), which moves the conjugate
// gradients' iterates in the last bits and with them bch-tabular's
// reported digits (measured: the Taxi results files and the demo's JSON
// change); the sequential order keeps every published number exact. The
// systems are sparse and the dot products O(states), so speed is not at
// stake.
func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// cg minimises the problem over the free unknowns from the feasible start y
// (cm . y = 1, zero off the mask), in place. It stops when the projected
// residual is at most tol times sys.ref (set by the first call to its
// starting residual) and verifies that with the true residual, restarting
// from it if rounding left the recursive residual too optimistic. It
// returns the iterations and the final relative residual.
func (sys *system) cg(y []float64, tol float64, maxIter int) (int, float64, error) {
	r, p, q := sys.r, sys.p, sys.q
	rn := sys.residual(y, r)
	if sys.ref == 0 {
		// The scale of the residual: its value at the cold start, or the
		// norm of the start if larger (the start may already be the
		// solution, as it is when w = 1; diag(Mhat) = 1 makes the two
		// comparable).
		sys.ref = max(rn, math.Sqrt(dot(y, y)))
	}
	if sys.ref == 0 || rn <= tol*sys.ref {
		return 0, relative(rn, sys.ref), nil
	}
	it := 0
	for restart := 0; ; restart++ {
		copy(p, r)
		rr := rn * rn
		goal := tol * sys.ref
		for it < maxIter && math.Sqrt(rr) > goal {
			sys.apply(p, q)
			sys.project(q)
			pq := dot(p, q)
			if !(pq > 0) {
				return it, relative(math.Sqrt(rr), sys.ref), errors.New("ratio: the loss is flat along a direction the normalisation leaves free (degenerate data); set Ridge > 0")
			}
			alpha := rr / pq
			rrNew := 0.0
			for j := range y {
				y[j] += alpha * p[j]
				r[j] -= alpha * q[j]
				rrNew += r[j] * r[j]
			}
			beta := rrNew / rr
			for j := range p {
				p[j] = r[j] + beta*p[j]
			}
			rr = rrNew
			it++
		}
		// Put y back on the constraint (rounding drifts it) and check the
		// true residual.
		f := (1 - dot(sys.cm, y)) / sys.cmm
		for j, c := range sys.cm {
			y[j] += f * c
		}
		rn = sys.residual(y, r)
		if rn <= goal {
			return it, relative(rn, sys.ref), nil
		}
		if it >= maxIter || restart >= 20 {
			return it, relative(rn, sys.ref), fmt.Errorf("ratio: conjugate gradients did not converge: relative residual %.3g after %d iterations, want %.3g",
				relative(rn, sys.ref), it, tol)
		}
	}
}

func relative(r, ref float64) float64 {
	if ref == 0 {
		return 0
	}
	return r / ref
}

// loss returns ||Ahat y - b||^2.
func (sys *system) loss(y []float64) float64 {
	sys.mul(y, sys.u)
	l := 0.0
	for s, v := range sys.u {
		d := v - sys.b[s]
		l += d * d
	}
	return l
}

// activeSet turns the unconstrained minimiser y into the minimiser under
// y >= 0 (equivalently w >= 0) by a primal active-set method: from a
// feasible point, solve on the free unknowns; if the solution leaves the
// orthant, step to the boundary and hold the blocking unknowns at 0;
// otherwise release the held unknowns whose Lagrange multipliers are
// negative (below -100 Tol in the units of the residual), or stop when none
// is. The loss never increases and strictly decreases at every release, so
// the method ends; maxSolves caps it all the same.
func (sys *system) activeSet(y []float64, tol float64, maxIter, maxSolves int, model *TabularModel) error {
	neg := false
	for _, v := range y {
		if v < 0 {
			neg = true
			break
		}
	}
	if !neg {
		return nil
	}
	// A feasible start near the minimiser: clip at 0 and rescale onto the
	// constraint (chat >= 0 and chat . y = 1 leave a positive product).
	cur := make([]float64, len(y))
	for j, v := range y {
		cur[j] = max(v, 0)
	}
	s := dot(sys.chat, cur)
	for j := range cur {
		cur[j] /= s
	}
	trial := y // the first trial point is the unconstrained minimiser
	g := make([]float64, sys.m)
	for {
		// Step from cur towards trial, stopping at the first unknown that
		// reaches 0.
		alpha := 1.0
		for j, t := range trial {
			if sys.mask[j] == 1 && t < 0 {
				alpha = min(alpha, cur[j]/(cur[j]-t))
			}
		}
		blocked := false
		for j, t := range trial {
			if sys.mask[j] == 0 {
				continue
			}
			if t < 0 && cur[j]/(cur[j]-t) <= alpha*(1+1e-12) {
				cur[j] = 0
				sys.mask[j] = 0
				blocked = true
				continue
			}
			cur[j] += alpha * (t - cur[j])
		}
		if !blocked {
			// trial minimises the loss on the current face and is feasible:
			// check the multipliers of the held unknowns. The gradient of
			// the half-loss is Mhat y - Ahat^T b = mu chat on the free ones.
			sys.apply(cur, g)
			mu, n := 0.0, 0.0
			for j := range g {
				g[j] -= sys.atb[j]
				mu += sys.cm[j] * g[j]
				n += sys.cm[j] * sys.cm[j]
			}
			mu /= n
			released := false
			for j := range g {
				if sys.mask[j] == 0 && g[j]-mu*sys.chat[j] < -100*tol*sys.ref {
					sys.mask[j] = 1
					released = true
				}
			}
			if !released {
				copy(y, cur)
				return nil
			}
		}
		sys.setMask()
		if model.Solves >= maxSolves {
			return fmt.Errorf("ratio: non-negative solve did not settle after %d linear solves", model.Solves)
		}
		copy(y, cur)
		it, res, err := sys.cg(y, tol, maxIter)
		model.Iterations += it
		model.Solves++
		model.Residual = res
		if err != nil {
			return fmt.Errorf("ratio: non-negative solve: %w", err)
		}
		trial = y
	}
}
