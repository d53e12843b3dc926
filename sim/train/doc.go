// Package train learns the policies that the paper's experiments evaluate.
//
// QLearning is tabular Q-learning with Boltzmann (softmax) exploration along
// one long continuing run, as the paper builds its Taxi policies (Section 5,
// "Taxi"): "we set our target policy to be the final policy pi_* after
// running Q-learning for 1000 iterations, and set another policy pi_+ after
// 950 iterations". Its zero value mirrors the authors' code
// (zt95/infinite-horizon-off-policy-estimation, taxi/run_exp_discrete.py,
// function Q_learning, and the Q_learning class it imports):
//
//   - Q starts uniform on [0, 1) in every entry (numpy's rand);
//   - the environment is reset once and never again: the run is a single
//     continuing trajectory;
//   - every step samples the action from softmax(Q(s, .)/2), updates
//     Q(s,a) <- (1-0.01) Q(s,a) + 0.01 (r + 0.99 max_a' Q(s',a')),
//     and moves on to s';
//   - one "iteration" is 5000 steps; the authors saved softmax(Q/2) every
//     50 iterations as pi0 ... pi19, so their pi_k is the snapshot at
//     iteration 50(k+1): pi19 (the target pi_*) at 1000 iterations
//     (5,000,000 steps) and pi18 (pi_+) at 950.
//
// A run is reproducible: the same seed, environment and settings give the
// same policies. The authors' own snapshots are shipped by package
// sim/taxi; a run of QLearning reproduces their recipe, not their random
// numbers. Scored by exact average reward over T = 400 steps (package
// exact), seed 1 gives
//
//	iteration      750     800     850     900     950    1000
//	seed 1      -0.710  -0.637  -0.537  -0.411  -0.256  -0.128
//	authors     -0.703  -0.618  -0.515  -0.404  -0.266  -0.141  (pi14..pi19)
//
// against -0.999 for the uniform policy.
package train
