package dataset

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset/internal/rules"
)

// Validate checks that d is well formed: the invariants that ReadCSV and
// ReadParquet guarantee, and exactly what the writers need so that a
// written dataset reads back unchanged.
//
//   - The columns have one entry per step (StateDim or ActionDim entries
//     for vectors), Start runs from 0 to the number of steps, and the
//     per-episode columns have one entry per episode.
//   - Episodes have unique, non-empty IDs and at least one step.
//   - Discrete states (StateDim = 0): State and known final states lie in
//     [0, NumStates). Vector states: every component is finite.
//   - Discrete actions (ActionDim = 0): Action in [0, NumActions), with
//     NumActions > 0 if there are steps. Vector actions: NumActions = 0
//     and every component is finite.
//   - Rewards are finite; LogBehavior, unless nil (no behavior
//     probabilities), is finite; LogTarget is not NaN or +Inf (-Inf means
//     the target never takes the action); with discrete actions both are
//     at most 0.
//   - TargetProbs, if not nil: discrete actions; NumActions entries per
//     step, FinalTargetProbs NumActions per episode and HasFinalTarget one
//     per episode (all three nil without TargetProbs). Every step's row
//     and every known final row lies in [0, 1] and sums to 1 within 1e-6;
//     a step's entry for its action agrees with exp(LogTarget) within
//     1e-6. HasFinalTarget implies HasFinal, and an unknown final row is
//     zero.
//   - Terminal, if not nil, has one entry per episode.
//
// The error names the episode and the step.
func (d *Dataset) Validate() error {
	if d == nil {
		return fmt.Errorf("dataset: nil dataset")
	}
	if d.StateDim < 0 || d.NumStates < 0 || d.NumActions < 0 || d.ActionDim < 0 {
		return fmt.Errorf("dataset: negative size (NumStates %d, NumActions %d, StateDim %d, ActionDim %d)",
			d.NumStates, d.NumActions, d.StateDim, d.ActionDim)
	}
	if d.StateDim > 0 && d.NumStates > 0 {
		return fmt.Errorf("dataset: both NumStates (%d) and StateDim (%d) are set", d.NumStates, d.StateDim)
	}
	if d.NumActions > 0 && d.ActionDim > 0 {
		return fmt.Errorf("dataset: both NumActions (%d) and ActionDim (%d) are set", d.NumActions, d.ActionDim)
	}
	if err := d.checkShape(); err != nil {
		return err
	}
	if d.ActionDim == 0 && d.NumActions == 0 && d.NumSteps() > 0 {
		return fmt.Errorf("dataset: NumActions is 0 and steps carry no action vectors")
	}
	ids := make(map[string]int, len(d.IDs))
	for e, id := range d.IDs {
		if id == "" {
			return fmt.Errorf("dataset: episode %d has an empty ID", e)
		}
		if p, dup := ids[id]; dup {
			return fmt.Errorf("dataset: episodes %d and %d have the same ID %s", p, e, Quote(id))
		}
		ids[id] = e
		lo, hi := d.Span(e)
		if hi <= lo {
			return fmt.Errorf("dataset: episode %s has no steps", Quote(id))
		}
		for j := lo; j < hi; j++ {
			if msg := d.checkStep(j); msg != "" {
				return fmt.Errorf("dataset: episode %s, step %d: %s", Quote(id), j-lo, msg)
			}
		}
		if msg := d.checkFinalTarget(e); msg != "" {
			return fmt.Errorf("dataset: episode %s, step %d: %s", Quote(id), hi-1-lo, msg)
		}
		if d.HasFinal[e] {
			var msg string
			if d.StateDim == 0 {
				msg = d.checkState("next state", int(d.FinalState[e]), nil)
			} else {
				v, _ := d.NextObs(e, hi-1)
				msg = d.checkState("next state", -1, v)
			}
			if msg != "" {
				return fmt.Errorf("dataset: episode %s, step %d: %s", Quote(id), hi-1-lo, msg)
			}
		}
	}
	return nil
}

// checkShape checks the lengths of the columns.
func (d *Dataset) checkShape() error {
	m := len(d.IDs)
	if len(d.Start) != m+1 || d.Start[0] != 0 || d.Start[m] != len(d.Reward) {
		return fmt.Errorf("dataset: Start has %d offsets for %d episodes and %d steps", len(d.Start), m, len(d.Reward))
	}
	for e := range m {
		if d.Start[e+1] < d.Start[e] {
			return fmt.Errorf("dataset: Start decreases at episode %d", e)
		}
	}
	n := len(d.Reward)
	col := func(name string, got, want int) error {
		if got != want {
			return fmt.Errorf("dataset: column %s has %d entries, want %d", name, got, want)
		}
		return nil
	}
	checks := []error{
		col("LogTarget", len(d.LogTarget), n),
		col("HasFinal", len(d.HasFinal), m),
	}
	if d.LogBehavior != nil { // nil: no behavior probabilities
		checks = append(checks, col("LogBehavior", len(d.LogBehavior), n))
	}
	if d.Terminal != nil { // nil: no terminal column
		checks = append(checks, col("Terminal", len(d.Terminal), m))
	}
	if d.StateDim == 0 {
		checks = append(checks, col("State", len(d.State), n), col("Obs", len(d.Obs), 0),
			col("FinalState", len(d.FinalState), m), col("FinalObs", len(d.FinalObs), 0))
	} else {
		checks = append(checks, col("State", len(d.State), 0), col("Obs", len(d.Obs), n*d.StateDim),
			col("FinalState", len(d.FinalState), 0), col("FinalObs", len(d.FinalObs), m*d.StateDim))
	}
	if d.ActionDim == 0 {
		checks = append(checks, col("Action", len(d.Action), n), col("ActionVec", len(d.ActionVec), 0))
	} else {
		checks = append(checks, col("Action", len(d.Action), 0), col("ActionVec", len(d.ActionVec), n*d.ActionDim))
	}
	if d.TargetProbs == nil {
		checks = append(checks, col("FinalTargetProbs (without TargetProbs)", len(d.FinalTargetProbs), 0),
			col("HasFinalTarget (without TargetProbs)", len(d.HasFinalTarget), 0))
	} else {
		if d.ActionDim > 0 {
			return fmt.Errorf("dataset: TargetProbs is set but the actions are vectors (ActionDim %d); it is for discrete actions", d.ActionDim)
		}
		k := d.NumActions
		checks = append(checks, col("TargetProbs", len(d.TargetProbs), n*k),
			col("FinalTargetProbs", len(d.FinalTargetProbs), m*k), col("HasFinalTarget", len(d.HasFinalTarget), m))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTargetRow checks a row of the target's action distribution.
func checkTargetRow(p []float64) string {
	for k, v := range p {
		if msg := rules.Prob(v); msg != "" {
			return fmt.Sprintf("probability of action %d: %s", k, msg)
		}
	}
	if sum, ok := rules.Distribution(p); !ok {
		return fmt.Sprintf("probabilities sum to %s, want 1 (within 1e-6)", rules.SumText(sum))
	}
	return ""
}

// checkFinalTarget checks episode e's final row of the target's action
// distribution.
func (d *Dataset) checkFinalTarget(e int) string {
	if d.TargetProbs == nil {
		return ""
	}
	k := d.NumActions
	p := d.FinalTargetProbs[e*k : (e+1)*k]
	switch {
	case d.HasFinalTarget[e] && !d.HasFinal[e]:
		return "HasFinalTarget is set but the next state is unknown (HasFinal is false)"
	case d.HasFinalTarget[e]:
		if msg := checkTargetRow(p); msg != "" {
			return "FinalTargetProbs: " + msg
		}
	default:
		for a, v := range p {
			if v != 0 {
				return fmt.Sprintf("FinalTargetProbs[%d] is %v but HasFinalTarget is false (an unknown row is zero)", a, v)
			}
		}
	}
	return ""
}

func (d *Dataset) checkStep(j int) string {
	var msg string
	if d.StateDim == 0 {
		msg = d.checkState("state", int(d.State[j]), nil)
	} else {
		msg = d.checkState("state", -1, d.ObsAt(j))
	}
	if msg != "" {
		return msg
	}
	discrete := d.ActionDim == 0
	if discrete {
		if a := d.Action[j]; a < 0 || int(a) >= d.NumActions {
			return fmt.Sprintf("action %d is not an id in [0, %d)", a, d.NumActions)
		}
	} else {
		for k, v := range d.ActionVecAt(j) {
			if msg := rules.Real(v); msg != "" {
				return fmt.Sprintf("action component %d: %s", k, msg)
			}
		}
	}
	if msg := rules.Real(d.Reward[j]); msg != "" {
		return "reward: " + msg
	}
	lb, lt := 0.0, d.LogTarget[j]
	if d.LogBehavior != nil {
		lb = d.LogBehavior[j]
	}
	if msg := rules.Real(lb); msg != "" {
		return "LogBehavior: " + msg
	}
	if math.IsNaN(lt) || math.IsInf(lt, 1) {
		return fmt.Sprintf("LogTarget: %v is not allowed", lt)
	}
	if discrete && (lb > 0 || lt > 0) {
		return fmt.Sprintf("log-probabilities %v (behavior) and %v (target) must be at most 0 for discrete actions", lb, lt)
	}
	if d.TargetProbs != nil {
		p := d.TargetProbsAt(j)
		if msg := checkTargetRow(p); msg != "" {
			return "TargetProbs: " + msg
		}
		if a := d.Action[j]; !rules.Agrees(lt, p[a]) {
			return fmt.Sprintf("LogTarget %v (probability %v) disagrees with TargetProbs[%d] = %v, the target probability of the action (within 1e-6)",
				lt, math.Exp(lt), a, p[a])
		}
	}
	return ""
}

// checkState checks a state or next state against the dataset's kind.
func (d *Dataset) checkState(what string, id int, obs []float64) string {
	if d.StateDim == 0 {
		if id < 0 || id >= d.NumStates {
			return fmt.Sprintf("%s %d is not an id in [0, %d)", what, id, d.NumStates)
		}
		return ""
	}
	if len(obs) != d.StateDim {
		return fmt.Sprintf("%s vector of length %d (want %d)", what, len(obs), d.StateDim)
	}
	for k, v := range obs {
		if msg := rules.Real(v); msg != "" {
			return fmt.Sprintf("%s component %d: %s", what, k, msg)
		}
	}
	return ""
}
