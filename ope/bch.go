package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

// DensityRatioTabular is the paper's estimator for discrete states,
// "bch-tabular" (Breaking the Curse of Horizon). It learns the stationary
// density ratio w(s) = d_pi(s)/d_pi0(s) with ratio.Tabular (the kernel
// loss with the delta kernel, minimised exactly) and weights single steps:
//
//	R = sum_i v_i r_i / sum_i v_i,   v_i = gamma^{t_i} w(s_i) beta(a_i|s_i)
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Eq. (6) and Algorithms 1-2.
type DensityRatioTabular struct {
	// Learner holds the solver's settings; its zero value uses defaults.
	Learner ratio.Tabular

	// Model is set by Estimate to the learned ratio, for reporting.
	Model *ratio.TabularModel
}

var _ Estimator = (*DensityRatioTabular)(nil)

// Name returns "bch-tabular".
func (*DensityRatioTabular) Name() string { return "bch-tabular" }

// Estimate fits w on d and returns the self-normalised step-weighted
// estimate. Result.Weights are the normalised v_i, in step order.
func (e *DensityRatioTabular) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	if err := checkGamma(gamma); err != nil {
		return Result{}, err
	}
	if !d.Discrete() || d.NumStates == 0 {
		return Result{}, fmt.Errorf("bch-tabular: needs discrete states")
	}
	m, err := e.Learner.Fit(d, gamma)
	if err != nil {
		return Result{}, fmt.Errorf("bch-tabular: %w", err)
	}
	e.Model = m
	return ratioEstimate(d, gamma, func(st *dataset.Step) float64 { return m.W[st.State] })
}

// ratioEstimate computes sum v r / sum v with v_i = gamma^t w(s_i) beta_i.
// The factor gamma^t beta_i is formed in log space and scaled by its
// maximum over the data, which cancels in the ratio.
func ratioEstimate(d *dataset.Dataset, gamma float64, w func(*dataset.Step) float64) (Result, error) {
	lg := math.Log(gamma)
	maxLog := math.Inf(-1)
	for i := range d.Episodes {
		for t := range d.Episodes[i].Steps {
			maxLog = math.Max(maxLog, d.Episodes[i].Steps[t].LogRatio()+float64(t)*lg)
		}
	}
	if math.IsInf(maxLog, -1) {
		return Result{}, fmt.Errorf("every logged action has target probability 0")
	}
	v := make([]float64, 0, d.NumSteps())
	var num, den float64
	for i := range d.Episodes {
		steps := d.Episodes[i].Steps
		for t := range steps {
			st := &steps[t]
			vi := w(st) * math.Exp(st.LogRatio()+float64(t)*lg-maxLog)
			v = append(v, vi)
			num += vi * st.Reward
			den += vi
		}
	}
	if !(den > 0) {
		return Result{}, fmt.Errorf("the learned weights sum to %v", den)
	}
	for i := range v {
		v[i] /= den
	}
	return Result{Value: num / den, Weights: v}, nil
}
