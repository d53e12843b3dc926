package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/value"
)

var _ Summer = (*ModelBased)(nil)

// ModelBasedSums are model-based's statistics: the count model's
// sufficient statistics (TabularCounts) and the estimand. Finish builds
// the count model with value.NewCountModel and, under the horizon
// estimand, pushes the logged starts through it for T steps with
// mdp.Value (T = Horizon, or the copy's one episode length when Horizon
// is 0; with lengths that differ, each start is read with its own length
// from the finite-horizon solve, as ModelBased.Estimate); under the
// long-run estimand it solves the model's stationary value
// with value.Tabular.FitCounts, the solve of the in-memory estimator
// (value.Tabular.Fit), and reads it at the logged starts.
type ModelBasedSums struct {
	*TabularCounts
	Horizon  int
	Estimand Estimand
}

// NewSums implements Summer.
func (e *ModelBased) NewSums(gamma float64, copies int) (Sums, error) {
	const name = "model-based"
	if err := checkSumsArgs(name, gamma, copies); err != nil {
		return nil, err
	}
	est := e.Estimand.OrDefault()
	if est != Horizon && est != LongRun {
		return nil, fmt.Errorf("%s: unknown estimand %q", name, e.Estimand)
	}
	if e.Horizon < 0 {
		return nil, fmt.Errorf("%s: horizon %d", name, e.Horizon)
	}
	return &ModelBasedSums{TabularCounts: newTabularCounts(gamma, copies, e.Target), Horizon: e.Horizon, Estimand: est}, nil
}

// Add implements Sums.
func (s *ModelBasedSums) Add(d *dataset.Dataset, e int, mult []int) error {
	return s.add("model-based: count model", d, e, mult)
}

// SetCounts implements CountSums.
func (s *ModelBasedSums) SetCounts(c *TabularCounts) { s.TabularCounts = c }

// Merge implements Sums.
func (s *ModelBasedSums) Merge(o Sums) error {
	t, ok := o.(*ModelBasedSums)
	if !ok {
		return fmt.Errorf("model-based: cannot merge sums of type %T", o)
	}
	if t.Horizon != s.Horizon || t.Estimand != s.Estimand {
		return fmt.Errorf("model-based: cannot merge sums of other settings")
	}
	return s.merge("model-based", t.TabularCounts)
}

// Finish implements Sums.
func (s *ModelBasedSums) Finish(c int) (Result, WeightSummary, error) {
	const name = "model-based"
	if s.Episodes[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: count model: no episodes", name)
	}
	target, err := s.target()
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	m, err := s.countModel(c)
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := s.checkTarget(target); err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	var v float64
	if s.Estimand == LongRun {
		vm, err := value.Tabular{}.FitCounts(m, target, s.Gamma, s.stateSteps(c), 0)
		if err != nil {
			return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
		}
		if v, err = s.longRunValue(c, vm.Rho(), func(st int) float64 { return vm.V(0, st) }); err != nil {
			return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
		}
	} else if T := s.Horizon; T > 0 || s.oneLength(c) {
		if T == 0 {
			T = s.MaxLen[c]
		}
		v = mdp.Value(m, target, m.Initial(), T, s.Gamma)
	} else { // each episode's own length, as ModelBased.Estimate
		tm, err := value.Tabular{Finite: true}.FitCounts(m, target, s.Gamma, s.stateSteps(c), s.MaxLen[c])
		if err != nil {
			return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
		}
		v = s.horizonValue(c, tm.V)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: value %v", name, v)
	}
	return Result{Value: v, Model: &SolvedCountModel{m, target}, Estimand: s.Estimand, Learner: "tabular"}, WeightSummary{}, nil
}

// oneLength reports whether every episode of copy c has the same length.
func (s *TabularCounts) oneLength(c int) bool {
	T := -1
	for k, key := range s.Starts {
		if s.StartCount[c][k] > 0 {
			if T >= 0 && int(key[1]) != T {
				return false
			}
			T = int(key[1])
		}
	}
	return true
}

// horizonValue is startValue's horizon read-out from the counts: the
// mean over copy c's logged starts of g0 v(T, s_0), T the episode's own
// length and g0 = 1 / sum_{t<T} gamma^t.
func (s *TabularCounts) horizonValue(c int, v func(h, st int) float64) float64 {
	return s.startMean(c, func(st, n int) float64 {
		g0, _ := discountStart(s.Gamma, n)
		return g0 * v(n, st)
	})
}

// longRunValue is startValue's long-run read-out from the counts: rho
// (gamma = 1) or (1 - gamma) times the mean of v over the logged starts
// of copy c.
func (s *TabularCounts) longRunValue(c int, rho float64, v func(st int) float64) (float64, error) {
	if s.Gamma == 1 {
		if math.IsNaN(rho) {
			return 0, fmt.Errorf("the value model has no average reward")
		}
		return rho, nil
	}
	r := s.startMean(c, func(st, _ int) float64 { return (1 - s.Gamma) * v(st) })
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("the value model gives %v", r)
	}
	return r, nil
}
