// Package env defines the environments ihope evaluates policies in.
//
// A Discrete environment is a simulator over state ids: Reset draws a
// start state and Step draws the next state and reward. Unlike Gymnasium,
// the transition function is pure (the state is passed in and returned), so
// one environment value can serve many concurrent rollouts. There is no
// termination: the paper's setting is the infinite-horizon one and
// episodes are truncated by the caller.
//
// An environment with a table (mdp.Finite) also exposes its full transition table, like
// Gymnasium's Taxi P[s][a], so that exact values, visitations and density
// ratios can be computed (package mdp). NewSampler turns any table into a
// Discrete simulator, so sampling and exact computation share one source of
// truth; a Table is both at once.
//
// Episodic worlds (the benchmarks of sim/cobs) end in a terminal state,
// modelled as an absorbing state of the table (every action loops back
// with reward 0), so that the simulator still never stops and exact values
// need no special case; Episodic says which states are absorbing.
//
// A Continuous environment has a real state vector and real actions
// (Pendulum); it separates the internal state from the observation that
// policies and logs see.
//
// The worlds live in sub-packages: sim/ring (Appendix B), sim/taxi
// (Section 5), sim/pendulum (Section 5), sim/lineargauss (a system with a
// closed-form stationary ratio, for tests) and sim/sumo (Appendix D); and
// the tabular worlds of other OPE benchmarks, with exact truths: sim/cobs
// (COBS's Graph, ModelFail, ModelWin and ToyMC) and sim/gridwalk
// (dice_rl's GridWalk); sim/synthetic is SCOPE-RL's synthetic world
// (real states, discrete actions) with Monte Carlo truths.
package sim
