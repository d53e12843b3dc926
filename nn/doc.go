// Package nn is a small feed-forward neural network (a multi-layer
// perceptron) with hand-written forward and backward passes and the Adam
// optimiser, written for the neural density-ratio learner of package ratio
// (the network w(s) of Algorithms 1 and 2 of Liu, Li, Tang and Zhou, 2018).
//
// Everything runs in float64 on caller-owned workspaces, so a training
// loop allocates nothing after set-up. Forward and Backward only read the
// parameters, so goroutines may run them concurrently on distinct
// workspaces (package ratio runs the current and the next states of a
// minibatch on two cores that way).
//
// The matrix products, the element-wise exp and tanh (ExpTo, TanhTo) and
// the Gaussian-kernel row of the kernel loss (RBFRow) use AVX2/FMA
// assembly on amd64 processors that have it and plain Go elsewhere (build
// tag purego forces plain Go). Both paths perform the same floating-point
// operations in the same order (fused multiply-adds where the assembly
// fuses), so they give bit-identical results: on amd64, a model trained
// with a given seed does not depend on whether the processor has AVX2.
//
// A network maps a row vector x in R^{n_0} through layers
//
//	z_l = a_{l-1} W_l + b_l,   a_l = f_l(z_l),   l = 1..L,
//
// with a_0 = x, W_l an n_{l-1} x n_l matrix, f_l the hidden activation for
// l < L and the output activation for l = L. Rows of a batch are processed
// together; Backward returns the gradient of a scalar loss with respect to
// every W_l and b_l given the loss's gradient with respect to the outputs.
package nn
