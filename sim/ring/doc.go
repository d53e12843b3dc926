// Package ring is the ring MDP of the paper's Appendix B: n states (n odd)
// on a circle and two deterministic actions, L (one step counterclockwise,
// reward 0) and R (one step clockwise, reward 1).
//
// The behavior policy pi0 picks R with probability rho and the target pi
// with probability 1 - rho. Both leave the uniform distribution invariant,
// so the stationary density ratio is w(s) = 1 for every s, while the
// variance of the trajectory-wise importance weight grows like A_rho^T
// (WeightVariance). The ring is the paper's smallest illustration of the
// curse of horizon.
//
// References:
//
//	Liu, Li, Tang, Zhou. Breaking the Curse of Horizon: Infinite-Horizon
//	Off-Policy Estimation. NeurIPS 2018. Appendix B (app:example): Claim 1,
//	the Proposition pro:toytraj and the WIS proposition after it.
package ring
