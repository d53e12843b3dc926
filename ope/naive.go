package ope

import "github.com/ihope-ope/ihope/dataset"

// Naive is naive averaging, "naive": the behavior policy's own normalised
// reward, averaged over episodes,
//
//	R = (1/m) sum_i sum_{t<T_i} gamma^i_t r^i_t,   gamma^i_t = gamma^t / sum_{t<T_i} gamma^t,
//
// with no correction for the change of policy. It is the baseline the
// paper's Section 5 calls naive averaging; it is the trajectory-wise IS
// estimate with every weight set to 1, and it ignores the logged
// probabilities altogether.
//
// Result.Weights are the per-episode weights 1/m.
type Naive struct{}

var _ Estimator = (*Naive)(nil)

// Name returns "naive".
func (*Naive) Name() string { return "naive" }

// Estimate returns the average normalised reward of the logged episodes,
// the fold of its sums (NaiveSums) over d's episodes.
func (e *Naive) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return foldEstimate(e, d, gamma, Horizon, nil)
}
