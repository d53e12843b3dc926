// Package gridwalk is dice_rl's GridWalk, the tabular navigation world of
// the DICE papers, with its family of epsilon-greedy policies and exact
// truths.
//
// The walker moves on a 10 x 10 grid towards the goal in the corner
// (9, 9); every step pays exp(-2 d / 10), d the Manhattan distance from
// the cell reached to the goal. The task is continuing (no terminal
// state) and starts in a uniformly drawn cell. The policies are
// epsilon-greedy around dice_rl's shortest-path action, with
// epsilon = 0.1 + 0.6 (1 - alpha): the target is alpha = 1 (epsilon 0.1),
// the behavior alpha = 0 (epsilon 0.7), and TargetAlphas is a family of
// targets at growing distance from the behavior.
//
// Truths of the target (alpha = 1), from the uniform start (package
// exact):
//
//	dice_rl's on-policy value: normalised discounted reward of 100-step
//	trajectories, gamma = 0.99  (mdp.Value)              0.90921958
//	normalised discounted value (1 - gamma) E[V(s0)],
//	gamma = 0.99, the DICE estimators' estimand (mdp.LongRun) 0.93870063
//	long-run average reward, gamma = 1 (mdp.LongRun)      0.98976178
//
// and of the behavior (alpha = 0): 0.59335591, 0.65607895, 0.76535946.
//
// # Definitions and the choices made where they were ambiguous
//
// Everything is read from dice_rl's code (github.com/google-research/
// dice_rl): the world from environments/gridworld/navigation.py
// (Navigation and GridWalk(length=10)), the policies from
// get_navigation_policy there and from get_env_and_policy in
// environments/env_policies.py ('grid': epsilon_explore =
// 0.1 + 0.6 (1 - alpha)), the settings from the scripts.
//
//   - States: dice_rl's tabular observation s = 10 x + y. Actions, in its
//     order: x+1, y+1, x-1, y-1; a move off the grid stays in place.
//   - Reward: paid for the cell reached (step() moves, then calls
//     reward_fn at the new position), 1 on the goal itself.
//   - Start: the map has no 'S' cell, so Navigation.reset draws the start
//     uniformly among all 100 cells, the goal included.
//   - No termination: GridWalk passes no done_fn (always False); episodes
//     end at the trajectory length, 100 in the DICE experiments
//     (google/scripts/xm_run_neural_dice.py, max_traj_dict['grid']).
//   - The shortest-path action: dice_rl's breadth-first search from the
//     goal breaks ties by its visiting order, which gives y+1 everywhere
//     but the column y = 9 (x+1), and x+1 on the goal (a move into the
//     wall). It is reproduced exactly, since the policies' values depend
//     on it through the walls.
//   - epsilon-greedy as dice_rl builds it: every action has eps/4, the
//     shortest-path action 1 - eps more (so 1 - 3 eps / 4 in all).
//   - Target and behavior: alpha = 1 is the target of every run_*.py
//     script (get_target_policy's default), alpha = 0 the behavior of
//     their default datasets (create_dataset.py --alpha, the DICE sweeps).
//     The family of targets adds the alpha_target values 0.75 ... 0.95
//     swept by BayesDICE (google/scripts/xm_run_neural_bayes_dice.py).
//   - Discount 0.99, the default of the DICE scripts and sweeps
//     (run_neural_dice.py, xm_run_*; run_tabular_dual_dice.py's own
//     default is 0.995). dice_rl's on-policy value is the normalised
//     discounted reward of the on-policy trajectories
//     (estimators/estimator.py, get_fullbatch_average: sum gamma^t r_t /
//     sum gamma^t over 100-step trajectories), which is mdp.Value with
//     T = 100; the DICE estimators target the infinite-horizon
//     (1 - gamma) E[V(s0)], which is mdp.LongRun.
//
// References:
//
//	Nachum, Chow, Dai, Li. DualDICE: Behavior-Agnostic Estimation of
//	Discounted Stationary Distribution Corrections. NeurIPS 2019.
//	Yang, Nachum, Dai, Li, Schuurmans. Off-Policy Evaluation via the
//	Regularized Lagrangian. NeurIPS 2020.
//	Code: github.com/google-research/dice_rl,
//	environments/gridworld/navigation.py, environments/env_policies.py,
//	estimators/estimator.py, scripts/ and google/scripts/.
package gridwalk
