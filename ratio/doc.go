// Package ratio learns the stationary density ratio
//
//	w(s) = d_pi(s) / d_pi0(s)
//
// between the state visitation of a target policy pi and that of the
// behavior policy pi0 that logged the data, by minimising the paper's
// mini-max (kernel) loss
//
//	D(w) = E[ Delta_i Delta_j k(s'_i, s'_j) ],   Delta_i = w(s_i) beta_i - w(s'_i),
//
// with beta_i = pi(a_i|s_i) / pi0(a_i|s_i) and w normalised by its mean
// over the logged states (Theorems 1 and 2). The discounted case adds,
// before every episode, a dummy transition into its first state whose
// Delta is 1 - w(s_0), and weighs step t by gamma^(t+1) (Theorem 3,
// Algorithm 2, Appendix "Algorithm Details").
//
// Tabular handles discrete states. With the delta kernel the paper uses
// there, D(w) is a quadratic form in the vector w, so the minimiser under
// the normalisation is the solution of a sparse linear system, found
// exactly (to a relative residual of 1e-12) by projected conjugate
// gradients instead of stochastic gradient descent.
//
// Kernel handles real-valued states the same way: with w a non-negative
// combination of a constant and Gaussian bumps at logged states, and the
// RBF kernel of the loss replaced by random Fourier features, D(w) is a
// small quadratic form in the coefficients, minimised exactly (an
// active-set method of closed-form KKT solves) with a ridge chosen by
// cross-validation; it is deterministic and fits 150,000 transitions in
// about 1.5 s. Neural, the paper's feed-forward network trained by Adam
// on minibatches of the same loss, lives beside it.
//
// Marginal learns, for the finite-horizon estimand instead, the
// time-indexed ratios w_t(s) = d^pi_t(s) / d^pi0_t(s) of tabular
// marginalized importance sampling (Xie, Ma, Wang 2019), by pushing the
// logged start distribution through the importance-weighted empirical
// transitions of every step t.
//
// A learned ratio is consumed by the density-ratio estimator of package
// ope, R = sum_i v_i r_i / sum_i v_i with v_i = gamma^t_i w(s_i) beta_i.
//
// State-action ratios. A PairLearner fits w(s, a) = d_pi(s, a) / d_D(s, a)
// against the distribution d_D of the logged transitions themselves
// (every transition weighing the same), from the target's whole action
// distribution at the next and start states and without the behavior's
// probabilities: MWL (minimax weight learning, Uehara, Huang and Jiang
// 2020) and DualDICE (Nachum et al. 2019, with GenDICE's normalisation for
// gamma = 1). Their models' StepRatios are w(s_j, a_j), which an
// estimator uses as they are (R = E_D[w r]), multiplying them by no
// policy ratio and no discount. Discrete states are solved exactly on the
// logged pairs (SolvePairs gives the exact ratio of a world's population);
// real states with discrete actions in closed form with w linear in
// per-action Gaussian bumps; MWL also runs on real actions, with w linear
// in Gaussian bumps of the (state, action) vector and the target read
// from actions drawn from it (value.ActionDraws).
//
// References:
//
//	Q. Liu, L. Li, Z. Tang, D. Zhou. Breaking the Curse of Horizon:
//	Infinite-Horizon Off-Policy Estimation. NeurIPS 2018.
package ratio
