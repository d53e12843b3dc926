// Package rollout runs policies in simulated worlds: it logs datasets
// under a behavior policy (Sample, SampleContinuous), and it rolls out a
// target policy for its on-policy value (Return, ReturnContinuous,
// Evaluate), the loop behind the on-policy oracle of package ope and the
// policy evaluation of package train.
//
// It is the only place where a simulator meets a dataset, so that package
// dataset stays a leaf that knows no world.
package rollout
