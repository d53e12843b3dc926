package ope

import (
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
)

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

// Estimate returns the average normalised reward of the logged episodes.
func (*Naive) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	const name = "naive"
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	a, err := absorbing(name, d, gamma, Horizon)
	if err != nil {
		return Result{}, err
	}
	d = a.d
	m := d.NumEpisodes()
	w := make([]float64, m)
	sum := 0.0
	for i := range m {
		v, err := episodeValue(name, d, i, gamma)
		if err != nil {
			return Result{}, err
		}
		sum += v
		w[i] = 1 / float64(m)
	}
	return Result{Value: sum / float64(m), Weights: w, Estimand: Horizon}, nil
}
