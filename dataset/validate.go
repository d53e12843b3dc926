package dataset

import (
	"fmt"
	"math"
)

// Validate checks that d is well formed: the invariants that ReadCSV and
// ReadParquet guarantee, and exactly what the writers need so that a
// written dataset reads back unchanged.
//
//   - Episodes have unique, non-empty IDs and at least one step.
//   - Discrete states (StateDim = 0): State and, where HasNext, NextState
//     lie in [0, NumStates), and Obs and NextObs are nil. Vector states:
//     State = NextState = -1 and Obs (and NextObs where HasNext) have
//     length StateDim.
//   - Discrete actions (NumActions > 0): Action in [0, NumActions) and
//     ActionVec nil. Vector actions (NumActions = 0): Action = -1 and every
//     ActionVec has the same length, at least 1.
//   - Rewards and vector components are finite; LogBehavior is finite;
//     LogTarget is not NaN or +Inf (-Inf means the target never takes the
//     action); with discrete actions both are at most 0.
//   - Every step but the last of an episode has HasNext set and its next
//     state equal to the state of the following step.
//
// The error names the episode and the step.
func (d *Dataset) Validate() error {
	if d == nil {
		return fmt.Errorf("dataset: nil dataset")
	}
	if d.StateDim < 0 || d.NumStates < 0 || d.NumActions < 0 {
		return fmt.Errorf("dataset: negative size (NumStates %d, NumActions %d, StateDim %d)", d.NumStates, d.NumActions, d.StateDim)
	}
	if d.StateDim > 0 && d.NumStates > 0 {
		return fmt.Errorf("dataset: both NumStates (%d) and StateDim (%d) are set", d.NumStates, d.StateDim)
	}
	ad := actionDim(d)
	if d.NumActions > 0 && ad > 0 {
		return fmt.Errorf("dataset: NumActions is %d but steps carry action vectors", d.NumActions)
	}
	if d.NumActions == 0 && ad == 0 && d.NumSteps() > 0 {
		return fmt.Errorf("dataset: NumActions is 0 and steps carry no action vectors")
	}
	discrete := ad == 0
	ids := make(map[string]int, len(d.Episodes))
	for e := range d.Episodes {
		ep := &d.Episodes[e]
		if ep.ID == "" {
			return fmt.Errorf("dataset: episode %d has an empty ID", e)
		}
		if p, dup := ids[ep.ID]; dup {
			return fmt.Errorf("dataset: episodes %d and %d have the same ID %q", p, e, ep.ID)
		}
		ids[ep.ID] = e
		if len(ep.Steps) == 0 {
			return fmt.Errorf("dataset: episode %q has no steps", ep.ID)
		}
		for t := range ep.Steps {
			if msg := d.checkStep(ep, t, ad, discrete); msg != "" {
				return fmt.Errorf("dataset: episode %q, step %d: %s", ep.ID, t, msg)
			}
		}
	}
	return nil
}

func (d *Dataset) checkStep(ep *Episode, t, ad int, discrete bool) string {
	s := &ep.Steps[t]
	last := t == len(ep.Steps)-1
	if msg := d.checkState("state", s.State, s.Obs); msg != "" {
		return msg
	}
	if s.HasNext {
		if msg := d.checkState("next state", s.NextState, s.NextObs); msg != "" {
			return msg
		}
	} else if !last {
		return "HasNext is false on a step that is not the last of its episode"
	}
	if !last {
		nx := &ep.Steps[t+1]
		if s.NextState != nx.State {
			return fmt.Sprintf("next state %d differs from the state %d of step %d", s.NextState, nx.State, t+1)
		}
		for k := range s.NextObs {
			if k >= len(nx.Obs) {
				break // step t+1 is reported on its own
			}
			if s.NextObs[k] != nx.Obs[k] {
				return fmt.Sprintf("next state component %d is %v but the state of step %d has %v", k, s.NextObs[k], t+1, nx.Obs[k])
			}
		}
	}
	if discrete {
		if s.Action < 0 || s.Action >= d.NumActions || s.ActionVec != nil {
			return fmt.Sprintf("action %d is not an id in [0, %d) (or ActionVec is set)", s.Action, d.NumActions)
		}
	} else {
		if s.Action != -1 || len(s.ActionVec) != ad {
			return fmt.Sprintf("action vector of length %d (want %d) and Action %d (want -1)", len(s.ActionVec), ad, s.Action)
		}
		for k, v := range s.ActionVec {
			if msg := checkReal(v); msg != "" {
				return fmt.Sprintf("action component %d: %s", k, msg)
			}
		}
	}
	if msg := checkReal(s.Reward); msg != "" {
		return "reward: " + msg
	}
	if msg := checkReal(s.LogBehavior); msg != "" {
		return "LogBehavior: " + msg
	}
	if math.IsNaN(s.LogTarget) || math.IsInf(s.LogTarget, 1) {
		return fmt.Sprintf("LogTarget: %v is not allowed", s.LogTarget)
	}
	if discrete && (s.LogBehavior > 0 || s.LogTarget > 0) {
		return fmt.Sprintf("log-probabilities %v (behavior) and %v (target) must be at most 0 for discrete actions", s.LogBehavior, s.LogTarget)
	}
	return ""
}

// checkState checks a state or next state against the dataset's kind.
func (d *Dataset) checkState(what string, id int, obs []float64) string {
	if d.StateDim == 0 {
		if id < 0 || id >= d.NumStates || obs != nil {
			return fmt.Sprintf("%s %d is not an id in [0, %d) (or its vector is set)", what, id, d.NumStates)
		}
		return ""
	}
	if id != -1 || len(obs) != d.StateDim {
		return fmt.Sprintf("%s vector of length %d (want %d) and id %d (want -1)", what, len(obs), d.StateDim, id)
	}
	for k, v := range obs {
		if msg := checkReal(v); msg != "" {
			return fmt.Sprintf("%s component %d: %s", what, k, msg)
		}
	}
	return ""
}
