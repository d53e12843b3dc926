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
// Episodic logs (dataset.Dataset.Terminal): an episode that ended in a
// terminal state sits afterwards in an absorbing state with reward 0.
// Every estimator reads such a log with that state made explicit
// (dataset.Dataset.Absorbing): terminal episodes padded with it to the
// log's horizon (Horizon: the missing steps count 0, so the IS family pads
// with zero reward), or one step beyond (LongRun, gamma < 1: (1 - gamma)
// E_d0[V] counts the absorbing tail as zeros, and the learners see the
// absorbing state's zero value and self-loop). The long-run average reward
// (gamma = 1) of such a log is 0 for every policy and is refused
// (ErrAbsorbingAverage).
//
// Products of per-step ratios are accumulated as sums of log-ratios and
// exponentiated only after subtracting the largest log-weight, so a horizon
// of 10,000 steps neither overflows nor underflows.
package ope
