package value

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
)

// BellmanStats are what the kernel Bellman interval of a stationary
// linear model needs (package ope, KernelBellman's linear form), with the
// kernel k(x, y) = phi(x)^T phi(y) of the model's own features: the
// empirical loss of q = phi^T theta is
//
//	L(theta) = ||(1/n) sum_j phi_j R_j(theta)||^2 = ||b - A theta||^2,
//	R_j(theta) = r_j + gamma psi_j^T theta - phi_j^T theta,
//	A = (1/n) sum_j phi_j (phi_j - gamma psi_j)^T,   b = (1/n) sum_j phi_j r_j,
//
// psi_j = E_{a ~ pi(.|s'_j)} phi(s'_j, a), so that the loss's minimiser
// is LSTD-Q's fixed point without its ridge, theta* = A^-1 b (L = 0).
//
// At gamma = 1 (the differential model of Linear) the unknowns are theta
// and the average reward rho, R_j = r_j - rho + psi_j^T theta - phi_j^T
// theta, and the loss ||b - A theta - f rho||^2, f = (1/n) sum_j phi_j.
// With the constant function in the span of the features, theta + c 1
// has the same loss for every c; the normalisation f^T theta = 0 (the
// mean of q over the transitions is 0, as Linear's fit) removes that
// direction. The stats are then those of the bordered system
//
//	[ A    f ] [ theta ]   [ b ]
//	[ f^T  0 ] [ rho   ] = [ 0 ],
//
// whose last row is a constraint, not a row of the loss (Rows = p), and
// the value functional is rho itself (C = e_rho; no start term: the
// average reward does not depend on where episodes begin).
type BellmanStats struct {
	// A and B are the loss's matrix and vector (at gamma = 1 the
	// bordered system); Theta = A^+ B, the least-norm solution
	// (pinvSolve).
	A     *mat.Dense
	B     []float64
	Theta []float64
	// Rows is the number of the loss's rows: the first Rows entries of
	// B - A Theta are the residual whose norm is the loss's root; any
	// row after them is a constraint held exactly (gamma = 1).
	Rows int
	// C is the value functional: v(theta) = C^T theta = (1 - gamma) times
	// the mean over episodes of psi(s0)^T theta, psi(s0) = E_pi phi(s0, .)
	// (at gamma = 1, rho).
	C []float64
	// Zeta holds, per episode, (1/n) sum_{j in e} phi_j R_j(Theta): the
	// episode's share of the loss's gradient vector, for sign flips
	// (Rows entries).
	Zeta [][]float64
	// Start holds, per episode, (1 - gamma) psi(s0)^T Theta (0 at
	// gamma = 1).
	Start []float64
	// U is A^-T C: the value moves by U^T (A delta) when theta moves by
	// delta, so that the range of the value over ||B - A theta|| <= r
	// is C^T Theta -+ r ||U|| (over U's first Rows entries).
	U []float64
	// N is the number of transitions in the loss.
	N int
}

// pinvSolve returns x = A^+ b and u = A^+T c, A^+ the pseudo-inverse of A
// (singular values below 1e-10 of the largest count as 0). Features
// that are collinear on every logged state (Pendulum's cos^2 + sin^2 and
// the constant) make A singular without hiding the value: c, the value
// functional, has no component along those directions, so the value and
// its range are those of any solution, and the least-norm one is taken.
// Where c does have such a component (the target takes an action the log
// never shows, whose features no row of A holds), the log does not
// identify the value in this class, and pinvSolve says so.
func pinvSolve(a *mat.Dense, b, c []float64) (x, u []float64, err error) {
	const rcond = 1e-10
	var svd, svdT mat.SVD
	if !svd.Factorize(a, mat.SVDThin) || !svdT.Factorize(a.T(), mat.SVDThin) {
		return nil, nil, errors.New("value: linear: the singular value decomposition of the loss's matrix failed")
	}
	rank := svd.Rank(rcond)
	if rank == 0 {
		return nil, nil, errors.New("value: linear: the loss's matrix is zero")
	}
	n := len(b)
	cv := mat.NewVecDense(n, slices.Clone(c))
	// c's components along the right singular vectors the rank drops.
	var v mat.Dense
	svd.VTo(&v)
	var vc mat.VecDense
	vc.MulVec(v.T(), cv)
	for k := rank; k < n; k++ {
		if math.Abs(vc.AtVec(k)) > 1e-8*mat.Norm(cv, 2) {
			return nil, nil, errors.New("value: linear: the log does not identify the value in this class (the target reaches state-actions whose features the logged steps never span, such as an action the behavior never takes)")
		}
	}
	// x = A^+ b and u = (A^T)^+ c: least-norm least-squares solutions.
	var xv, uv mat.VecDense
	svd.SolveVecTo(&xv, mat.NewVecDense(n, slices.Clone(b)), rank)
	svdT.SolveVecTo(&uv, cv, rank)
	return xv.RawVector().Data, uv.RawVector().Data, nil
}

// BellmanStats returns the kernel Bellman statistics of d under the
// model's features and target (d must be the log the model was fitted
// on). Only stationary models have them (discounted or differential).
func (m *LinearModel) BellmanStats(d *dataset.Dataset) (*BellmanStats, error) {
	if m.finite {
		return nil, errors.New("value: linear: the kernel Bellman statistics are those of a stationary model, not of finite-horizon values")
	}
	f, p, gamma := m.f, m.f.p, m.Gamma
	average := gamma >= 1
	// k is the number of unknowns: theta, and rho at gamma = 1.
	k := p
	if average {
		gamma, k = 1, p+1
	}
	if err := m.target.compatible("linear", d, f.stateDim); err != nil {
		return nil, err
	}
	sc := f.newScratch(m.target)
	phi := make([]float64, p)
	// step calls fn for every transition of episode e with phi_j, psi_j
	// and r_j.
	step := func(e int, fn func(phi, psi []float64, r float64)) error {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if err := checkRealStep("linear", d, e, j); err != nil {
				return err
			}
			obs, ok := d.NextObs(e, j)
			if !ok {
				continue
			}
			var probs []float64
			if f.numActions > 0 {
				if probs, ok = d.NextTargetProbs(e, j); !ok {
					continue
				}
				if err := checkTargetRow("linear", d, e, j, probs, "next"); err != nil {
					return err
				}
			}
			clear(phi)
			blk := f.stateAction(sc.x, sc, d, j)
			copy(phi[blk*f.P:], sc.x)
			f.expected(sc, obs, probs)
			fn(phi, sc.psi, d.Reward[j])
		}
		return nil
	}
	st := &BellmanStats{A: mat.NewDense(k, k, nil), B: make([]float64, k), C: make([]float64, k), Rows: p}
	a := st.A.RawMatrix()
	m0 := float64(d.NumEpisodes())
	for e := range d.NumEpisodes() {
		err := step(e, func(phi, psi []float64, r float64) {
			st.N++
			for i, x := range phi {
				if x == 0 {
					continue
				}
				row := a.Data[i*a.Stride : i*a.Stride+p]
				for c := range row {
					row[c] += x * (phi[c] - gamma*psi[c])
				}
				if average { // rho's column: f
					a.Data[i*a.Stride+p] += x
				}
				st.B[i] += x * r
			}
		})
		if err != nil {
			return nil, err
		}
		if average { // rho is the value: no start term
			continue
		}
		// psi(s0): the target's expected features at the first state.
		j, _ := d.Span(e)
		var probs []float64
		if f.numActions > 0 {
			if probs = d.TargetProbsAt(j); probs == nil {
				return nil, fmt.Errorf("value: linear: episode %q: the target's distribution at its first state is unknown", d.IDs[e])
			}
		}
		f.expected(sc, d.ObsAt(j), probs)
		for i, v := range sc.psi {
			st.C[i] += (1 - gamma) * v / m0
		}
	}
	if st.N == 0 {
		return nil, errors.New("value: linear: no transition with a known next state (and, for discrete actions, the target's distribution there)")
	}
	n := float64(st.N)
	st.A.Scale(1/n, st.A)
	for i := range st.B {
		st.B[i] /= n
	}
	if average { // the normalisation f^T theta = 0, and v = rho
		for c := range p {
			a.Data[p*a.Stride+c] = a.Data[c*a.Stride+p]
		}
		st.C[p] = 1
	}
	var err error
	if st.Theta, st.U, err = pinvSolve(st.A, st.B, st.C); err != nil {
		return nil, err
	}
	st.Zeta = make([][]float64, d.NumEpisodes())
	st.Start = make([]float64, d.NumEpisodes())
	for e := range d.NumEpisodes() {
		z := make([]float64, p)
		err := step(e, func(phi, psi []float64, r float64) {
			res := r
			for i, t := range st.Theta[:p] {
				res += (gamma*psi[i] - phi[i]) * t
			}
			if average {
				res -= st.Theta[p]
			}
			for i, x := range phi {
				z[i] += x * res / n
			}
		})
		if err != nil {
			return nil, err
		}
		st.Zeta[e] = z
		if average {
			continue
		}
		j, _ := d.Span(e)
		var probs []float64
		if f.numActions > 0 {
			probs = d.TargetProbsAt(j)
		}
		f.expected(sc, d.ObsAt(j), probs)
		for i, v := range sc.psi {
			st.Start[e] += (1 - gamma) * v * st.Theta[i]
		}
	}
	return st, nil
}
