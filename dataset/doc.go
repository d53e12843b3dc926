// Package dataset holds logged trajectories: episodes of steps, each step
// carrying the state, the action, the reward, the next state and the
// log-probability (or log-density) of the logged action under the behavior
// policy pi0 and the target policy pi.
//
// Every estimator in ihope consumes a *Dataset, whether it was sampled from
// a built-in world (package rollout) or loaded from a user's logs
// (package logio: ReadFile, ReadFileWith, Read, ReadCSV, ReadParquet,
// which holds the log contract and the file formats). Probabilities are stored as
// logarithms, so that products of ratios over long horizons are sums that
// stay finite, and a target probability of 0 is exactly -Inf.
//
// # Storage
//
// A Dataset is columnar: one slice per field with one entry per step,
// steps in episode order, episodes as offsets (Dataset.Start), a real
// vector as a row-major block. Estimators, learners and the bootstrap read
// the columns directly; 1M discrete steps take 32 MB. The next state of a
// step is the state of the step after it in its episode and is not
// stored; only the state after each episode's last step is. Row-form
// Step and Episode values exist for building a dataset in code (Builder,
// New) and for reading one step at a time (Dataset.Step). The package
// imports no simulator: it is the leaf every other package builds on.
package dataset
