package value

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// fromMoments solves LSTD-Q on the moments acc has summed (H is the
// longest episode, for a Finite fit).
func fromMoments(set linearSettings, finite bool, f *linFeatures, tgt realTarget, gamma float64, acc *linWorker, H int) (*LinearModel, error) {
	if acc.n == 0 {
		return nil, errors.New("value: linear: no transition with a known next state (and, for discrete actions, the target's distribution there)")
	}
	mo := acc.moments()

	model := &LinearModel{Gamma: gamma, Transitions: acc.n, Skipped: acc.skipped, rho: math.NaN(),
		finite: finite, f: f, target: tgt, workers: set.workers}
	p := f.p
	meanDiag := 0.0
	for i := range p {
		meanDiag += mo.gdiag[i]
	}
	meanDiag /= float64(p)
	model.Lambda = set.ridge * meanDiag
	model.LambdaBackup = set.backupRidge * meanDiag
	model.backups = set.backups
	model.warnings = acc.warnings(f)

	if finite {
		if err := model.solveFinite(mo, H); err != nil {
			return nil, err
		}
		return model, nil
	}
	// mo.g is Phi^T (Phi - gamma Phi'_pi)/n.
	var err error
	model.Theta, model.rho, err = stationary(mo.g, mo.b, mo.f, gamma, model.Lambda)
	if err != nil {
		return nil, err
	}
	return model, nil
}

// stationary solves the stationary LSTD-Q system (gamma < 1, rho NaN) or
// the differential one bordered by the normalisation (gamma = 1) with
// a = Phi^T (Phi - gamma Phi'_pi)/n, which it changes, b = Phi^T r/n,
// f = Phi^T 1/n and the absolute ridge lambda.
func stationary(a *mat.Dense, b, f []float64, gamma, lambda float64) (theta []float64, rho float64, err error) {
	addDiag(a, lambda)
	if gamma < 1 {
		theta, err = solve(a, b)
		return theta, math.NaN(), err
	}
	p := len(b)
	aug := mat.NewDense(p+1, p+1, nil)
	aug.Slice(0, p, 0, p).(*mat.Dense).Copy(a)
	for i := range p {
		aug.Set(i, p, f[i])
		aug.Set(p, i, f[i])
	}
	sol, err := solve(aug, append(slices.Clone(b), 0))
	if err != nil {
		return nil, 0, err
	}
	return sol[:p], sol[p], nil
}

// run calls f(0) and f(1), on two goroutines if workers is 2.
func run(workers int, f func(w int)) {
	if workers < 2 {
		f(0)
		f(1)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { f(1) })
	f(0)
	wg.Wait()
}

func addDiag(a *mat.Dense, v float64) {
	n, _ := a.Dims()
	for i := range n {
		a.Set(i, i, a.At(i, i)+v)
	}
}

// solve solves a x = b by LU with partial pivoting. A singular system is
// an error; an ill-conditioned one is solved (gonum reports it as a
// mat.Condition, which is not an error here: the ridge is the remedy the
// caller controls).
func solve(a *mat.Dense, b []float64) ([]float64, error) {
	var lu mat.LU
	lu.Factorize(a)
	n, _ := a.Dims()
	x := mat.NewVecDense(n, nil)
	err := lu.SolveVecTo(x, false, mat.NewVecDense(n, slices.Clone(b)))
	var cond mat.Condition
	if err != nil && !errors.As(err, &cond) {
		return nil, fmt.Errorf("value: linear: the LSTD-Q system is singular (features collinear on the data?); a positive Ridge regularises it: %w", err)
	}
	out := x.RawVector().Data
	if !allFinite(out) {
		return nil, errors.New("value: linear: the LSTD-Q system is singular (features collinear on the data?); a positive Ridge regularises it")
	}
	return out, nil
}

// solveFinite sets Thetas[h-1] = theta_h for h = 1..H: the backward
// ridge regressions up to the exact backups, the stationary or
// differential tail beyond (see Linear).
func (m *LinearModel) solveFinite(mo linMoments, H int) error {
	p := m.f.p
	g := mat.NewSymDense(p, nil)
	for i := range p {
		for k := i; k < p; k++ {
			g.SetSym(i, k, 0.5*(mo.g.At(i, k)+mo.g.At(k, i)))
		}
		g.SetSym(i, i, g.At(i, i)+m.LambdaBackup)
	}
	var ch mat.Cholesky
	if !ch.Factorize(g) {
		return errors.New("value: linear: Phi^T Phi is singular (features collinear on the data?); a positive Ridge regularises it")
	}
	m.chol, m.c, m.b = &ch, mo.c, mo.b
	if m.backups > 0 {
		// The stationary system Phi^T (Phi - gamma Phi'_pi)/n.
		a := mat.NewDense(p, p, nil)
		a.Scale(-m.Gamma, mo.c)
		a.Add(a, mo.g)
		theta, rho, err := stationary(a, mo.b, mo.f, m.Gamma, m.Lambda)
		if err != nil {
			return err
		}
		m.tailTheta, m.tailRho, m.meanFeat = theta, rho, mo.f
		if math.IsNaN(rho) {
			m.tailRho = 0
		}
		m.one = make([]float64, p)
		for a := range max(m.f.numActions, 1) {
			m.one[a*m.f.P] = 1 // the constant feature of every block
		}
		m.gram = mo.g
		m.chooseBackups()
	}
	if len(m.Thetas) > H {
		m.Thetas = m.Thetas[:H] // extend recomputes them for longer logs
	}
	m.Thetas = m.extend(m.Thetas, H)
	return nil
}

// chooseBackups runs the exact backups up to m.backups and keeps them up
// to the one closest to the tail, H0 = argmin_h gap_h with
//
//	gap_h = Var_j[phi_j^T (theta_h - theta_inf)],
//
// the variance over the fitted transitions of q^h - q_inf, which leaves
// out the constant the tail matches (the part of q^h the tail cannot
// represent). Where the features can represent the backups, the chain's
// mixing makes gap_h fall geometrically and H0 is the cap (on the
// linear-Gaussian system, all 200); where the projected backup expands,
// gap_h grows after a few backups and the later ones would carry the
// compounded error into the tail's constant (Pendulum, gamma = 1: a
// minimum near h = 10, then growth by about 5% per backup). It sets
// m.Thetas to theta_1..theta_H0, m.backups to H0 and m.ExactBackups.
func (m *LinearModel) chooseBackups() {
	limit := m.backups
	m.backups = 0 // extend: exact backups only
	thetas := m.extend(nil, limit)
	p := m.f.p
	diff := mat.NewVecDense(p, nil)
	gd := mat.NewVecDense(p, nil)
	best, bestGap := limit, math.Inf(1)
	for h, th := range thetas {
		mean := 0.0
		for i := range p {
			diff.SetVec(i, th[i]-m.tailTheta[i])
			mean += m.meanFeat[i] * diff.AtVec(i)
		}
		gd.MulVec(m.gram, diff)
		gap := mat.Dot(diff, gd) - mean*mean
		if gap < bestGap {
			best, bestGap = h+1, gap
		}
	}
	m.backups, m.ExactBackups = best, best
	m.Thetas = thetas[:best]
}

// extend returns thetas extended to H horizons: up to the exact backups
// by theta_h = (G + lambda_b I)^{-1} (b + gamma C theta_(h-1)), beyond by
// the tail theta_h = theta_inf + ((h - H0) rho - gamma^(h-H0) delta) 1,
// delta = f^T (theta_inf - theta_H0).
func (m *LinearModel) extend(thetas [][]float64, H int) [][]float64 {
	p := m.f.p
	rhs := mat.NewVecDense(p, nil)
	b := mat.NewVecDense(p, m.b)
	for h := len(thetas) + 1; h <= H; h++ {
		if H0 := m.backups; H0 > 0 && h > H0 {
			th0 := thetas[H0-1]
			delta := 0.0
			for i, v := range m.meanFeat {
				delta += v * (m.tailTheta[i] - th0[i])
			}
			k := float64(h - H0)
			shift := k*m.tailRho - math.Pow(m.Gamma, k)*delta
			th := slices.Clone(m.tailTheta)
			for i, v := range m.one {
				th[i] += shift * v
			}
			thetas = append(thetas, th)
			continue
		}
		if h == 1 {
			rhs.CopyVec(b)
		} else {
			rhs.MulVec(m.c, mat.NewVecDense(p, thetas[h-2]))
			rhs.AddScaledVec(b, m.Gamma, rhs)
		}
		var x mat.VecDense
		_ = m.chol.SolveVecTo(&x, rhs) // the factorisation succeeded
		thetas = append(thetas, slices.Clone(x.RawVector().Data))
	}
	return thetas
}
