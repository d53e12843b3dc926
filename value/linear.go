package value

import (
	"errors"
	"fmt"
	"math"
	"runtime"

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
// as in linear-quadratic control (sim/lineargauss). These are Features
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

// prepare returns what a fit of l on d needs besides the data's moments:
// its settings, the target's reader and the feature map (standardised over
// d), or why d cannot be fitted.
func (l Linear) prepare(d *dataset.Dataset, pi Target) (linearSettings, realTarget, *linFeatures, error) {
	set, err := l.settings()
	if err != nil {
		return set, realTarget{}, nil, err
	}
	tgt, err := newRealTarget("linear", d, pi)
	if err != nil {
		return set, tgt, nil, err
	}
	if d.NumSteps() == 0 {
		return set, tgt, nil, errors.New("value: linear: the logs have no steps")
	}
	f, err := newLinFeatures(d, set.spec)
	return set, tgt, f, err
}

// FitLinear is Fit returning the concrete model.
func (l Linear) FitLinear(d *dataset.Dataset, gamma float64, pi Target) (*LinearModel, error) {
	if err := checkDiscount("linear", gamma); err != nil {
		return nil, err
	}
	if d == nil {
		return nil, errors.New("value: linear: no data")
	}
	set, tgt, f, err := l.prepare(d, pi)
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
