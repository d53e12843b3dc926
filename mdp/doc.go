// Package exact computes exact values, state visitations and stationary
// density ratios of a policy in a finite MDP that exposes its table
// (Finite), the ground truth against which the estimators of package
// ope are measured.
//
// Every function first builds the policy's Markov chain once, as a sparse
// matrix: for each state s, the merged list of next states s' with
//
//	P_pi(s'|s) = sum_a pi(a|s) T(s'|s,a),   r_pi(s) = sum_a pi(a|s) r(s,a),
//
// then either pushes a state distribution through it (Value, VisitationT)
// or solves for its fixed point (Visitation, Ratio).
//
// Quantities, in the paper's notation (Sections 2 and 3):
//
//	d_t          distribution of s_t, d_0 the start distribution
//	gamma_t      gamma^t / sum_{u<T} gamma^u, the normalised discount
//	R^T_pi       sum_{t<T} gamma_t E[r_t]                          (Value)
//	d^T_pi       sum_{t<T} gamma_t d_t                        (VisitationT)
//	d_pi         lim_{T->inf} d^T_pi: the stationary distribution of P_pi
//	             for gamma = 1, the normalised discounted visitation
//	             (1-gamma) sum_t gamma^t d_t for gamma < 1         (Visitation)
//	w_{pi/pi0}   d_pi / d_pi0                                          (Ratio)
//
// References:
//
//	Liu, Li, Tang, Zhou. Breaking the Curse of Horizon: Infinite-Horizon
//	Off-Policy Estimation. NeurIPS 2018. Section 2 (R^T and R_pi),
//	Eq. (dpi) (the visitation d_pi), Eq. (eq:rrr) (R_pi = E_{d_pi}[r]),
//	Lemma lem:fixdpidisc (d_pi = (1-gamma) d_0 + gamma d_pi P_pi),
//	Section 3 (w_{pi/pi0}). Labels are those of the LaTeX source.
package mdp
