package value

import (
	"errors"
	"fmt"

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
type BellmanStats struct {
	// A and B are the loss's matrix and vector; Theta = A^-1 B.
	A     *mat.Dense
	B     []float64
	Theta []float64
	// C is the value functional: v(theta) = C^T theta = (1 - gamma) times
	// the mean over episodes of psi(s0)^T theta, psi(s0) = E_pi phi(s0, .).
	C []float64
	// Zeta holds, per episode, (1/n) sum_{j in e} phi_j R_j(Theta): the
	// episode's share of the loss's gradient vector, for sign flips.
	Zeta [][]float64
	// Start holds, per episode, (1 - gamma) psi(s0)^T Theta.
	Start []float64
	// N is the number of transitions in the loss.
	N int
}

// BellmanStats returns the kernel Bellman statistics of d under the
// model's features and target (d must be the log the model was fitted
// on). Only stationary discounted models have them.
func (m *LinearModel) BellmanStats(d *dataset.Dataset) (*BellmanStats, error) {
	if m.finite || m.Gamma >= 1 {
		return nil, errors.New("value: linear: the kernel Bellman statistics are those of a stationary model at gamma < 1")
	}
	f, p, gamma := m.f, m.f.p, m.Gamma
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
	st := &BellmanStats{A: mat.NewDense(p, p, nil), B: make([]float64, p), C: make([]float64, p)}
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
				for k := range row {
					row[k] += x * (phi[k] - gamma*psi[k])
				}
				st.B[i] += x * r
			}
		})
		if err != nil {
			return nil, err
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
	var theta mat.VecDense
	if err := theta.SolveVec(st.A, mat.NewVecDense(p, append([]float64(nil), st.B...))); err != nil {
		return nil, fmt.Errorf("value: linear: the loss's matrix is singular (features the log cannot tell apart): %w", err)
	}
	st.Theta = append([]float64(nil), theta.RawVector().Data...)
	st.Zeta = make([][]float64, d.NumEpisodes())
	st.Start = make([]float64, d.NumEpisodes())
	for e := range d.NumEpisodes() {
		z := make([]float64, p)
		err := step(e, func(phi, psi []float64, r float64) {
			res := r
			for i, t := range st.Theta {
				res += (gamma*psi[i] - phi[i]) * t
			}
			for i, x := range phi {
				z[i] += x * res / n
			}
		})
		if err != nil {
			return nil, err
		}
		st.Zeta[e] = z
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
