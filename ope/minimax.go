package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

// PairRatio is the estimator of a state-action ratio learner
// (ratio.PairLearner: "mwl", "dualdice"), named after its learner. It
// weights every logged transition j (a step with a known next state) by
// the learned w(s_j, a_j) = d_pi(s_j, a_j) / d_D(s_j, a_j) alone,
//
//	R = (1/n) sum_j w_j r_j = E_D[w r]                       (Normalise false)
//	R = sum_j w_j r_j / sum_j w_j = E_D[w r] / E_D[w]         (Normalise true)
//
// and always targets LongRun: the average reward (gamma = 1) or
// (1 - gamma) E_d0[V] (gamma < 1) with d0 the logged start distribution.
// It needs the target's whole action distribution at the next and start
// states (Target, or the logs' target_prob_k columns; for real actions,
// actions drawn from the target there, Target.Continuous: --target-draws)
// and never reads the behavior's probabilities. In the tabular case E_D[w] = 1 exactly (the
// flow conserves mass) and the two forms agree; for real states they
// differ by the fit's misfit of the normalisation (gamma < 1).
//
// Result.Weights are w_j / sum_j w_j over the steps (0 for steps without
// a transition), Result.Model the ratio.PairModel.
//
// References: see ratio.MWL and ratio.DualDICE.
type PairRatio struct {
	Learner   ratio.PairLearner
	Target    value.Target
	Normalise bool
	// Reservoir and SampleSeed matter only over a stream of shards
	// (NewSums), to the neural forms: as FQE's.
	Reservoir  int
	SampleSeed uint64
	// RealStates makes NewSums return the kernel form's two-pass sums
	// (PairKernelSums) instead of the tabular form's counts: a stream
	// chooses its sums before it sees the data (package stream sets it
	// from the first shard). Estimate chooses the form from the data and
	// does not read it.
	RealStates bool
}

var _ Estimator = PairRatio{}

// Name returns the learner's name.
func (e PairRatio) Name() string { return e.Learner.Name() }

// Estimate fits w on d and returns the weighted mean reward.
func (e PairRatio) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	name := e.Name()
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	a, err := absorbingLongRun(name, d, gamma)
	if err != nil {
		return Result{}, err
	}
	d, target, err := drawnProbs(name, a.d, a.target(e.Target))
	if err != nil {
		return Result{}, err
	}
	if e.tabular(d) {
		// The fold of its sums (PairRatioSums), whose solve is the
		// learner's own.
		t := e
		t.Target, t.RealStates = target, false
		res, unit, err := foldSums(t, d, gamma)
		if err == nil && unit == UnitStep {
			res.Weights = a.stepWeights(res.Weights)
		}
		return res, err
	}
	m, err := e.Learner.FitPairs(d, gamma, target)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	w, err := m.StepRatios(d)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	var num, den float64
	n := 0
	for ep := range d.NumEpisodes() {
		lo, hi := d.Span(ep)
		for j := lo; j < hi; j++ {
			if !hasNext(d, ep, j) {
				w[j] = 0
				continue
			}
			num += w[j] * d.Reward[j]
			den += w[j]
			n++
		}
	}
	if n == 0 || !(den > 0) {
		return Result{}, fmt.Errorf("%s: the learned weights sum to %v over %d transitions", name, den, n)
	}
	val := num / float64(n)
	if e.Normalise {
		val = num / den
	}
	if math.IsNaN(val) || math.IsInf(val, 0) {
		return Result{}, fmt.Errorf("%s: the estimate is %v", name, val)
	}
	for j := range w {
		w[j] /= den
	}
	res := Result{Value: val, Weights: a.stepWeights(w), Estimand: LongRun, Model: m, Learner: learnerKind(d, m)}
	if wr, ok := m.(ratio.Warner); ok {
		for _, s := range wr.Warnings() {
			res.Warnings = append(res.Warnings, name+": "+s)
		}
	}
	return res, nil
}

// tabular reports whether e fits d in the tabular form, whose sums
// are PairRatioSums: discrete states and actions, mwl or dualdice not in
// their neural forms.
func (e PairRatio) tabular(d *dataset.Dataset) bool {
	var neural bool
	switch l := e.Learner.(type) {
	case ratio.MWL:
		neural = l.Neural
	case ratio.DualDICE:
		neural = l.Neural
	default:
		return false
	}
	return !neural && d.Discrete() && d.ActionDim == 0 && e.Target.Continuous == nil
}

// drawnProbs returns the logs and target a minimax learner fits: d and t
// themselves, except on logs of real states and discrete actions whose
// target is known only by actions drawn from it (t.Continuous), where the
// draws' frequencies become the target_prob_k columns
// (value.TargetProbsFromDraws) and the learners' discrete path runs.
func drawnProbs(name string, d *dataset.Dataset, t value.Target) (*dataset.Dataset, value.Target, error) {
	if d.Discrete() || d.ActionDim > 0 || t.Continuous == nil {
		return d, t, nil
	}
	out, err := value.TargetProbsFromDraws(name, d, t)
	if err != nil {
		return nil, t, err
	}
	t.Continuous = nil
	return out, t, nil
}

// hasNext reports whether step j of episode e has a known next state.
func hasNext(d *dataset.Dataset, e, j int) bool {
	var ok bool
	if d.Discrete() {
		_, ok = d.NextState(e, j)
	} else {
		_, ok = d.NextObs(e, j)
	}
	return ok
}

// learnerKind names the fit a minimax learner made: "neural" for the
// network forms, else "tabular" for discrete states and "kernel" for real
// ones.
func learnerKind(d *dataset.Dataset, m any) string {
	switch m.(type) {
	case *ratio.PairNeuralModel, *value.MQLNeuralModel:
		return "neural"
	}
	if d.Discrete() {
		return "tabular"
	}
	return "kernel"
}

// MinimaxQ is minimax Q-learning, "mql" (value.MQL): q learned by its kernel
// loss on the Bellman residuals, read at the start states,
//
//	R = (1 - gamma) (1/m) sum_i v(s^i_0)   (gamma < 1),   R = rho   (gamma = 1),
//
// always the LongRun estimand. It needs the target's whole action
// distribution (Target, or the logs' target_prob_k columns; for real
// actions, actions drawn from the target at the logged states,
// Target.Continuous: --target-draws) and no behavior probabilities.
type MinimaxQ struct {
	Value  value.MQL
	Target value.Target
	// Reservoir and SampleSeed matter only over a stream of shards
	// (NewSums), to the neural form: as FQE's.
	Reservoir  int
	SampleSeed uint64
	// RealStates makes NewSums return the kernel form's two-pass sums
	// (MQLKernelSums), as PairRatio's.
	RealStates bool
}

var _ Estimator = MinimaxQ{}

// Name returns "mql".
func (MinimaxQ) Name() string { return "mql" }

// Estimate fits q and reads it at the start states.
func (e MinimaxQ) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	const name = "mql"
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	a, err := absorbingLongRun(name, d, gamma)
	if err != nil {
		return Result{}, err
	}
	d, target, err := drawnProbs(name, a.d, a.target(e.Target))
	if err != nil {
		return Result{}, err
	}
	var res Result
	if d.Discrete() && d.ActionDim == 0 && !e.Value.Neural && target.Continuous == nil {
		// The tabular solve's estimate is the fold of its sums
		// (MQLSums), whose solve is the learner's own.
		if res, _, err = foldSums(MinimaxQ{Target: target}, d, gamma); err != nil {
			return Result{}, err
		}
	} else {
		m, err := e.Value.Fit(d, gamma, target)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", name, err)
		}
		v, err := startValue(d, gamma, LongRun, m)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", name, err)
		}
		res = Result{Value: v, Estimand: LongRun, Model: m, Learner: learnerKind(d, m)}
	}
	if readsStarts(LongRun, gamma) {
		if w := StartWarning(name, d); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	return res, nil
}
