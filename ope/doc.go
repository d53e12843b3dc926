// Package ope holds the off-policy estimators: the paper's density-ratio
// estimator (which consumes a ratio learned by package ratio) and the
// baselines of its Appendix A and Section 5 — naive averaging of behavior
// rewards, the on-policy oracle, trajectory-wise and step-wise
// (per-decision) importance sampling, each plain (IS) and self-normalised
// (WIS), and a count-based model.
//
// Every estimator targets the same quantity, the normalised T-step value
//
//	R^T_pi = E_pi[ sum_t gamma_t r_t ],   gamma_t = gamma^t / sum_{t<T} gamma^t,
//
// so gamma = 1 gives the average reward per step and gamma < 1 the
// normalised discounted reward. Episodes may have different lengths; each
// uses its own T.
//
// Products of per-step ratios are accumulated as sums of log-ratios and
// exponentiated only after subtracting the largest log-weight, so a horizon
// of 10,000 steps neither overflows nor underflows.
package ope
