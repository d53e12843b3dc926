// Package value learns what returns are worth under the target policy:
// the action value q(s, a) and the state value v(s) = sum_a pi(a|s) q(s, a)
// (or E_{a~pi(s)} q(s, a) for real actions). A Learner fits a Model from
// logged transitions, the discount and the target's whole action
// distribution (Target); the estimators of package ope read the model's
// values at the logged steps: fitted Q evaluation ("fqe") directly, the
// doubly robust estimator ("dr") beside a density ratio. MQL (minimax
// Q-learning, "mql") learns q by a kernel loss on the Bellman residuals
// instead of by regression.
//
// Two kinds of model, one per estimand of package ope:
//
//   - Stationary (long-run): q = r + gamma P^pi q for gamma < 1; for
//     gamma = 1 the differential value q(s,a) + rho = r(s,a) + E[v(s')]
//     with the average reward rho a free scalar (Model.Rho), pinned by one
//     normalisation documented on each learner.
//   - Finite horizon: q^h, the expected discounted sum of the next h
//     rewards, q^h = r + gamma P^pi q^(h-1), q^0 = 0, indexed by the steps
//     left in the episode, so that logs of unequal lengths share one model.
//
// References:
//
//	Le, Voloshin, Yue (2019), "Batch policy learning under constraints"
//	(fitted Q evaluation); Lagoudakis and Parr (2003), LSTD-Q; Kallus and
//	Uehara (2020), "Double reinforcement learning for efficient off-policy
//	evaluation in Markov decision processes"; Tang, Feng, Li, Zhou, Liu
//	(2020), "Doubly robust bias reduction in infinite horizon off-policy
//	estimation".
package value
