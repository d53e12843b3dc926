package ratio

import (
	"errors"
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/value"
)

// DualDICE is the state-action ratio of DualDICE (Nachum, Chow, Dai, Li
// 2019), "dualdice", with the normalisation of GenDICE (Zhang, Dai, Li,
// Schuurmans 2020) for the average reward. For gamma < 1 it solves the
// saddle point (DualDICE Eq. (15), the Fenchel dual of its Eq. (9))
//
//	min_nu max_zeta J(nu, zeta) = E_D[ (nu(s, a) - gamma nu(s', pi)) zeta(s, a) - zeta(s, a)^2 / 2 ] - (1 - gamma) E_{d0}[ nu(s0, pi) ] + (lambda/2) |nu|^2,
//
// whose zeta is w = d_pi / d_D. nu and zeta are linear in fixed features,
// zeta = phi^T theta, nu = psi^T eta, and J is a quadratic form:
// minimising over eta first (eta = (c - G^T theta) / lambda) leaves
//
//	max_theta  -|G^T theta - c|^2 / (2 lambda) - theta^T Sigma theta / 2,   G = E_D[phi(s, a) (psi(s, a) - gamma psi(s', pi))^T],  c = (1 - gamma) E_{d0}[psi(s0, pi)],  Sigma = E_D[phi phi^T],
//
// that is MWL's loss |M theta + b|^2 (M = -G^T, b = c) plus the ridge
// lambda E_D[w^2]: DualDICE is minimax weight learning whose test
// functions are nu's features, regularised by the second moment of w
// (the -zeta^2/2 of its saddle point) instead of MWL's ridge on the
// coefficients. For gamma = 1 the start term vanishes and zeta = 0 solves
// the saddle point; GenDICE's normalisation E_D[zeta] = 1 is imposed as a
// constraint (the limit of its penalty), as MWL does.
//
// Discrete states and actions (tabular): phi and psi are the indicator
// features of the logged pairs with the pooling rules of kernelloss.Chain.
// Then G is square and nonsingular (gamma < 1), and as lambda tends to 0
// the saddle point tends to the exact solution of the flow equations,
// which is MWL's: with Ridge 0, the default, DualDICE is MWL exactly
// (and so equals mql's estimate). With Ridge > 0 (gamma < 1 only) it
// minimises the flow residual plus lambda E_D[w^2] by conjugate gradients
// (kernelloss.Chain.RidgeFlow), which shrinks w towards 0.
//
// Real states, discrete actions: the features of MWL (the bumps for zeta,
// the random Fourier features of the kernel for nu), the same constraints
// (zeta signed unless Kernel.NonNegative; E_D[zeta] = 1 for gamma = 1) and the
// same relative ridge (DefaultPairRidge) on E_D[w^2], to which a jitter
// of 1e-6 of its mean diagonal on every coefficient is added (overlapping
// bumps are nearly collinear on the data). On the discrete-action
// linear-Gaussian problem its RMSE was within 10% of MWL's at ridges
// 1e-7 to 1e-5 (0.044, 0.025, 0.011 for n = 20, 80, 320 at gamma = 0.9;
// 0.018, 0.013, 0.0045 at gamma = 1), and worse at larger ridges (0.034
// at n = 320, gamma = 0.9, ridge 1e-4), where the pull of E_D[w^2]
// towards w = 0 is felt.
//
// Real states, discrete actions (neural, Neural set; --ratio-model
// neural): the kernel form of DualDICE with zeta a network, that is MWL's
// neural loss (see MWL) plus lambda E_D[w~^2] (Network.Ridge,
// value.DefaultNeuralDICERidge = 1e-4) over the sample, with nu's
// maximum taken in closed form over the RKHS ball as above. The paper's
// own neural form was not chosen: its Eq. (11) (one network nu, w = nu -
// B nu) squares a one-sample estimate of B nu, which is biased whenever
// transitions are random (double sampling; the linear-Gaussian test
// world has noise 0.5), and gives w only per logged transition, not as a
// function of (s, a) as PairModel promises; its saddle-point form (Eqs.
// (13)-(15), two networks nu and zeta trained by gradient descent-ascent,
// as in dice_rl's NeuralDualDice) has no loss that falls as the fit
// improves, so no held-out loss to monitor, and is known to need careful
// step sizes. The kernel form is the limit of the closed-form fit above
// (same loss, same regulariser), so the two are comparable on the same
// data. As in MWL, w is normalised by its sample mean (the penalty then
// acts on w's spread, not its level).
//
// References:
//
//	O. Nachum, Y. Chow, B. Dai, L. Li. DualDICE: Behavior-Agnostic
//	Estimation of Discounted Stationary Distribution Corrections.
//	NeurIPS 2019 (Eqs. (9), (15)). R. Zhang, B. Dai, L. Li, D.
//	Schuurmans. GenDICE: Generalized Offline Estimation of Stationary
//	Values. ICLR 2020 (the normalisation constraint for gamma = 1).
type DualDICE struct {
	// Ridge is the tabular fit's lambda relative to the loss's mean
	// curvature (see kernelloss.Chain.RidgeFlow); 0 takes the limit
	// lambda -> 0, the exact flow. It must not be negative.
	Ridge float64
	// Kernel holds the settings of the real-state fit (its Ridge fixes
	// the relative lambda there; 0 cross-validates it).
	Kernel PairKernel
	// Neural chooses the neural form on real states (see above), with
	// the settings Network (its Ridge is lambda).
	Neural  bool
	Network value.MinimaxNeural
}

// Name returns "dualdice".
func (DualDICE) Name() string { return "dualdice" }

// FitPairs learns w on d: tabular for discrete states, the kernel fit for
// real states and discrete actions.
func (l DualDICE) FitPairs(d *dataset.Dataset, gamma float64, target value.Target) (PairModel, error) {
	if l.Ridge < 0 {
		return nil, fmt.Errorf("ratio: dualdice: ridge %v, want >= 0", l.Ridge)
	}
	switch {
	case d != nil && d.ActionDim > 0:
		return nil, errors.New("ratio: dualdice needs discrete actions (mwl runs on real actions with the target's draws)")
	case d != nil && d.Discrete() && l.Neural:
		return nil, errors.New("ratio: dualdice: the neural form needs real-valued states; the tabular solve is exact on discrete ones")
	case d != nil && d.Discrete():
		return fitPairTabular("dualdice", d, gamma, target, l.Ridge)
	case l.Neural:
		return fitPairNeural("dualdice", d, gamma, target, l.Network, true)
	}
	return fitPairKernel("dualdice", d, gamma, target, l.Kernel, penaltySecondMoment)
}
