package value

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
)

// Linear is least-squares temporal-difference Q evaluation (LSTD-Q, linear
// fitted Q evaluation in closed form), "linear": q(s, a) = phi(s, a)^T
// theta with
//
//	theta = (Phi^T (Phi - gamma Phi'_pi) + lambda I)^{-1} Phi^T r,
//
// Phi the n x p matrix of the features phi(s_j, a_j) of the logged
// transitions whose next state is known, r their rewards, and Phi'_pi the
// matrix of the expected next features E_{a'~pi(.|s'_j)} phi(s'_j, a').
// It is the fixed point of fitted Q evaluation with a linear model (the
// projected Bellman equation Phi theta = Proj(r + gamma Phi'_pi theta)),
// found in one pass over the data without iterating. It is deterministic.
//
// Features. States are real vectors (for discrete states use the tabular
// learner). The state is standardised, x = (s - mean)/sd per component
// over the logged states s_j (a component with sd = 0 is only centred);
// for real actions the action is standardised the same way over the
// logged actions. The features are all the monomials of degree at most
// Degree of the standardised components, the constant included (for
// Degree 2 and k components: 1, x_i, x_i x_l for i <= l, (k+1)(k+2)/2 of
// them):
//
//   - discrete actions: the monomials of the state crossed with the
//     one-hot action, phi(s, a) = e_a (x) m(x(s)), one block of
//     monomials per action (p = NumActions (k+1)(k+2)/2 for Degree 2);
//   - real actions: the monomials of the joint vector (x(s), y(a)).
//
// With Degree 2 a q that is quadratic in (s, a) is represented exactly,
// as in linear-quadratic control (env/lineargauss). These are Features
// "poly", the default.
//
// Features "rff" add NumRandom (DefaultNumRandom) random Fourier features
// of the standardised state, sqrt(2) cos(w_i^T x + c_i) with
// w_i ~ N(0, I/sigma^2), sigma Bandwidth times the median distance
// between logged states (the median heuristic), drawn with a fixed seed
// (rffMap): the state basis is the monomials of the state of degree at
// most Degree followed by these features, and it is crossed with the
// one-hot action (discrete actions) or with the monomials of degree at
// most 2 of the standardised action (real actions). The polynomial
// features' span is contained in theirs. On the 1-d linear-Gaussian
// system they are worse than "poly" (about 300 nearly collinear
// features for a quadratic q), which is why "poly" stays the default.
//
// The target. For discrete actions pi(.|s) is read from the logs'
// TargetProbs columns, at s_j and through Dataset.NextTargetProbs at
// s'_j; a transition whose next state is known but whose next
// distribution is not (the last step of an episode without
// next_target_prob_k columns) is left out of the fit (LinearModel.Skipped).
// Target.Policy is a table over discrete states and is refused here. For
// real actions E_{a'~pi} phi(s', a') is the mean of phi(s', a'_k) over
// Target.Samples actions (DefaultSamples if 0) drawn from
// Target.Continuous with a generator seeded by Target.Seed and the state
// (see mcSampler): a Monte Carlo average, so that the fit is
// deterministic given the seed; its noise enters Phi'_pi linearly and
// leaves LSTD-Q consistent.
//
// The ridge. lambda = Ridge times the mean diagonal entry of Phi^T Phi
// (in the moments divided by n, so that it does not scale with the data):
// a relative ridge that keeps the system solvable when features are
// collinear on the data (an action never logged, a constant state
// component) and moves a well-posed fit by a relative amount of about
// Ridge.
//
// Three forms, by discount and Finite:
//
//   - 0 < gamma < 1, stationary: the equation above. Rho is NaN.
//
//   - gamma = 1, stationary: the differential equation
//     q(s, a) + rho = r + E[q(s', pi)] with the average reward rho a free
//     scalar. With the constant function in the span of the features,
//     Phi^T (Phi - Phi'_pi) is singular (q + c solves it for every c), so
//     rho joins the unknowns and one equation pins the constant: the mean
//     of q over the fitted transitions is 0,
//
//     [ A + lambda I   f ] [theta]   [ b ]     A = Phi^T (Phi - Phi'_pi)/n,
//     [ f^T            0 ] [ rho ] = [ 0 ],    b = Phi^T r/n, f = Phi^T 1/n,
//
//     a square system (the first rows are the projected differential
//     Bellman equation, the last the normalisation).
//
//   - Finite: time-indexed coefficients theta_h for h = 1..H steps left,
//     q^h = r + gamma E[v^(h-1)(s')], v^0 = 0, fitted backwards by ridge
//     regression of y_j = r_j + gamma phi'_pi,j^T theta_(h-1) on phi_j:
//
//     theta_h = (Phi^T Phi/n + lambda_b I)^{-1} (Phi^T r + gamma Phi^T Phi'_pi theta_(h-1))/n,
//
//     over all the fitted transitions, whatever their time step (the
//     world is time-homogeneous, so every transition informs every q^h).
//     lambda_b is BackupRidge times the mean diagonal entry of
//     Phi^T Phi/n. One factorisation serves every h; H is the longest
//     episode, and LinearModel.Values extends the model for longer logs.
//     Rho is NaN.
//
//     The tail. Each backup composes the projection with the target's
//     transition operator; where the features cannot represent q the
//     composed map can expand, and over a thousand backups its error
//     compounds geometrically (Pendulum: |theta_h| grows about 5% per
//     backup, beyond 1e17 at h = 1000). Only the first H0 horizons are
//     exact backups, H0 at most Backups (DefaultLinearBackups) and
//     chosen as the backup closest to the tail (LinearModel.chooseBackups:
//     the least variance of q^h - q_inf over the fitted transitions; all
//     of them where the backups converge, as on the linear-Gaussian
//     system, about 10 on Pendulum); beyond, the
//     model is built from the stationary solution, by these identities
//     (v the stationary or differential value, s_h the state after h
//     steps from (s, a) under the target):
//
//     gamma < 1:  q^h(s, a) = q(s, a) - gamma^h E[v(s_h) | s, a],
//     gamma = 1:  q^h(s, a) = h rho + q_diff(s, a) - E[v_diff(s_h) | s, a]
//
//     (the second by telescoping r_t = rho + q_diff(s_t, a_t) -
//     E[v_diff(s_(t+1))]). For a mixing chain E[v(s_h) | s, a] tends to
//     the constant kappa = E_(d_pi)[v], so for h > H0
//
//     theta_h = theta_inf + ((h - H0) rho - gamma^(h-H0) delta) 1,   delta = f^T (theta_inf - theta_H0),
//
//     with theta_inf the stationary (rho = 0) or differential solution
//     and 1 the coefficients of the constant function: the constant is
//     matched to the last exact backup on the mean of the fitted
//     transitions (f^T theta is that mean). Its error is
//     gamma^h |E[v(s_h) | s, a] - kappa_H0|, at most
//     2 gamma^h (beta(h) + beta(H0)) sup|v| with beta(t) the total
//     variation distance of the t-step distribution from the stationary
//     one: geometric in H0 for a geometrically mixing chain, and, for
//     gamma < 1, also at most 2 gamma^h sup|v| whatever the mixing. On
//     the linear-Gaussian system with 20 exact backups the tail agrees
//     with 200 exact backups to 1e-4 at h = 200
//     (TestLinearTailLinearGauss). Backups < 0 makes every horizon an
//     exact backup.
//
// Cost: one pass over the data accumulating the moment matrices in
// blocks, about p^2 (stationary) or 2 p^2 (Finite) multiply-adds per
// transition for real actions and p^2/NumActions for discrete ones, then a
// p x p solve. A million transitions with 105 features took 0.5 s with 5
// discrete actions and 1.9 s with real actions and one draw per state
// (2.8 s with the default 16) on two shared cores (BenchmarkLinearFit).
//
// References: Lagoudakis and Parr (2003), "Least-squares policy
// iteration" (LSTD-Q); Bradtke and Barto (1996) (LSTD); Yu and Bertsekas
// (2009) and Tsitsiklis and Van Roy (1999) (average-reward TD, the
// differential form); Le, Voloshin and Yue (2019) (fitted Q evaluation).
type Linear struct {
	// Degree is the degree of the polynomial features. If 0, 2 is used.
	Degree int

	// Ridge is the relative ridge: lambda = Ridge times the mean
	// diagonal entry of Phi^T Phi/n. If 0, 1e-6 is used; if negative,
	// lambda = 0.
	Ridge float64

	// Features names the feature map (see Features above): "poly", the
	// monomials of degree Degree, or "rff", the monomials of the state
	// plus NumRandom random Fourier features of it, crossed with the
	// action. If empty, DefaultLinearFeatures is used.
	Features string
	// NumRandom is the number of random Fourier features of "rff". If 0,
	// DefaultNumRandom is used.
	NumRandom int
	// Bandwidth is the bandwidth of the random Fourier features as a
	// multiple of the median heuristic. If 0, 1 is used.
	Bandwidth float64

	// Finite fits the finite-horizon values q^h indexed by the steps
	// left, instead of the stationary value.
	Finite bool
	// Backups caps the number of exact backward regressions of a Finite
	// fit, which keeps those up to the one closest to the tail
	// (LinearModel.ExactBackups); beyond them q^h is the stationary
	// (gamma < 1) or differential (gamma = 1) solution with a constant
	// matched at the last exact one (see Finite above). If 0,
	// DefaultLinearBackups is used; if negative, every horizon is an
	// exact backup.
	Backups int
	// BackupRidge is the relative ridge of the backward regressions of
	// a Finite fit (lambda_b = BackupRidge times the mean diagonal entry
	// of Phi^T Phi/n). If 0, DefaultBackupRidge is used; if negative, the
	// ridge Ridge is used.
	BackupRidge float64

	// Workers is the number of goroutines of the passes over the data, 1
	// or 2. If 0, 2 is used when GOMAXPROCS allows it. It does not change
	// the result: the steps are always cut into the same two halves,
	// summed in the same order.
	Workers int
}

// DefaultLinearRidge is the relative ridge of Linear when Ridge is 0.
const DefaultLinearRidge = 1e-6

// The defaults of Linear's feature map and finite-horizon recursion,
// chosen by measurement (see Linear).
const (
	DefaultLinearFeatures = "poly"
	DefaultNumRandom      = 100
	DefaultLinearBackups  = 200
	DefaultBackupRidge    = DefaultLinearRidge
)

// maxLinearFeatures caps the number of features (the moment matrices are
// dense p x p).
const maxLinearFeatures = 4096

// linearSettings are the settings of a Linear with defaults filled in.
type linearSettings struct {
	spec        featureSpec
	degree      int
	ridge       float64
	backupRidge float64
	backups     int // 0: every horizon
	workers     int
}

func (l Linear) settings() (linearSettings, error) {
	s := linearSettings{degree: l.Degree, ridge: l.Ridge, workers: l.Workers}
	if s.degree < 0 {
		return s, fmt.Errorf("value: linear: degree %d, want >= 0", s.degree)
	}
	if s.degree == 0 {
		s.degree = 2
	}
	s.spec = featureSpec{kind: l.Features, degree: s.degree, random: l.NumRandom, bandwidth: l.Bandwidth}
	if s.spec.kind == "" {
		s.spec.kind = DefaultLinearFeatures
	}
	if s.spec.kind != "poly" && s.spec.kind != "rff" {
		return s, fmt.Errorf("value: linear: features %q, want \"poly\" or \"rff\"", l.Features)
	}
	if s.spec.random < 0 {
		return s, fmt.Errorf("value: linear: %d random features, want >= 0", s.spec.random)
	}
	if s.spec.random == 0 {
		s.spec.random = DefaultNumRandom
	}
	if !(s.spec.bandwidth >= 0) || math.IsInf(s.spec.bandwidth, 0) {
		return s, fmt.Errorf("value: linear: bandwidth %v, want a finite value >= 0", l.Bandwidth)
	}
	if s.spec.bandwidth == 0 {
		s.spec.bandwidth = 1
	}
	switch {
	case l.Backups == 0:
		s.backups = DefaultLinearBackups
	case l.Backups > 0:
		s.backups = l.Backups
	}
	if math.IsNaN(l.BackupRidge) || math.IsInf(l.BackupRidge, 0) {
		return s, fmt.Errorf("value: linear: backup ridge %v, want a finite value", l.BackupRidge)
	}
	if math.IsNaN(s.ridge) || math.IsInf(s.ridge, 0) {
		return s, fmt.Errorf("value: linear: ridge %v, want a finite value", s.ridge)
	}
	switch {
	case s.ridge == 0:
		s.ridge = DefaultLinearRidge
	case s.ridge < 0:
		s.ridge = 0
	}
	switch {
	case l.BackupRidge == 0:
		s.backupRidge = DefaultBackupRidge
	case l.BackupRidge < 0:
		s.backupRidge = s.ridge
	default:
		s.backupRidge = l.BackupRidge
	}
	if s.workers < 0 {
		return s, fmt.Errorf("value: linear: workers %d, want >= 0", s.workers)
	}
	if s.workers == 0 {
		s.workers = min(2, runtime.GOMAXPROCS(0))
	}
	s.workers = min(s.workers, 2)
	return s, nil
}

// Name returns "linear".
func (Linear) Name() string { return "linear" }

// FitsHorizon reports whether l fits the finite-horizon values (Finite).
func (l Linear) FitsHorizon() bool { return l.Finite }

// Fit solves LSTD-Q on the logged transitions of d (real-valued states)
// with discount gamma in (0, 1] and the target's action distribution pi.
// The model is a *LinearModel.
func (l Linear) Fit(d *dataset.Dataset, gamma float64, pi Target) (Model, error) {
	m, err := l.FitLinear(d, gamma, pi)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// FitLinear is Fit returning the concrete model.
func (l Linear) FitLinear(d *dataset.Dataset, gamma float64, pi Target) (*LinearModel, error) {
	if err := checkDiscount("linear", gamma); err != nil {
		return nil, err
	}
	if d == nil {
		return nil, errors.New("value: linear: no data")
	}
	set, err := l.settings()
	if err != nil {
		return nil, err
	}
	tgt, err := newRealTarget("linear", d, pi)
	if err != nil {
		return nil, err
	}
	if d.NumSteps() == 0 {
		return nil, errors.New("value: linear: the logs have no steps")
	}
	f, err := newLinFeatures(d, set.spec)
	if err != nil {
		return nil, err
	}

	var ws [2]*linWorker
	for w := range ws {
		ws[w] = newLinWorker(f, tgt, gamma, l.Finite)
	}
	parts := stepHalves(d.NumSteps())
	run(set.workers, func(w int) { ws[w].accumulate(d, parts[w][0], parts[w][1]) })
	for _, w := range ws {
		if w.err != nil {
			return nil, w.err
		}
	}
	acc := ws[0]
	acc.add(ws[1])
	return fromMoments(set, l.Finite, f, tgt, gamma, acc, d.MaxLen())
}

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

// LinearModel is a fitted LSTD-Q model: q(s, a) = phi(s, a)^T theta, with
// the feature map of the data it was fitted on (see Linear).
type LinearModel struct {
	// Theta holds the coefficients of a stationary model, nil for a
	// finite-horizon one.
	Theta []float64
	// Thetas[h-1] holds the coefficients of q^h, h = 1..H, for a
	// finite-horizon model (nil otherwise); H is the longest episode of
	// the data it was fitted on.
	Thetas [][]float64
	// Gamma is the discount and Lambda the absolute ridge of the fit;
	// LambdaBackup that of the backward regressions (Finite).
	Gamma, Lambda, LambdaBackup float64
	// Transitions is the number of transitions fitted; Skipped the
	// number left out because the target's distribution at their next
	// state was unknown (discrete actions).
	Transitions, Skipped int
	// ExactBackups is the number of exact backups of a Finite model
	// before its tail (see Linear's Backups), 0 when every horizon is
	// exact.
	ExactBackups int

	rho     float64
	finite  bool
	f       *linFeatures
	target  realTarget
	workers int

	// Finite-horizon recursion, to extend Thetas for longer logs, and its
	// tail beyond the exact backups (backups 0: none).
	chol      *mat.Cholesky
	c         *mat.Dense
	b         []float64
	backups   int
	tailTheta []float64
	tailRho   float64
	meanFeat  []float64
	one       []float64
	gram      *mat.Dense // Phi^T Phi/n, the metric of chooseBackups

	warnings []string
}

// NumFeatures returns the number of features p.
func (m *LinearModel) NumFeatures() int { return m.f.p }

// Rho returns the average reward of a differential model (gamma = 1,
// stationary), NaN for the others.
func (m *LinearModel) Rho() float64 { return m.rho }

// Warnings returns what the fit has to say about itself in plain words: an
// action never logged (its q is fixed by the ridge alone), transitions
// left out.
func (m *LinearModel) Warnings() []string { return slices.Clone(m.warnings) }

// Values returns q, v and next for every step of d (see Model). v(s) is
// sum_a pi(a|s) q(s, a) with pi from d's TargetProbs for discrete actions,
// and for real actions the Monte Carlo mean of q(s, a_k) over the
// Target.Samples actions drawn at s as in the fit (the same draws at the
// same state, so next[j] = v[j+1] where s'_j = s_(j+1)). next[j] is NaN
// where the next state, or for discrete actions the target's
// distribution there, is unknown; for a finite-horizon model it is 0
// after an episode's last step.
func (m *LinearModel) Values(d *dataset.Dataset) (q, v, next []float64, err error) {
	if d == nil {
		return nil, nil, nil, errors.New("value: linear: no data")
	}
	if err := m.target.compatible("linear", d, len(m.f.state.mean)); err != nil {
		return nil, nil, nil, err
	}
	n := d.NumSteps()
	q, v, next = make([]float64, n), make([]float64, n), make([]float64, n)
	thetas := m.Thetas
	if m.finite {
		thetas = m.extend(slices.Clone(m.Thetas), d.MaxLen())
	}
	// theta returns the coefficients for h steps left (stationary: h is
	// ignored); h = 0 is the zero function.
	theta := func(h int) []float64 {
		if !m.finite {
			return m.Theta
		}
		if h == 0 {
			return nil
		}
		return thetas[h-1]
	}
	parts := stepHalves(n)
	var errs [2]error
	run(m.workers, func(w int) {
		errs[w] = m.values(d, parts[w][0], parts[w][1], theta, q, v, next)
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return q, v, next, nil
}

// values fills q, v and next for the steps [lo, hi).
func (m *LinearModel) values(d *dataset.Dataset, lo, hi int, theta func(h int) []float64, q, v, next []float64) error {
	if lo >= hi {
		return nil
	}
	f := m.f
	sc := f.newScratch(m.target)
	// Backwards, so that v[j+1] is known when next[j] is wanted.
	e := episodeOfStep(d, hi-1)
	for j := hi - 1; j >= lo; j-- {
		for j < d.Start[e] {
			e--
		}
		if err := checkRealStep("linear", d, e, j); err != nil {
			return err
		}
		h := d.Start[e+1] - j // steps left
		th := theta(h)
		blk := f.stateAction(sc.x, sc, d, j)
		q[j] = dot(sc.x, th[blk*f.P:blk*f.P+f.P])
		var probs []float64
		if f.numActions > 0 {
			probs = d.TargetProbsAt(j)
			if err := checkTargetRow("linear", d, e, j, probs, "logged"); err != nil {
				return err
			}
		}
		f.expected(sc, d.ObsAt(j), probs)
		v[j] = dot(sc.psi, th)

		// next[j]: v^(h-1)(s'_j).
		thn := theta(h - 1)
		if m.finite && thn == nil {
			next[j] = 0
			continue
		}
		obs, ok := d.NextObs(e, j)
		if ok && f.numActions > 0 {
			probs, ok = d.NextTargetProbs(e, j)
			if ok {
				if err := checkTargetRow("linear", d, e, j, probs, "next"); err != nil {
					return err
				}
			}
		}
		if !ok {
			next[j] = math.NaN()
			continue
		}
		if !allFinite(obs) {
			return fmt.Errorf("value: linear: episode %q step %d: next state %v is not finite", d.IDs[e], j-d.Start[e], obs)
		}
		if f.numActions == 0 && j+1 < hi && j+1 < d.Start[e+1] && sameBits(obs, d.ObsAt(j+1)) {
			// The state of the next step: the same draws would give
			// the same value.
			next[j] = v[j+1]
			continue
		}
		f.expected(sc, obs, probs)
		next[j] = dot(sc.psi, thn)
	}
	return nil
}

// sameBits reports whether two vectors are equal bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range a {
		if math.Float64bits(v) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// monomials are the monomials of degree at most D in n variables, the
// constant first, then by degree: term m >= 1 is term parent[m] times
// z[variable[m]], with the variables of a monomial in non-decreasing
// order, so that each monomial appears once and evaluating all of them
// costs one multiplication each.
type monomials struct {
	parent, variable []int32
}

func newMonomials(n, degree int) monomials {
	m := monomials{parent: []int32{-1}, variable: []int32{0}}
	lo, hi := 0, 1 // the terms of the previous degree
	for range degree {
		for t := lo; t < hi; t++ {
			for v := int(m.variable[t]); v < n; v++ {
				m.parent = append(m.parent, int32(t))
				m.variable = append(m.variable, int32(v))
			}
		}
		lo, hi = hi, len(m.parent)
	}
	return m
}

func (m monomials) len() int { return len(m.parent) }

// exponents returns the exponent vector of every monomial (n variables).
func (m monomials) exponents(n int) [][]int {
	out := make([][]int, m.len())
	out[0] = make([]int, n)
	for t := 1; t < m.len(); t++ {
		e := slices.Clone(out[m.parent[t]])
		e[m.variable[t]]++
		out[t] = e
	}
	return out
}

// eval writes every monomial of z to dst.
func (m monomials) eval(dst, z []float64) {
	dst[0] = 1
	for t := 1; t < len(m.parent); t++ {
		dst[t] = dst[m.parent[t]] * z[m.variable[t]]
	}
}

// numMonomials returns C(n + degree, degree), or -1 beyond limit.
func numMonomials(n, degree, limit int) int {
	c := 1
	for k := 1; k <= degree; k++ {
		c = c * (n + k) / k
		if c > limit {
			return -1
		}
	}
	return c
}

// linFeatures is the feature map of a Linear fit (see Linear).
//
// The state's part is a basis b(x) of the standardised state x: its
// monomials of degree at most Degree, followed, for Features "rff", by the
// random Fourier features (see rffMap). For discrete actions
// phi(s, a) = e_a (x) b(x). For real actions every feature is the product
// of a basis function of the state, term sIdx[t] of b, and a monomial of
// the standardised action y, term aIdx[t] of amono: with "poly" the pairs
// whose joint degree is at most Degree (the joint monomials x^alpha y^beta,
// in the order of newMonomials over (x, y)), with "rff" every basis
// function times every action monomial of degree at most 2. The expected
// features at a state are then E_y[b_i(x) y^beta] = b_i(x) mean_k(y_k^beta):
// the Monte Carlo draws cost the action's few monomials each (3 for one
// action component and degree 2) instead of all the joint features.
type linFeatures struct {
	state, action scaler
	numActions    int // discrete actions; 0 for real ones
	stateDim      int
	actionDim     int
	P             int // features per block
	p             int // features: numActions blocks of P, or P

	smono monomials // monomials of the state
	rff   rffMap    // random Fourier features of the state (none for "poly")
	nb    int       // basis functions of the state: smono.len() + rff.d

	amono      monomials // real actions: monomials of the action
	sIdx, aIdx []int32   // real actions: feature t = b[sIdx[t]] y^amono[aIdx[t]]
}

// featureSpec is how a Linear builds its features.
type featureSpec struct {
	kind      string // "poly" or "rff"
	degree    int
	random    int     // random Fourier features ("rff")
	bandwidth float64 // multiple of the median heuristic ("rff")
}

func newLinFeatures(d *dataset.Dataset, spec featureSpec) (*linFeatures, error) {
	degree := spec.degree
	f := &linFeatures{state: newScaler(d.Obs, d.StateDim), numActions: d.NumActions,
		stateDim: d.StateDim, actionDim: d.ActionDim}
	nvar := d.StateDim
	if d.ActionDim > 0 {
		f.action = newScaler(d.ActionVec, d.ActionDim)
		f.numActions = 0
		nvar += d.ActionDim
	}
	limit := func() error {
		return fmt.Errorf("value: linear: degree %d in %d variables (times %d actions) gives more than %d features; lower Degree",
			degree, nvar, max(f.numActions, 1), maxLinearFeatures)
	}
	ns := numMonomials(f.stateDim, degree, maxLinearFeatures)
	if ns < 0 {
		return nil, limit()
	}
	f.smono = newMonomials(f.stateDim, degree)
	if spec.kind == "rff" {
		f.rff = newRFF(d, f.state, spec.random, spec.bandwidth)
	}
	f.nb = f.smono.len() + f.rff.d
	if f.actionDim == 0 {
		f.P = f.nb
	} else if spec.kind == "rff" {
		f.amono = newMonomials(f.actionDim, 2)
		for i := range f.nb {
			for a := range f.amono.len() {
				f.sIdx = append(f.sIdx, int32(i))
				f.aIdx = append(f.aIdx, int32(a))
			}
		}
		f.P = len(f.sIdx)
	} else {
		if numMonomials(nvar, degree, maxLinearFeatures) < 0 {
			return nil, limit()
		}
		f.amono = newMonomials(f.actionDim, degree)
		index := func(m monomials, n int) map[string]int32 {
			out := map[string]int32{}
			for t, e := range m.exponents(n) {
				out[fmt.Sprint(e)] = int32(t)
			}
			return out
		}
		si, ai := index(f.smono, f.stateDim), index(f.amono, f.actionDim)
		for _, e := range newMonomials(nvar, degree).exponents(nvar) {
			f.sIdx = append(f.sIdx, si[fmt.Sprint(e[:f.stateDim])])
			f.aIdx = append(f.aIdx, ai[fmt.Sprint(e[f.stateDim:])])
		}
		f.P = len(f.sIdx)
	}
	f.p = f.P * max(f.numActions, 1)
	if f.p > maxLinearFeatures {
		return nil, fmt.Errorf("value: linear: %d features (times %d actions) is more than %d; lower Degree or NumRandom",
			f.P, max(f.numActions, 1), maxLinearFeatures)
	}
	return f, nil
}

// basis writes the basis functions of the standardised state z (stateDim
// entries) to dst (nb entries).
func (f *linFeatures) basis(dst, z []float64) {
	nm := f.smono.len()
	f.smono.eval(dst[:nm], z)
	f.rff.eval(dst[nm:f.nb], z)
}

// joint writes the features of a real-action pair to x from the
// standardised (state, action) vector z, using xs (nb) and ya (amono)
// as scratch.
func (f *linFeatures) joint(x, z, xs, ya []float64) {
	f.basis(xs, z[:f.stateDim])
	f.amono.eval(ya, z[f.stateDim:])
	for t := range x {
		x[t] = xs[f.sIdx[t]] * ya[f.aIdx[t]]
	}
}

// linScratch is the per-goroutine scratch space of the feature map.
type linScratch struct {
	z, x   []float64 // standardised variables, features of a block
	xs, ya []float64 // basis of the state, monomials of an action
	ybar   []float64 // mean of ya over the draws
	psi    []float64 // expected features, p
	smp    *mcSampler
}

func (f *linFeatures) newScratch(t realTarget) *linScratch {
	sc := &linScratch{z: make([]float64, f.stateDim+f.actionDim), x: make([]float64, f.P),
		psi: make([]float64, f.p), xs: make([]float64, f.nb)}
	if f.actionDim > 0 {
		sc.ya, sc.ybar = make([]float64, f.amono.len()), make([]float64, f.amono.len())
	}
	if t.cont != nil {
		sc.smp = newMCSampler(t)
	}
	return sc
}

// stateAction writes the features of step j's (s, a) within its block to
// x and returns the block of phi(s_j, a_j) they fill (the action for
// discrete actions, else 0): phi = e_block (x) x.
func (f *linFeatures) stateAction(x []float64, sc *linScratch, d *dataset.Dataset, j int) int {
	f.state.apply(sc.z, d.ObsAt(j))
	if f.numActions > 0 {
		f.basis(x, sc.z)
		return int(d.Action[j])
	}
	f.action.apply(sc.z[f.stateDim:], d.ActionVecAt(j))
	f.joint(x, sc.z, sc.xs, sc.ya)
	return 0
}

// expected sets sc.psi = E_{a~pi(.|s)} phi(s, a) at the state obs: from
// the probabilities probs for discrete actions, from the Monte Carlo draws
// of sc.smp for real ones (the mean of phi over the draws, as state
// basis functions times the mean action monomials summed in draw order).
func (f *linFeatures) expected(sc *linScratch, obs, probs []float64) {
	P := f.P
	f.state.apply(sc.z, obs)
	if f.numActions > 0 {
		f.basis(sc.x, sc.z)
		for a, pa := range probs {
			blk := sc.psi[a*P : (a+1)*P]
			if pa == 0 {
				clear(blk)
				continue
			}
			for i, v := range sc.x {
				blk[i] = pa * v
			}
		}
		return
	}
	f.basis(sc.xs, sc.z[:f.stateDim])
	za := sc.z[f.stateDim:]
	clear(sc.ybar)
	sc.smp.draw(obs, func(_ int, a []float64) {
		f.action.apply(za, a)
		f.amono.eval(sc.ya, za)
		for i, v := range sc.ya {
			sc.ybar[i] += v
		}
	})
	inv := 1 / float64(sc.smp.t.samples)
	for i := range sc.ybar {
		sc.ybar[i] *= inv
	}
	for t := range sc.psi {
		sc.psi[t] = sc.xs[f.sIdx[t]] * sc.ybar[f.aIdx[t]]
	}
}

// linChunk is the number of transitions whose rows are gathered before
// they are added to the moments.
const linChunk = 256

// linWorker accumulates the moments of the transitions of a range of
// steps. For every transition j, with block k_j and monomials x_j (so
// that phi_j = e_(k_j) (x) x_j), it gathers the row x_j and a right-hand
// row
//
//	stationary: [phi_j - gamma psi_j, r_j, 1]
//	finite:     [x_j, psi_j, r_j, 1]
//
// (psi_j = E_pi phi(s'_j, .)), and adds X_k^T R_k to block k of the
// moments, per chunk of transitions sorted by block: the rows of
// sum_j phi_j row_j^T that are not zero.
type linWorker struct {
	f      *linFeatures
	target realTarget
	gamma  float64
	finite bool

	K, Pp, Q, Qp int       // blocks, padded row width, right width (padded)
	m            []float64 // K blocks of Pp x Qp
	gdiag        []float64 // diagonal of Phi^T Phi, p
	n, skipped   int
	noNext       int // transitions without a next state
	err          error

	// The chunk, in step order and sorted by block.
	L          int
	blk        []int
	xb, rb     []float64
	xs, rs     []float64
	cnt, start []int
	sc         *linScratch
}

func newLinWorker(f *linFeatures, t realTarget, gamma float64, finite bool) *linWorker {
	w := &linWorker{f: f, target: t, gamma: gamma, finite: finite, K: max(f.numActions, 1)}
	w.Pp = f.P + f.P%2
	w.Q = f.p + 2
	if finite {
		w.Q += f.P
	}
	w.Qp = (w.Q + 3) &^ 3
	w.m = make([]float64, w.K*w.Pp*w.Qp)
	w.gdiag = make([]float64, f.p)
	w.blk = make([]int, linChunk)
	w.xb, w.rb = make([]float64, linChunk*w.Pp), make([]float64, linChunk*w.Qp)
	if w.K > 1 {
		w.xs, w.rs = make([]float64, linChunk*w.Pp), make([]float64, linChunk*w.Qp)
		w.cnt, w.start = make([]int, w.K), make([]int, w.K)
	}
	w.sc = f.newScratch(t)
	return w
}

// accumulate adds the transitions of steps [lo, hi) of d.
func (w *linWorker) accumulate(d *dataset.Dataset, lo, hi int) {
	if lo >= hi {
		return
	}
	f, sc := w.f, w.sc
	P, p := f.P, f.p
	e := episodeOfStep(d, lo)
	for j := lo; j < hi; j++ {
		for j >= d.Start[e+1] {
			e++
		}
		if w.err = checkRealStep("linear", d, e, j); w.err != nil {
			return
		}
		obs, ok := d.NextObs(e, j)
		if !ok {
			w.noNext++
			continue
		}
		if !allFinite(obs) {
			w.err = fmt.Errorf("value: linear: episode %q step %d: next state %v is not finite", d.IDs[e], j-d.Start[e], obs)
			return
		}
		var probs []float64
		if f.numActions > 0 {
			if probs, ok = d.NextTargetProbs(e, j); !ok {
				w.skipped++
				continue
			}
			if w.err = checkTargetRow("linear", d, e, j, probs, "next"); w.err != nil {
				return
			}
		}
		l := w.L
		x := w.xb[l*w.Pp : l*w.Pp+P]
		r := w.rb[l*w.Qp : (l+1)*w.Qp]
		blk := f.stateAction(x, sc, d, j)
		w.blk[l] = blk
		for i, v := range x {
			w.gdiag[blk*P+i] += v * v
		}
		f.expected(sc, obs, probs)
		if w.finite {
			copy(r, x)
			copy(r[P:], sc.psi)
			r[P+p] = d.Reward[j]
			r[P+p+1] = 1
		} else {
			for i, v := range sc.psi {
				r[i] = -w.gamma * v
			}
			for i, v := range x {
				r[blk*P+i] += v
			}
			r[p] = d.Reward[j]
			r[p+1] = 1
		}
		w.n++
		if w.L++; w.L == linChunk {
			w.flush()
		}
	}
	w.flush()
}

// flush adds the gathered chunk to the moments.
func (w *linWorker) flush() {
	L := w.L
	if L == 0 {
		return
	}
	w.L = 0
	block := w.Pp * w.Qp
	if w.K == 1 {
		addATB(L, w.Pp, w.Qp, w.xb, w.rb, w.m)
		return
	}
	clear(w.cnt)
	for _, k := range w.blk[:L] {
		w.cnt[k]++
	}
	s := 0
	for k, c := range w.cnt {
		w.start[k] = s
		s += c
	}
	pos := slices.Clone(w.start)
	for l, k := range w.blk[:L] {
		i := pos[k]
		pos[k]++
		copy(w.xs[i*w.Pp:(i+1)*w.Pp], w.xb[l*w.Pp:(l+1)*w.Pp])
		copy(w.rs[i*w.Qp:(i+1)*w.Qp], w.rb[l*w.Qp:(l+1)*w.Qp])
	}
	for k, c := range w.cnt {
		i := w.start[k]
		addATB(c, w.Pp, w.Qp, w.xs[i*w.Pp:], w.rs[i*w.Qp:], w.m[k*block:(k+1)*block])
	}
}

// add adds o's moments to w's.
func (w *linWorker) add(o *linWorker) {
	for i, v := range o.m {
		w.m[i] += v
	}
	for i, v := range o.gdiag {
		w.gdiag[i] += v
	}
	w.n += o.n
	w.skipped += o.skipped
	w.noNext += o.noNext
}

// linMoments are the moments of a fit divided by the number of
// transitions n: G = Phi^T Phi/n, C = Phi^T Phi'_pi/n, b = Phi^T r/n,
// f = Phi^T 1/n and the diagonal of G. In the stationary form
// Phi^T (Phi - gamma Phi'_pi)/n is accumulated directly: g holds it and c
// is zero.
type linMoments struct {
	g, c  *mat.Dense
	b, f  []float64
	gdiag []float64
}

func (w *linWorker) moments() linMoments {
	f := w.f
	P, p := f.P, f.p
	inv := 1 / float64(w.n)
	mo := linMoments{g: mat.NewDense(p, p, nil), c: mat.NewDense(p, p, nil),
		b: make([]float64, p), f: make([]float64, p), gdiag: make([]float64, p)}
	block := w.Pp * w.Qp
	for k := range w.K {
		mk := w.m[k*block : (k+1)*block]
		for i := range P {
			row := mk[i*w.Qp : (i+1)*w.Qp]
			gi := k*P + i
			if w.finite {
				for c := range P {
					mo.g.Set(gi, k*P+c, row[c]*inv)
				}
				for c := range p {
					mo.c.Set(gi, c, row[P+c]*inv)
				}
				mo.b[gi], mo.f[gi] = row[P+p]*inv, row[P+p+1]*inv
				continue
			}
			for c := range p {
				mo.g.Set(gi, c, row[c]*inv)
			}
			mo.b[gi], mo.f[gi] = row[p]*inv, row[p+1]*inv
		}
	}
	for i, v := range w.gdiag {
		mo.gdiag[i] = v * inv
	}
	return mo
}

// warnings returns the plain-words remarks of a fit.
func (w *linWorker) warnings(f *linFeatures) []string {
	var out []string
	if f.numActions > 0 {
		var never []int
		for a := range f.numActions {
			if w.gdiag[a*f.P] == 0 { // the constant feature of action a
				never = append(never, a)
			}
		}
		if len(never) > 0 {
			out = append(out, fmt.Sprintf("actions %v never appear in the fitted transitions: their q is set by the ridge alone (0)", never))
		}
	}
	if w.skipped > 0 {
		out = append(out, fmt.Sprintf("%d transitions left out: the target's action distribution at their next state is unknown (no next_target_prob_k columns)", w.skipped))
	}
	return out
}
