package ope

import (
	"fmt"
	"math"
	"math/rand/v2"

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
	w := make([]float64, 0, d.NumSteps())
	for i := range d.Episodes {
		for t := range d.Episodes[i].Steps {
			w = append(w, m.W[d.Episodes[i].Steps[t].State])
		}
	}
	return ratioEstimate(d, gamma, w)
}

// ratioEstimate computes sum v r / sum v with v_i = gamma^t w(s_i) beta_i,
// given w(s_i) for every step in step order.
// The factor gamma^t beta_i is formed in log space and scaled by its
// maximum over the data, which cancels in the ratio.
func ratioEstimate(d *dataset.Dataset, gamma float64, w []float64) (Result, error) {
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
			vi := w[len(v)] * math.Exp(st.LogRatio()+float64(t)*lg-maxLog)
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

// DensityRatioNeural is the paper's estimator for real-valued states,
// "bch-neural": w(s) is a feed-forward network trained on the kernel loss
// with a Gaussian RBF kernel (ratio.Neural, Algorithms 1 and 2), and the
// estimate is the same step-weighted ratio as DensityRatioTabular's.
type DensityRatioNeural struct {
	// Learner holds the trainer's settings; its zero value uses defaults.
	Learner ratio.Neural
	// Seed seeds the training (initial weights, minibatches, held-out
	// split); the same seed gives the same estimate.
	Seed uint64

	// Model is set by Estimate to the trained ratio, for reporting.
	Model *ratio.NeuralModel
}

var _ Estimator = (*DensityRatioNeural)(nil)

// Name returns "bch-neural".
func (*DensityRatioNeural) Name() string { return "bch-neural" }

// Estimate trains w on d and returns the self-normalised step-weighted
// estimate. Result.Weights are the normalised v_i, in step order.
func (e *DensityRatioNeural) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	if err := checkGamma(gamma); err != nil {
		return Result{}, err
	}
	if d.StateDim == 0 {
		return Result{}, fmt.Errorf("bch-neural: needs real-valued states")
	}
	m, err := e.Learner.Fit(rand.New(rand.NewPCG(e.Seed, 0x6263682d6e6e)), d, gamma)
	if err != nil {
		return Result{}, fmt.Errorf("bch-neural: %w", err)
	}
	e.Model = m
	w, err := m.StepRatios(d)
	if err != nil {
		return Result{}, fmt.Errorf("bch-neural: %w", err)
	}
	return ratioEstimate(d, gamma, w)
}
