// Package benchmark is ihope's benchmark of its estimators: tabular
// worlds from three sources with exact truths, a family of target
// policies in each, every applicable estimator on the same logs, and a
// leaderboard of their errors, interval coverage and policy ranking
// ("ihope benchmark").
//
// # Worlds
//
// Each World is a table that samples itself (so logs and truths come from
// one source), a behavior policy, a family of targets and the logging
// setting of its source:
//
//	suite  world      n    T    gamma  behavior          family (size)
//	cobs   graph      256  16   0.98   P(A0) = 0.8       P(A0) = .001, .1, ..., .9 (10)
//	cobs   toymc      128  250  0.99   P(Right) = 0.8    P(Right) = .001, .1, ..., .9 (10)
//	cobs   modelfail  256  2    1      P(A0) = 0.8       P(A0) = .001, .1, ..., .9 (10)
//	cobs   modelwin   256  20   1      P(A0) = 0.8       P(A0) = .001, .1, ..., .9 (10)
//	dice   gridwalk   100  100  0.99   alpha = 0 (eps .7) alpha = 1, .95, ..., .75 (6)
//	paper  taxi       200  400  1      pi18              pi14, ..., pi19 (6)
//	paper  ring       20   100  1      P(R) = 0.45       P(R) = .15, .25, ..., .85 (8)
//
// n, T and gamma are the sources' (COBS's configurations, dice_rl's
// scripts, the paper's Taxi as ihope's README runs it, its ring
// experiment), except where no source sets them: ModelFail's and
// ModelWin's n, the ring's T (World.Source says which). COBS evaluates a
// single target, its level 1 (P = 0.2); the family adds its other levels
// and the half-levels so that ranking has ten policies to order. ModelFail
// is logged as COBS makes it for: its states 0, 1, 2 recorded as one
// observation (World.Observe), which defeats any model of the log.
// SCOPE-RL's synthetic world (sim/synthetic) is not here: its states are
// real vectors with Monte Carlo truths, and the benchmark's worlds are the
// ones with exact truths and discrete states.
//
// Terminal states are the worlds' explicit absorbing states
// (sim.Episodic): an episode that ends before T stays there, every policy
// takes action 0 there, and every step there pays 0. The logs have no
// terminal column and need none: the padded steps carry ratio 1 and
// reward 0, so they change no estimator's value of the episode, and the
// models see the absorbing state as the state it is.
//
// # Cells
//
// A suite is one experiment of package experiment ("benchmark-NAME",
// results file DIR/benchmark-NAME.jsonl, resumable and reproducible as
// every experiment is): a panel per world, a setting per target, a cell
// per target and seed. A cell (World.Run) logs n episodes of T steps
// under the behavior (the same episodes for every target of the world at
// that seed: the family is ranked on one log, as DOPE does), runs every
// registered estimator that applies and needs no simulator (Estimators;
// the on-policy oracle is the truth's Monte Carlo twin and is left out),
// plus the learner Variants, asked for the horizon value (the T-step
// value from the logged starts, what every source reports), and gives
// each estimate a 90% interval: Wald, estimate ± 1.645 SE, where the
// estimator gives a standard error (ope.StdErrer: dr), the percentile
// bootstrap over episodes with Resamples = 100 resamples otherwise (mean
// ± t sd when fewer succeed, and in quick mode's 10; ope.PercentileMin).
//
// Each record states the estimand of its value (ope.Result.Estimand) and
// is scored against that estimand's exact truth (World.Truths): the
// T-step value from the reset distribution (mdp.Value) for the horizon
// rows, the long-run value (mdp.LongRun) for the rows that target it
// (the stationary estimators: bch-tabular, the paper's, and mwl, mql,
// dualdice). In an episodic world the long-run value counts the
// absorbing tail after the episode's end, which logs cut at the horizon
// hardly show; at gamma = 1 (ModelFail) it is 0 for every policy, so
// there those rows' ranking metrics are undefined.
//
// # Leaderboard
//
// Build summarises the results files (Board; WriteMarkdown, and JSON by
// encoding/json). Per world and estimator:
//
//   - log10 MSE: the mean squared error against the exact truth over every
//     target and seed; log10 nMSE the same divided by the squared spread
//     of the family's true values, V_best - V_worst. The spread, not the
//     truth, is the scale: a truth can be 0 (the Graph's P(A0) = 0.5), and
//     the spread is what ranking must resolve. Errors below a millionth of
//     the spread count as exact (NMSEFloor).
//   - coverage: the share of cells whose interval holds the truth.
//   - Spearman: the rank correlation of the estimates of the family with
//     the truths (Spearman), averaged over seeds.
//   - regret@1 and regret@5: DOPE's normalised regret of deploying the
//     best (in truth) of the k policies the estimator ranks highest
//     (RegretAtK), averaged over seeds. With a family of at most five,
//     regret@5 is 0 by construction; the COBS worlds and the ring have
//     more.
//
// Overall, each estimator's numbers are averaged over the worlds, with its
// mean rank by MSE within a world, and the table is ordered by that rank.
// Board.Figure gives the data of a suite's figure: the normalised MSE of
// every estimator in every world, drawn by package figure.
//
// References:
//
//	Fu, Norouzi, Nachum, Tucker, Wang, Novikov, Yang, Zhang, Chen, Kumar,
//	Paduraru, Levine, Paine. Benchmarks for Deep Off-Policy Evaluation.
//	ICLR 2021 (DOPE: rank correlation, regret@k).
//	Voloshin, Le, Jiang, Yue. Empirical Study of Off-Policy Policy
//	Evaluation for Reinforcement Learning. NeurIPS Datasets and Benchmarks
//	2021 (COBS).
//	Yang, Nachum, Dai, Li, Schuurmans. Off-Policy Evaluation via the
//	Regularized Lagrangian. NeurIPS 2020 (dice_rl).
package benchmark
