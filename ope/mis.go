package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

// MIS is marginalized importance sampling, "mis", for the Horizon
// estimand: each reward is weighted by the time-indexed state ratio
// w_t(s) = d^pi_t(s)/d^pi0_t(s) (ratio.Marginal, an exact recursion on the
// counts) times the policy ratio of the logged action,
//
//	R = (1/m) sum_i g0_i sum_{t<T_i} gamma^t w_t(s^i_t) beta(a^i_t|s^i_t) r^i_t,   g0_i = 1/sum_{t<T_i} gamma^t,
//
// so its variance grows polynomially, not exponentially, with the horizon.
// Discrete states only (the recursion counts states); it needs behavior
// probabilities.
//
// Result.Weights are the per-step weights g0_i gamma^t w_t beta / m,
// Result.Model the ratio.Model.
//
// References:
//
//	Xie, Ma, Wang (2019), Towards optimal off-policy evaluation for
//	reinforcement learning with marginalized importance sampling, Eq. (4)
//	and Section 3 (TMIS).
type MIS struct {
	// Ratio is the time-indexed ratio learner; nil means ratio.Marginal{}.
	Ratio ratio.Learner
}

var _ Estimator = MIS{}

// Name returns "mis".
func (MIS) Name() string { return "mis" }

// Estimate fits the time-indexed ratios and weights the rewards.
func (e MIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	const name = "mis"
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	if err := checkSeveral(name, whyMIS, d); err != nil {
		return Result{}, err
	}
	if err := checkBehavior(name, d); err != nil {
		return Result{}, err
	}
	a, err := absorbing(name, d, gamma, Horizon)
	if err != nil {
		return Result{}, err
	}
	d = a.d
	if !d.Discrete() {
		return Result{}, fmt.Errorf("%s: needs discrete states (the time-indexed ratios are counted per state); use wis-stepwise or dr for real states", name)
	}
	l := e.Ratio
	if l == nil {
		l = ratio.Marginal{}
	}
	m, err := l.Fit(d, gamma)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	w, err := m.StepRatios(d)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	n := float64(d.NumEpisodes())
	sum := 0.0
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		g, _ := discountStart(gamma, hi-lo)
		for j := lo; j < hi; j++ {
			wj := g * w[j] * math.Exp(d.LogRatio(j)) / n
			w[j] = wj
			sum += wj * d.Reward[j]
			g *= gamma
		}
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return Result{}, fmt.Errorf("%s: the estimate is %v", name, sum)
	}
	res := Result{Value: sum, Estimand: Horizon, Model: m, Learner: l.Name()}
	if w := misMassWarning(w, sum); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	res.Weights = a.stepWeights(w)
	return res, nil
}

// misMassLow and misMassHigh bound the sum of mis's weights within which
// misMassWarning is silent.
const misMassLow, misMassHigh = 0.8, 1.25

// misMassWarning says when mis's weights w (g0_i gamma^t w_t beta / m,
// whose sum estimates 1, the target's total probability) sum to less
// than 0.8 or more than 1.25, "" otherwise. mis does not renormalise:
// where the target reaches, at step t, states the log never shows at t,
// or takes actions never logged in their state, its estimated
// distribution loses that mass, and the estimate shrinks towards 0 by
// the same factor. Measured on an unseen 20-state MDP with terminal
// states (n = 50, truth 52.6): the mass fell to 0.12 by t = 20 and mis
// gave 10.0 [5.0, 15.9] with nothing said; on an 8-state MDP whose target
// takes an action the behavior never takes (n = 500, truth -2.97), -0.32.
func misMassWarning(w []float64, estimate float64) string {
	total := 0.0
	for _, v := range w {
		total += v
	}
	if !(total > 0) || (total >= misMassLow && total <= misMassHigh) {
		return ""
	}
	change := "gained"
	if total < 1 {
		change = "lost"
	}
	return fmt.Sprintf("mis: its weights sum to %.3g, not 1: its estimate of the target's state distribution has %s mass where the target goes, at some step, to states the log does not show at that step or takes actions never logged there, and mis does not renormalise, so its estimate is scaled by about that factor (renormalised, %.4g); compare wis-stepwise and dr",
		total, change, estimate/total)
}

var _ reweighter = MIS{}

// prepare is the bootstrap's fast path (reweighter) for the default
// learner (ratio.Marginal): a resample's time-indexed ratios are counted
// with the episodes' multiplicities (ratio.Marginal.FitMult) instead of on
// a rebuilt log.
func (e MIS) prepare(d *dataset.Dataset, gamma float64) (func([]int) (float64, error), error) {
	if e.Ratio != nil {
		return nil, nil
	}
	if _, err := e.Estimate(d, gamma); err != nil {
		return nil, err
	}
	a, err := absorbing("mis", d, gamma, Horizon)
	if err != nil {
		return nil, err
	}
	d = a.d
	// Per episode: g0_i gamma^t beta r for every step, and its start.
	q := make([]float64, d.NumSteps())
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		g, _ := discountStart(gamma, hi-lo)
		for j := lo; j < hi; j++ {
			q[j] = g * math.Exp(d.LogRatio(j)) * d.Reward[j]
			g *= gamma
		}
	}
	return func(mult []int) (float64, error) {
		m, err := ratio.Marginal{}.FitMult(d, gamma, mult)
		if err != nil {
			return 0, fmt.Errorf("mis: %w", err)
		}
		// w_t(s_j) for every step at once: the model may be in its sparse
		// form, where a single Ratio is a search.
		w, err := m.StepRatios(d)
		if err != nil {
			return 0, fmt.Errorf("mis: %w", err)
		}
		var sum float64
		n := 0
		for i, c := range mult {
			if c == 0 {
				continue
			}
			n += c
			lo, hi := d.Span(i)
			s := 0.0
			for j := lo; j < hi; j++ {
				s += w[j] * q[j]
			}
			sum += float64(c) * s
		}
		return sum / float64(n), nil
	}, nil
}
