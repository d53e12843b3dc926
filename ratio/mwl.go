package ratio

import (
	"errors"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/value"
)

// MWL is minimax weight learning (Uehara, Huang, Jiang 2020), "mwl": the
// state-action ratio w(s, a) = d_pi(s, a) / d_D(s, a) minimising the
// kernel loss
//
//	max_{f in F, ||f|| <= 1} L(w, f)^2,   L(w, f) = E_D[ w(s, a) (gamma f(s', pi) - f(s, a)) ] + (1 - gamma) E_{d0}[ f(s0, pi) ],   (MWL Eq. (2))
//
// f(s, pi) = sum_a pi(a|s) f(s, a), F the unit ball of a reproducing
// kernel Hilbert space of functions of (s, a); for gamma = 1 subject to
// E_D[w] = 1 (the average-reward form, in which the start term
// vanishes). L(w, f) = 0 for every f exactly when w d_D is the target's
// visitation, so the loss needs the target's whole action distribution at
// the next and start states but no behavior probabilities. The estimate is
// E_D[w r] (package ope; its self-normalised form E_D[w r] / E_D[w] is
// mwl's default).
//
// Discrete states and actions (tabular). w is one value per logged pair
// and F the functions of the logged pairs, extended to the pairs the log
// never shows by the pooling rules of kernelloss.Chain (an action never
// logged at a state is the behavior's mix of the actions logged there; a
// state never left is an average logged state). The kernel loss is then a
// sum of squared flow residuals, one per logged pair,
//
//	res(p) = pi~(p) x~(s_p) - d_D(p) w(p),   x = (1 - gamma) d0 + gamma sum_p d_D(p) w(p) P(.|p),
//
// a square linear system with a unique exact solution (loss 0) for
// gamma < 1, and for gamma = 1 with the normalisation and one closed class
// (the others restart, as in value.Tabular): the flow equation of the
// pooled empirical chain, solved at the state level by GMRES
// (kernelloss.Chain.Flow). d_D(p) w(p) is then the target's visitation in the
// count model with its pooling rules, so mwl's estimate is the count
// model's long-run value (model-based, tabular fqe) except at states never
// left (the count model loops there) and, for gamma = 1, up to the
// restarted classes; it equals mql's exactly (the two solves are
// transposes, MWL Theorem 4's duality). With the plain delta kernel on
// every pair instead, the flow equations of pairs never logged cannot
// hold, and least squares spreads their misfit by shrinking the whole
// flow: on Taxi (n = 200, T = 400, seed 1, gamma = 0.99, 2.6% of the
// target's mass on pairs never logged) it gave E_D[w] = 0.198 and a
// self-normalised estimate of -0.354 against the truth -0.196.
//
// Real states, discrete actions (kernel, closed form). w is linear in a
// fixed feature map, per action the constant and the Gaussian bumps of
// Kernel, w(s, a) = phi(x)^T theta_a, and F is the RKHS of the kernel
// k((s, a), (s~, a~)) = exp(-||x - x~||^2 / (2 h^2)) 1[a = a~], replaced by
// D_k random Fourier features per action (psi(s, a) = e_a (x) psi(x)).
// Then L(w, f) = f^T (M theta + b) with
//
//	M = (1/n) sum_i (gamma psi(s'_i, pi) - psi(s_i, a_i)) phi(s_i, a_i)^T,   b = (1 - gamma) (1/m) sum_e psi(s^e_0, pi),
//
// and the loss is ||M theta + b||^2, a least-squares problem (kernelloss.Quadratic,
// one pass over the data); MWL minimises it plus lambda times the squared
// bump coefficients (the per-action constants free, so that a large ridge
// shrinks w to a function of the action alone), for gamma = 1 subject to
// E_D[w] = 1: one linear (KKT) solve (kernelloss.QP). lambda is the relative
// ridge DefaultPairRidge (1e-6) times the mean curvature of the bumps'
// coefficients. w is not constrained to be non-negative
// (PairKernelModel.Negative counts the transitions where it is;
// PairKernel.NonNegative imposes it, as ratio.Kernel does). Measured on
// the discrete-action linear-Gaussian problem
// (lineargauss.DiscreteProblem, n = 20, 80, 320 episodes of 100 steps;
// RMSE of the self-normalised estimate against the quadrature truth,
// gamma = 0.9 / 1), first with w >= 0 imposed, seeds 10-13:
//
//	                                   n = 20          n = 80          n = 320
//	ridge 1e-7                         0.044 / 0.018   0.025 / 0.013   0.011 / 0.0043
//	ridge 1e-6                         0.043 / 0.018   0.024 / 0.013   0.010 / 0.0034
//	ridge 1e-5                         0.044 / 0.018   0.026 / 0.013   0.010 / 0.0019
//	ridge 1e-4                         0.042 / 0.010   0.027 / 0.018   0.010 / 0.0082
//	Kernel's cross-validation          0.123 / 0.187   0.162 / 0.260   0.036 / 0.129
//
// then at ridge 1e-6, seeds 1-8: with w >= 0, 0.036 / 0.017 (n = 80) and
// 0.043 / 0.044 (n = 320, one seed missing by 0.12: the non-negative
// bumps of its feature draw could not follow w, loss 1e-4 against 1e-8
// for other draws); without it (the default) 0.033 / 0.016 and
// 0.015 / 0.0055.
//
// The cross-validation of ratio.Kernel fails here: the held-out loss is
// flat near 0 over the grid, and the one-standard-error rule picks ridges
// (1e-3 to 100) that shrink w towards a function of the action alone.
// The unnormalised estimate E_D[w r] differed from the self-normalised one
// by less than 1% of the RMSE.
//
// Real states, real actions (kernel, closed form; Target.Continuous,
// ihope estimate --target-draws). The same loss and solve with one block
// instead of one per action: w(s, a) = phi(z)^T theta with phi the
// constant and the Gaussian bumps of the scaled (state, action) vector
// z = (x, y) (centres sampled from the logged z, the median bandwidth of
// the logged z), F the RKHS of the Gaussian kernel of z (the product of
// the state's and the action's Gaussian kernels, where discrete actions
// have 1[a = a~]) in D_k random Fourier features of z, and
// psi(s', pi) = E_{a'~pi} psi(s', a') at the next and start states the
// mean of psi(s', a') over the target's actions drawn there
// (value.ActionDraws: Target.Samples of them; with policy.Draws of one
// draw per state, that draw). The loss is linear in psi(s', pi), so one
// draw per state leaves M and b unbiased. On the 1-d linear-Gaussian
// problem (lineargauss.Problem1D, where w is a ratio of Gaussians of
// (s, a)) with one draw per state, the RMSE over 3 seeds falls from 0.031
// to 0.019 (gamma = 0.9) and from 0.0079 to 0.0031 (gamma = 1) as the log
// grows from 20 to 80 episodes of 100 steps (package ope's
// TestMinimaxDrawsConverge). The neural form needs discrete actions.
//
// Real states, discrete actions (neural, Neural set; --ratio-model
// neural). w is a network of the standardised state with one positive
// (exponential) output per action, w(s, a) = net(x)_a, and the loss is
// the same kernel loss: on a sample of B transitions i and S start states
// s0_k (all the episodes' starts, or B of them), with w~_i = w(s_i, a_i) / z,
// z the sample mean of w(s_i, a_i), the squared RKHS norm of the signed
// measure
//
//	mu = (1/B) sum_i w~_i (gamma pi(.|s'_i) delta_{x'_i} - e_{a_i} delta_{x_i}) + ((1 - gamma)/S) sum_k pi(.|s0_k) delta_{x0_k}
//
// under the kernel above with half the median bandwidth, in D random
// Fourier features (kernelloss.FeatureLoss: the V-statistic, at a cost
// linear in B), the target's distributions at s'_i and s0_k taken exactly
// from the next_target_prob_k and target_prob_k columns. w is normalised
// by its sample mean for every gamma: for gamma = 1 that is the
// constraint E_D[w] = 1; for gamma < 1 the population solution has
// E_D[w] = 1 too (take f = 1 in Eq. (2)), but the loss sees a change of
// w's level only through (1 - gamma)^2, so an unnormalised network
// spends its iterations on the level. Adam runs 1000 steps, each sample
// of B = 4096 held for 100 of them (value.MinimaxNeural gives the
// settings and the measurements behind them); the final w is divided by
// its mean over the fitted transitions, so E_D[w] = 1 exactly and the
// self-normalised and plain estimates agree. Its accuracy is measured in
// the README: within about 0.1 of the truth on the test problem, short
// of it by 0.04-0.19 where the closed form is within 0.07, and the bias
// (about -0.1) stays as n grows to 640 episodes (the network's
// exponential output does not reach the near-zero ratios of the actions
// the target never takes far from 0).
//
// References:
//
//	M. Uehara, J. Huang, N. Jiang. Minimax Weight and Q-Function Learning
//	for Off-Policy Evaluation. ICML 2020 (Eq. (2), Lemma 1, Theorem 2 on
//	the RKHS closed form, Theorem 4 on the duality with MQL).
type MWL struct {
	// Kernel holds the settings of the real-state fit.
	Kernel PairKernel
	// Neural chooses the neural form on real states (see above), with
	// the settings Network.
	Neural  bool
	Network value.MinimaxNeural
}

// Name returns "mwl".
func (MWL) Name() string { return "mwl" }

// FitPairs learns w on d: tabular for discrete states, the kernel fit for
// real states (discrete actions, or real ones with the target's draws).
func (l MWL) FitPairs(d *dataset.Dataset, gamma float64, target value.Target) (PairModel, error) {
	switch {
	case d != nil && d.Discrete() && l.Neural:
		return nil, errors.New("ratio: mwl: the neural form needs real-valued states; the tabular solve is exact on discrete ones")
	case d != nil && d.Discrete():
		return fitPairTabular("mwl", d, gamma, target, 0)
	case l.Neural:
		return fitPairNeural("mwl", d, gamma, target, l.Network, false)
	}
	return fitPairKernel("mwl", d, gamma, target, l.Kernel, penaltyBumps)
}
