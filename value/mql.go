package value

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
)

// MQL is minimax Q-learning (Uehara, Huang, Jiang 2020), "mql": the q of
// the target minimising the kernel loss
//
//	max_{g in G, ||g|| <= 1} L(q, g)^2,   L(q, g) = E_D[ g(s, a) (r + gamma q(s', pi) - q(s, a)) ],   (MQL Eq. (6))
//
// G the unit ball of a reproducing kernel Hilbert space of functions of
// (s, a), q(s', pi) = sum_a pi(a|s') q(s', a). For gamma = 1 the
// differential form r - rho + q(s', pi) - q(s, a) with the average reward
// rho a free scalar. The estimate is (1 - gamma) E_d0[q(s0, pi)] (rho for
// gamma = 1), normalised as every ihope value is; it needs the target's
// whole action distribution, no behavior probabilities.
//
// Discrete states and actions (tabular): q is one value per logged pair,
// extended to pairs never logged by the pooling rules of kernelloss.Chain
// (an unlogged action is the behavior's mix of the actions logged at its
// state, a state never left an average logged state), and G the
// functions of the logged pairs. The loss, a sum over the logged pairs of
// squared Bellman residuals weighted by d_D, vanishes exactly at the
// Bellman equations of the logged pairs,
//
//	q(p) = r(p) - rho + gamma sum_s' P(s'|p) v(s'),   v(s) = sum_{p at s} pi~(p) q(p),
//
// a square system solved exactly at the state level by GMRES
// (kernelloss.Chain.Values; for gamma = 1 with one closed class, the others
// restarting as in Tabular, and c . v = 0). These are the Bellman
// equations of the count model with its pooling rule, so mql's estimate
// equals fqe's (tabular) except at states never left (the count model
// loops there; mql continues like an average logged state) and, for
// gamma = 1, up to the restarted classes; and it equals mwl's exactly
// (the transposed system, MWL Theorem 4).
//
// Real states, discrete actions (kernel, closed form): q(s, a) =
// phi(s, a)^T theta with phi the monomials of degree Degree of the
// standardised state crossed with the one-hot action (Linear's "poly"
// features), and G the RKHS of k((s, a), (s~, a~)) = exp(-||x - x~||^2 /
// (2 h^2)) 1[a = a~] (h the median heuristic times Bandwidth), replaced by
// KernelFeatures random Fourier features per action (rffMap). Then the
// loss is
//
//	|| (1/n) sum_i psi(s_i, a_i) (r_i - (phi(s_i, a_i) - gamma phi(s'_i, pi))^T theta) ||^2,
//
// a least-squares problem in theta (with rho appended for gamma = 1),
// minimised with a ridge on theta (for gamma < 1 the per-action constants
// are free, so that a large ridge shrinks q to a function of the action
// alone; for gamma = 1 they are penalised, their sum being a direction the
// loss does not see) by one linear solve. The ridge on each coefficient
// is Ridge (DefaultMQLRidge, 1e-6) times that coefficient's own curvature
// in the loss, as if every feature had first been scaled to unit
// curvature. One ridge for all, scaled to their mean curvature (before),
// shrank the low-degree coefficients, whose curvature is far below the
// quartic ones', hardest; for gamma = 1 on a log started away from the
// stationary law the shrunk part of q(s) - q(s') moved into rho, a bias
// that did not shrink with the data (-0.15 at n = 100 and 400 episodes on
// lineargauss.DiscreteProblem started at s_0 ~ N(3, 0.5^2), now -0.01 to
// -0.02; -0.03 to -0.10 on another such world, now within fqe's spread).
// With G the span of phi instead of an RKHS, this would be LSTD-Q
// (Linear): MQL weighs the same Bellman residuals by the kernel's test
// functions.
//
// Any ridge shrinks q towards 0, and the estimate with it towards its
// value at q = 0, the kernel-weighted mean of the logged rewards (the
// behavior's level, not the target's): rho = rho_0 + c^T theta is linear
// in theta. The bias is a fixed fraction of the gap, not shrinking with
// the data. On a world whose q is quadratic (3-d switching
// linear-Gaussian, the behavior's long-run reward 0.13 against the
// target's 0.38, 5 seeds of 40 and 200 episodes of 200 steps) ridge 1e-4
// gave mean errors -0.013 / -0.010 (gamma = 1) and -0.045 / -0.018
// (gamma = 0.95, long-run), every seed negative at n = 200; ridge 1e-6
// gives +0.001 / +0.003 and -0.012 / +0.001, as 1e-8 does.
//
// The defaults were measured on the discrete-action linear-Gaussian
// problem (lineargauss.DiscreteProblem, n = 20, 80, 320 episodes of 100
// steps, 8 seeds; RMSE against the quadrature truth, gamma = 0.9 / 1):
//
//	                                   n = 20          n = 80          n = 320
//	degree 2, ridge 1e-4               0.102 / 0.146   0.087 / 0.150   0.101 / 0.145
//	degree 4, ridge 1e-4               0.052 / 0.045   0.021 / 0.010   0.025 / 0.014
//	degree 4, ridge 1e-6 (default)     0.051 / 0.039   0.027 / 0.024   0.025 / 0.026
//	degree 4, ridge 1e-3               0.159 / 0.223   0.106 / 0.164   0.083 / 0.147
//	degree 4, cross-validated ridge    0.111 / 0.146   0.046 / 0.071   0.025 / 0.016
//	degree 6, ridge 1e-4               0.152 / 0.184   0.138 / 0.165   0.109 / 0.150
//	degree 4, one ridge (before)       0.114 / 0.117   0.055 / 0.042   0.025 / 0.027 (4 seeds)
//
// (degree 2 cannot represent q; 50 random Fourier features added to the
// monomials were worse than either, 0.016 to 0.24, measured with one
// ridge). Degree 4 cannot represent this q exactly either: with ridge 1e-6
// (or 1e-8) its error at gamma = 1 is a bias of +0.015, +0.019, +0.026 at
// n = 20, 80, 320, which ridge 1e-4's shrinkage (-0.014 to -0.041 here)
// happened to offset, hence its better gamma = 1 column; the offset is not
// a property of mql and does not carry to other worlds (above). Degree 6
// is shrunk far harder by ridge 1e-4 (bias -0.15); with ridge 1e-8 it has
// 0.060 / 0.021 / 0.015 at gamma = 1.
//
// Real states, real actions (kernel, closed form; Target.Continuous,
// ihope estimate --target-draws): the same loss and solve with one block
// instead of one per action. q's features are the joint monomials of
// degree Degree of the standardised (state, action) vector z = (x, y)
// (Linear's "poly" features for real actions, 15 for a 1-d state and
// action at degree 4), G is the RKHS of the Gaussian kernel of z,
// exp(-||z - z~||^2 / (2 h^2)) (the product of the state's and the
// action's Gaussian kernels, where discrete actions have 1[a = a~]; h the
// median heuristic of the logged z times Bandwidth), in KernelFeatures
// random Fourier features of z, and phi(s', pi) = E_{a'~pi} phi(s', a')
// at the next and start states is the mean of phi(s', a') over the
// target's actions drawn there (Target.Samples of them, as Linear reads
// them: with policy.Draws of one draw per state, that draw). q is linear
// in theta, so one draw per state is unbiased for the loss's residuals
// and the fit stays consistent, as LSTD-Q's does (Linear). On the 1-d
// linear-Gaussian problem (lineargauss.Problem1D, whose q is quadratic in
// (s, a)) with one draw per state, the RMSE over 3 seeds falls from 0.030
// to 0.020 (gamma = 0.9) and from 0.0065 to 0.0037 (gamma = 1) as the log
// grows from 20 to 80 episodes of 100 steps (package ope's
// TestMinimaxDrawsConverge).
//
// Real states, discrete actions (neural, Neural set; --value-model
// neural): q(s, .) = Shift + Unit net(x), a network of the standardised
// state with one linear output per action (Shift = mean(r)/(1 - gamma),
// Unit = sd(r)/(1 - gamma); for gamma = 1, Shift = 0 and Unit =
// 10 sd(r)), and the loss is the kernel loss above on samples of B
// transitions, the squared RKHS norm of
//
//	mu = (1/B) sum_i (delta_i - kappa) e_{a_i} delta_{x_i},   delta_i = r_i + gamma q(s'_i, pi) - q(s_i, a_i),
//
// q(s'_i, pi) the exact mean over the next_target_prob_k columns, under
// the kernel with half the median bandwidth in random Fourier features
// (kernelloss.FeatureLoss; the V-statistic, whose diagonal adds
// E_D[delta^2]/B: the U-statistic is unbounded below on a sample, and a
// flexible q found that). The scalar kappa is profiled out of every
// sample's loss in closed form (kappa = <mu_delta, mu_1> / ||mu_1||^2):
// for gamma = 1 it is the average reward rho; for gamma < 1 it is
// (1 - gamma) times a shift of q, the direction the loss sees only
// through (1 - gamma) and that Adam otherwise crawls along (without it
// the estimate stayed near the behavior's mean reward after 3000
// iterations). The model's kappa is profiled over all training
// transitions at the end (value.MinimaxNeural has the training's
// settings: samples of 4096 held for 100 of 1000 Adam steps).
//
// References:
//
//	M. Uehara, J. Huang, N. Jiang. Minimax Weight and Q-Function Learning
//	for Off-Policy Evaluation. ICML 2020 (Eq. (6), Theorem 3 on the RKHS
//	closed form, Theorem 4 on the duality with MWL).
type MQL struct {
	// Degree is the degree of q's polynomial features (real states). If
	// 0, 4 is used.
	Degree int
	// KernelFeatures is the number of random Fourier features of the
	// state kernel per action (real states). If 0, 128 is used.
	KernelFeatures int
	// Bandwidth is the kernel bandwidth as a multiple of the median
	// heuristic. If 0, 1 is used.
	Bandwidth float64
	// Ridge is the relative ridge (real states). If 0, DefaultMQLRidge
	// is used. It must not be negative.
	Ridge float64
	// CrossValidate chooses the relative ridge instead, by Kernel's rule
	// (ratio.Kernel: 5-fold cross-validation of the held-out U-statistic
	// of the loss over the grid 1e-6 ... 100, one-standard-error rule).
	CrossValidate bool
	// Workers is the number of goroutines of the pass over the data. If
	// 0, GOMAXPROCS. It does not change the result.
	Workers int
	// Neural chooses the neural form on real states (see MQL), with the
	// settings Network; the fields above are then unused.
	Neural  bool
	Network MinimaxNeural
}

var (
	_ Learner = MQL{}
	_ Model   = (*MQLTabularModel)(nil)
	_ Model   = (*MQLKernelModel)(nil)
	_ Model   = (*MQLNeuralModel)(nil)
)

// Name returns "mql".
func (MQL) Name() string { return "mql" }

// FitsHorizon returns false: MQL learns the stationary (or differential)
// q only.
func (MQL) FitsHorizon() bool { return false }

// Fit learns q on d with discount gamma in (0, 1] and the target's action
// distribution: the tabular solve for discrete states, the kernel fit for
// real states (discrete actions, or real ones with the target's draws in
// target.Continuous).
func (l MQL) Fit(d *dataset.Dataset, gamma float64, target Target) (Model, error) {
	if err := checkDiscount("mql", gamma); err != nil {
		return nil, err
	}
	if d == nil || d.NumEpisodes() == 0 {
		return nil, errors.New("value: mql: no data")
	}
	switch {
	case d.Discrete() && l.Neural:
		return nil, errors.New("value: mql: the neural form needs real-valued states; the tabular solve is exact on discrete ones")
	case d.Discrete():
		return fitMQLTabular(d, gamma, target)
	case l.Neural:
		return l.fitNeural(d, gamma, target)
	}
	return l.fitKernel(d, gamma, target)
}

// MQLTabularModel is the tabular q of MQL on the logged pairs.
type MQLTabularModel struct {
	// Iterations and Residual are GMRES's; Restarted counts the states of
	// restarted closed classes (gamma = 1).
	Iterations int
	Residual   float64
	Restarted  int

	nS, nA int
	gamma  float64
	rho    float64
	q      []float64 // per (s, a), pooled where not logged
	v      []float64 // per state, 0 outside the chain
}

func fitMQLTabular(d *dataset.Dataset, gamma float64, target Target) (*MQLTabularModel, error) {
	if d.ActionDim != 0 || d.NumActions <= 0 {
		return nil, errors.New("value: mql: needs discrete actions")
	}
	pi, err := discreteTarget(d, target)
	if err != nil {
		return nil, fmt.Errorf("value: mql: %w", err)
	}
	pp, err := kernelloss.FromData(d, pi)
	if err != nil {
		return nil, fmt.Errorf("value: mql: %w", err)
	}
	return solveMQLTabular(pp, gamma)
}

// FitCounts learns the tabular q from the problem of a log's sufficient
// statistics (kernelloss.FromCounts, as package ope's streaming sums build
// it): Fit's tabular solve without the data.
func (MQL) FitCounts(pp *kernelloss.Pairs, gamma float64) (*MQLTabularModel, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("value: mql: discount %v outside (0, 1]", gamma)
	}
	return solveMQLTabular(pp, gamma)
}

// solveMQLTabular solves the Bellman equations of the pooled chain of pp
// (kernelloss.Chain.Values) and extends q to the pairs never logged.
func solveMQLTabular(pp *kernelloss.Pairs, gamma float64) (*MQLTabularModel, error) {
	ch, err := pp.Chain(gamma)
	if err != nil {
		return nil, fmt.Errorf("value: mql: %w", err)
	}
	vals, err := ch.Values()
	if err != nil {
		return nil, fmt.Errorf("value: mql: %w", err)
	}
	nS, nA := pp.NumStates, pp.NumActions
	m := &MQLTabularModel{Iterations: vals.Iterations, Residual: vals.Residual, Restarted: ch.Restarted,
		nS: nS, nA: nA, gamma: gamma, rho: math.NaN(), q: make([]float64, nS*nA), v: make([]float64, nS)}
	if gamma == 1 {
		m.rho = vals.Rho
	}
	for i, s := range ch.States {
		m.v[s] = vals.V[i]
		if ch.Never[i] {
			for a := range nA {
				m.q[int(s)*nA+a] = vals.V[i]
			}
		}
	}
	// Logged pairs, then the pooled value of the unlogged actions of
	// every state that was left.
	for lo := 0; lo < len(pp.State); {
		s := int(pp.State[lo])
		hi, pooled, ds := lo, 0.0, 0.0
		for ; hi < len(pp.State) && int(pp.State[hi]) == s; hi++ {
			m.q[s*nA+int(pp.Action[hi])] = vals.Q[hi]
			pooled += pp.Weight[hi] * vals.Q[hi]
			ds += pp.Weight[hi]
		}
		for a := range nA {
			if pp.Index[s*nA+a] < 0 {
				m.q[s*nA+a] = pooled / ds
			}
		}
		lo = hi
	}
	return m, nil
}

// Rho returns the average reward (gamma = 1), NaN otherwise.
func (m *MQLTabularModel) Rho() float64 { return m.rho }

// Q returns q(s, a), 0 for a state the model does not know.
func (m *MQLTabularModel) Q(s, a int) float64 { return m.q[s*m.nA+a] }

// V returns v(s), 0 for a state the model does not know.
func (m *MQLTabularModel) V(s int) float64 { return m.v[s] }

// Values returns q(s_j, a_j), v(s_j) and v(s'_j) (NaN where s'_j is
// unknown) for every step j of d.
func (m *MQLTabularModel) Values(d *dataset.Dataset) (q, v, next []float64, err error) {
	if d == nil || !d.Discrete() || d.ActionDim != 0 || d.NumStates != m.nS || d.NumActions != m.nA {
		return nil, nil, nil, fmt.Errorf("value: mql: the model has %d states and %d actions", m.nS, m.nA)
	}
	n := d.NumSteps()
	q, v, next = make([]float64, n), make([]float64, n), make([]float64, n)
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			s, a := int(d.State[j]), int(d.Action[j])
			if s < 0 || s >= m.nS || a < 0 || a >= m.nA {
				return nil, nil, nil, fmt.Errorf("value: mql: episode %q step %d: state %d or action %d out of range", d.IDs[e], j-lo, s, a)
			}
			q[j], v[j] = m.q[s*m.nA+a], m.v[s]
			next[j] = math.NaN()
			if ns, ok := d.NextState(e, j); ok && ns >= 0 && ns < m.nS {
				next[j] = m.v[ns]
			}
		}
	}
	return q, v, next, nil
}

// MQLKernelModel is the q of MQL on real states and discrete actions.
type MQLKernelModel struct {
	// Ridge is the relative ridge used (coefficient t's ridge is Ridge
	// times its own curvature, see ownCurvature) and Lambda Ridge times
	// the quadratic programme's Scale, the coefficients' mean curvature;
	// Grid, HeldOutLoss and HeldOutSE the cross-validation's record (nil
	// when Ridge was fixed) and Folds the folds that held data.
	Ridge, Lambda                float64
	Grid, HeldOutLoss, HeldOutSE []float64
	Folds                        int
	// Transitions is the number of transitions of the fit, Skipped those
	// left out for want of the target's distribution at the next state.
	Transitions, Skipped int
	// Loss is the V-statistic of the kernel loss at the solution.
	Loss float64

	f      *linFeatures
	target realTarget
	theta  []float64
	rho    float64
}

// Rho returns the average reward (gamma = 1), NaN otherwise.
func (m *MQLKernelModel) Rho() float64 { return m.rho }

// DefaultMQLRidge is MQL's relative ridge on real states, chosen by
// measurement (see MQL): small enough that its shrinkage of q, which
// moves the estimate towards the logged rewards' level, is below the
// sampling error.
const DefaultMQLRidge = 1e-6

// mqlRidges is the grid of relative ridges of the cross-validation.
var mqlRidges = []float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100}

// mqlFolds is the number of cross-validation folds.
const mqlFolds = 5

// fitKernel is the kernel fit on real states, in the two passes of
// mql_stream.go: the first fixes the scaling and the kernel's scale, the
// second sums the loss's moments; FitMoments solves.
func (l MQL) fitKernel(d *dataset.Dataset, gamma float64, target Target) (*MQLKernelModel, error) {
	set, err := l.kernelSettings()
	if err != nil {
		return nil, err
	}
	rt, err := newRealTarget("mql", d, target)
	if err != nil {
		return nil, err
	}
	prep, err := l.NewPrep(gamma)
	if err != nil {
		return nil, err
	}
	f, err := kernelloss.FirstPass(d, prep.Add, prep.Features)
	if err != nil {
		return nil, err
	}
	if d.ActionDim > 0 {
		f.target = rt
	}
	m, err := f.momentsOf(d, set.workers)
	if err != nil {
		return nil, err
	}
	return l.FitMoments(f, m)
}

// Values returns q(s_j, a_j), v(s_j) and v(s'_j) (NaN where s'_j or the
// target's distribution there is unknown) for every step j of d.
func (m *MQLKernelModel) Values(d *dataset.Dataset) (q, v, next []float64, err error) {
	if d == nil {
		return nil, nil, nil, errors.New("value: mql: no data")
	}
	if err := m.target.compatible("mql", d, m.f.stateDim); err != nil {
		return nil, nil, nil, err
	}
	f := m.f
	sc := f.newScratch(m.target)
	n := d.NumSteps()
	q, v, next = make([]float64, n), make([]float64, n), make([]float64, n)
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if err := checkRealStep("mql", d, e, j); err != nil {
				return nil, nil, nil, err
			}
			blk := f.stateAction(sc.x, sc, d, j)
			q[j] = dot(sc.x, m.theta[blk*f.P:(blk+1)*f.P])
			f.expected(sc, d.ObsAt(j), d.TargetProbsAt(j))
			v[j] = dot(sc.psi, m.theta)
			next[j] = math.NaN()
			obs, ok := d.NextObs(e, j)
			if !ok {
				continue
			}
			var probs []float64 // real actions: the draws at obs
			if f.numActions > 0 {
				if probs, ok = d.NextTargetProbs(e, j); !ok {
					continue
				}
			}
			f.expected(sc, obs, probs)
			next[j] = dot(sc.psi, m.theta)
		}
	}
	return q, v, next, nil
}
