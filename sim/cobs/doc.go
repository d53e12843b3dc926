// Package cobs holds the tabular toy worlds of COBS, the Caltech OPE
// Benchmarking Suite, with their policies and exact truths: the Graph
// (and its partially observed ModelFail), the toy mountain car ToyMC and
// ModelWin. Each world is an sim.Table (a full transition table, so
// package mdp computes its truths, and a sampler drawn from that same
// table); the episodic ones end in an explicit absorbing state
// (sim.Episodic).
//
// The truths are COBS's: the expected discounted return of the target
// over the horizon, E[sum_{t<T} gamma^t r_t] (mdp.Return; COBS reports
// the mean of on-policy rollouts, paper.py's value_of_data(gamma, False)).
// ihope's normalised horizon value is that over sum_{t<T} gamma^t
// (mdp.Value). Target = level 1, behavior = level 4 (Level):
//
//	world      T    gamma  states  target return  normalised
//	Graph      16   0.98   32      -4.1430341911  -0.3
//	ToyMC      250  0.99   22      -91.8941304543 -0.9999998049
//	ModelFail  2    1      4       -1.2           -0.6
//	ModelWin   20   1      3        1.2            0.06
//
// # Definitions and the choices made where they were ambiguous
//
// The dynamics are those of COBS's code (github.com/clvoloshin/COBS,
// ope/envs/), which the paper's description summarises:
//
//   - Graph (graph.py, Graph; run by paper.py's toy_graph with
//     cfgs/base_toy_graph_cfg.json: L = 16, stochastic transitions with
//     slip 0.25, dense deterministic rewards, gamma = 0.98, policies 1 and 4).
//     COBS's last step sets done and returns state 0; its rollout then pads
//     the episode with the absorbing state 2L-1 (reward 0, equal
//     propensities). Here the last step leads to 2L-1 directly, the state
//     COBS's logs show from then on, so the table is Markov and mdp.Value
//     and mdp.LongRun need no notion of episodes. The last step pays the
//     sign of the last layer a second time, as COBS's step() does: an
//     episode has L paying steps. stochastic_rewards (Gaussian noise) is
//     left out: it changes no expectation.
//   - ModelFail (model_fail.py): COBS's ModelFail class is the Graph's
//     code (paper.py's toy_graph in fact builds its Graph with it); at the
//     class defaults it is the Graph of length 2, deterministic, dense,
//     whose POMDP mapping with 2 observations aliases states 0, 1, 2: the
//     "Model Fail" domain of Thomas and Brunskill (2016) (4 states, horizon
//     2, 3 aliased). The table, policies and truths are over states, which
//     the policies (the same in every state) do not need; Observe gives
//     what a partially observed log would record.
//   - ToyMC (discrete_toy_mc.py, DiscreteToyMC with its defaults; paper.py's
//     toy_mc with cfgs/base_toy_mc_cfg.json: horizon 250, gamma = 0.99,
//     Right with probability 0.2 for the target and 0.8 for the behavior).
//     Position +11 is terminal (COBS's absorbing_state is state 21, that
//     position). The target almost never gets there within 250 steps
//     (probability 2.4e-7), so its return is within 2e-5 of
//     -sum_{t<250} 0.99^t.
//   - ModelWin (model_win.py): no COBS configuration or experiment uses
//     it, so its horizon, discount and policies are chosen here. Horizon
//     20: the class default max_length = 2 leaves a single decision, and
//     20 is the horizon we recall from Thomas and Brunskill (2016), which
//     we could not check against their text. Policies: BasicPolicy_MODELWIN
//     (the given probabilities in state 0, uniform in 1 and 2) with COBS's
//     levels, A0 with probability 0.2 (target) and 0.8 (behavior).
//   - Discount: 0.98 and 0.99 where COBS's configurations set them; 1 for
//     ModelFail and ModelWin, whose source returns are undiscounted and
//     for which COBS sets none.
//   - Policies: COBS's BasicPolicy with level k of 0..4, the first action
//     (A0; Right for ToyMC) with probability max(0.001, 0.2 k), the target
//     k = 1, the behavior k = 4 (paper.py asserts k in range(5) for the
//     Graph; ToyMC's 20 and 80 percent are the same two levels). In the
//     absorbing state every policy picks action 0, so that padded steps
//     carry importance ratio 1, as COBS's padding gives both policies the
//     same propensities there.
//
// References:
//
//	Voloshin, Le, Jiang, Yue. Empirical Study of Off-Policy Policy
//	Evaluation for Reinforcement Learning. NeurIPS Datasets and Benchmarks
//	2021 (arXiv:1911.06854, 2019). Code: github.com/clvoloshin/COBS,
//	ope/envs/graph.py, model_fail.py, model_win.py, discrete_toy_mc.py,
//	ope/policies/basics.py, ope/utls/rollout.py, paper.py, cfgs/.
//	Thomas, Brunskill. Data-Efficient Off-Policy Policy Evaluation for
//	Reinforcement Learning. ICML 2016 (Model Fail and Model Win).
package cobs
