// Package kernelloss holds what the minimax (kernel-loss) learners share: the
// sufficient statistics of a quadratic kernel loss accumulated per fold in
// one deterministic pass (Quadratic, AccumulateFolds), its closed-form
// minimiser under a ridge, an optional normalisation and optional sign
// constraints (QP), the one-standard-error cross-validation of the ridge
// (CrossValidate), the tabular state-action problem of minimax weight
// learning, DualDICE and minimax Q-learning (Pairs), and what their neural
// forms share: the scaled transitions and start states (NeuralData) with
// their held-out split, the kernel loss of a signed measure in random
// Fourier features and its gradient (FeatureLoss), and the training loop
// (Schedule).
//
// The learners themselves live in package ratio (Kernel, MWL, DualDICE)
// and package value (MQL); their documentation gives the equations.
//
// The package is public because the learners' statistics that stream
// (ratio.KernelSums, value.MQLMoments and their kin) hold its types in
// exported fields, which gob and JSON carry to other processes.
package kernelloss
