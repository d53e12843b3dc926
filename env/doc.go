// Package env defines the environments ihope evaluates policies in.
//
// A Discrete environment is a simulator over state ids: Reset draws a
// start state and Step draws the next state and reward. Unlike Gymnasium,
// the transition function is pure (the state is passed in and returned), so
// one environment value can serve many concurrent rollouts.
//
// A Tabular environment also exposes its full transition table, like
// Gymnasium's Taxi P[s][a], so that exact values, visitations and density
// ratios can be computed (package exact). NewSampler turns any table into a
// Discrete simulator, so sampling and exact computation share one source of
// truth. The worlds themselves live in sub-packages (env/ring, env/taxi).
package env
