// Package synthetic is SCOPE-RL's synthetic environment (basicgym's
// BasicEnv) with discrete actions: a 5-dimensional unit-norm state, 10
// actions shown to the system as 3-dimensional context vectors, linear
// dynamics and a linear reward, episodes of 10 steps. Its states are real,
// so there is no table: the truths are high-precision Monte Carlo values.
//
// With x = s/5 and u = c_a/3 (c_a the context of action a), a step pays
// r(s, a) = theta_s . x + theta_a . u + x' M_r u and moves to y/|y| with
// y = A x + B u + (C u . x), every coefficient a standard normal draw.
// Everything random in the world but the start (uniform on the sphere) is
// drawn from numpy's RandomState(random_state), reproduced bit for bit
// here (Mersenne Twister and numpy's polar-method normals), so New(12345)
// is the world of SCOPE-RL's registered "BasicEnv-discrete-v0".
//
// Truths (expected undiscounted return over the 10 steps from the reset
// distribution, SCOPE-RL's V(pi) with its default gamma = 1; mean ± one
// standard error of 4,000,000 episodes, package tests check them against
// plain rollouts):
//
//	policy                     epsilon  return     (normalised, /10)
//	greedy, the default target  0        9.428664 ± 0.000128  (0.9428664)
//	target family               0.1      8.521306 ± 0.000237
//	                            0.5      5.164010 ± 0.000341
//	uniform                     1        1.519935 ± 0.000314
//	behavior                    0.3      6.792034 ± 0.000318  (0.6792034)
//
// # Definitions and the choices made where they were ambiguous
//
// The world follows SCOPE-RL's code (github.com/hakuhodo-technologies/
// scope-rl): basicgym/envs/synthetic.py (BasicEnv: reset, step, the
// action contexts) and basicgym/envs/simulator/function.py
// (StateTransitionFunction, RewardFunction), with the defaults
// state_dim = 5, n_actions = 10, action_dim = 3, step_per_episode = 10,
// reward_type "continuous", reward_std = obs_std = 0.
//
//   - The reward is paid for (s, a) before the move, as step() computes it.
//   - The transition's third term, (state_action_coef @ action).T @ state,
//     is a scalar (a dot product) added to every component of the next
//     state before it is normalised: that is what the code computes, and
//     it is kept.
//   - The three RandomState(random_state) streams (transition, reward,
//     environment) all start from the same seed, so their first draws
//     coincide (the transition's A[0] row is the reward's theta_s); kept.
//   - The start state is drawn from the caller's generator, not numpy's:
//     its law (a normalised standard normal vector) is what matters.
//   - Policies: SCOPE-RL's examples log with epsilon-greedy heads
//     (EpsilonGreedyHead) around a DDQN trained online, epsilon = 0.3 for
//     the behavior, 0 and 1 for the evaluated policies. A trained network
//     cannot be reproduced here, so the base policy is the myopic greedy
//     policy argmax_a r(s, a), computable from the world itself; the
//     epsilons are SCOPE-RL's (plus 0.1 and 0.5 in the target family).
//   - The continuous-action version (action_type "continuous", the action
//     being the 3-dimensional vector itself) and the rest of the package's
//     plumbing (logging real states with discrete actions) are left for
//     later.
//
// References:
//
//	Kiyohara, Kishimoto, Kawakami, Kobayashi, Nakata, Saito. SCOPE-RL: A
//	Python Library for Offline Reinforcement Learning and Off-Policy
//	Evaluation. arXiv:2311.18206, 2023. Code: basicgym/envs/synthetic.py,
//	basicgym/envs/simulator/function.py, basicgym/__init__.py.
package synthetic
