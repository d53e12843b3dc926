// Package minimax holds what the minimax (kernel-loss) learners share: the
// sufficient statistics of a quadratic kernel loss accumulated per fold in
// one deterministic pass (Sums, AccumulateFolds), its closed-form
// minimiser under a ridge, an optional normalisation and optional sign
// constraints (QP), the one-standard-error cross-validation of the ridge
// (CrossValidate), and the tabular state-action problem of minimax weight
// learning, DualDICE and minimax Q-learning (Pairs).
//
// The learners themselves live in package ratio (Kernel, MWL, DualDICE)
// and package value (MQL); their documentation gives the equations.
package minimax
