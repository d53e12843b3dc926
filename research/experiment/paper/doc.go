// Package paper registers the paper's experiments with package
// experiment (Section 5 and Appendix B, and Figure 4's traffic lights):
// "ring", "taxi-average", "taxi-discounted", "pendulum-average",
// "pendulum-discounted" and "sumo", one file per experiment. Import it for
// its side effect (import _ ".../experiment/paper") to make them known to
// experiment.Lookup and experiment.Names, as the command line does.
//
// # The registered experiments
//
// ring (Appendix B): a ring of RingStates = 5 states, behavior P(R) =
// RingRho = 0.45, target P(R) = 0.55. Panel "variance": the variance of
// the trajectory weight over L steps, Monte Carlo from RingMC = 20000
// trajectories per seed (metrics var_mc, var_mc_se) against the exact
// A_rho^L - 1 (var_analytic), L = 1..50. Panel "T": MSE vs T = 10..1000
// of all eight estimators (the IS variants included) from n = 20
// trajectories. rho = 0.45 keeps the Monte Carlo variance reliable up to
// L = 50 (its relative standard error grows like 1.075^L / sqrt(M)).
//
// taxi-average (Figure 1, gamma = 1) and taxi-discounted (Figure 2,
// gamma = 0.99): target pi19; panels "n" (n = 30..800), "behavior" (eight
// behavior policies ordered by their divergence from the target: the
// mixtures (1-alpha) pi19 + alpha pi18 for alpha = 0.25, 0.5, 0.75, then
// pi18 = the paper's pi+, pi17, ..., pi14), "T" (T = 50..1500) and, for
// the discounted case, "gamma" (0.95, 0.97, 0.99, 0.995). Fixed values:
// behavior pi18, T = 400, n = 100 (average; the caption of Figure 1 fixes
// n and not T) or n = 200 (discounted, the caption of Figure 2).
// taxi-average adds "scatter" (estimated d_pi(s) = w(s) x the share of
// logged steps in s against the exact stationary d_pi, one seed, n = 100)
// and "tv" (the total-variation distance between the two, vs n: the
// tabular solver minimises the loss exactly, by conjugate gradients run to
// convergence rather than by the paper's stochastic training, so the
// paper's curve along training iterations becomes a curve along n).
// Estimators: the on-policy oracle, naive, trajectory-wise and step-wise
// WIS, model-based and the tabular density ratio (bch-tabular). The truth
// is exact (mdp.Value from the reset distribution, T steps) everywhere.
//
// pendulum-average (Figure 3(a, b), gamma = 1) and pendulum-discounted
// (Figure 3(c, d), gamma = PendulumGamma = 0.99): Pendulum with target
// pi_* and behavior (1-alpha) pi_* + alpha pi_+ (package sim/pendulum);
// panels "alpha" (0, 0.25, 0.5, 0.75, 1) and "T" (200, 500, 1000, 2000;
// average) or "gamma" (0.95, 0.97, 0.99, 0.995; discounted). Fixed values:
// n = 150, T = 1000, alpha = 1. Estimators: the on-policy oracle
// (ope.OnPolicy over rollout.SimulatorContinuous), naive, trajectory-wise and step-wise WIS and
// the neural density ratio (bch-neural, with the settings of
// PendulumLearner); there is no model-based estimator for real-valued
// states. The truth is a Monte Carlo estimate from target rollouts whose
// start states are stratified over the reset box (its standard error is
// stored with it, truth_method "monte-carlo"), computed once per run and
// setting: the T-step value from reset, swing-up included (-0.18 at T =
// 1000, against a stationary average reward of -0.0085; the density-ratio
// estimator aims at the latter up to O(1/T)).
//
// sumo (Figure 4, average reward): SUMO's single intersection with target
// pi_* (CEM iteration 10) and behaviors 1..4 (CEM iterations 6..9); panels
// "n" (50..500), "behavior" and "T" (100..800 steps of 6 s). Fixed values:
// n = SumoEpisodes = 250, T = SumoT = 400, behavior SumoBehavior = 2.
// Estimators: the on-policy oracle (n target rollouts of T steps), naive,
// trajectory-wise and step-wise WIS and the neural density ratio (with
// SumoLearner). The truth is a Monte Carlo estimate from
// SumoTruthRollouts target rollouts of the longest T, with its standard
// error. Running it needs the sumo binary; without it a run fails with
// traci.ErrNotFound.
//
// # Common random numbers
//
// Within a seed the logged data are common random numbers: the stream
// that draws them is named by T and the behavior only, so the n = 30 logs
// are the first 30 trajectories of the n = 800 logs, and every gamma sees
// the same logs. Each point is still an unbiased estimate of its MSE; the
// curves are smoother than with independent data. SUMO, whose simulation
// dominates, goes further: a seed logs each behavior's longest episodes
// once (experiment.Cell.SeedMemo, dropped when the seed's last cell is
// done) and every cell takes the first n episodes cut to T steps
// (dataset.Head), which gives the same data as logging each cell on its
// own.
package paper
