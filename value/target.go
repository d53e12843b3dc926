package value

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
)

// errNoTarget is returned by the discrete learners when neither a target
// policy nor the target_prob_k columns give pi(.|s) for every action.
var errNoTarget = errors.New("needs the target's whole action distribution (target_prob_k columns or a target policy)")

// rowTol is how far two logged rows of one state may differ, entry by
// entry: the columns are written with about 17 digits, so rows of one
// state that differ by more are two different distributions.
const rowTol = 1e-9

// TableFromData builds the tabular target policy of a discrete-state log
// from its target_prob_k columns: row s is pi(.|s_j) of the steps with
// s_j = s and, where d.HasFinalTarget says it is known, the final row of
// an episode whose final state is s (the next_target_prob_k columns).
//
// A tabular target is a function of the state, so all the rows logged
// for one state must agree within 1e-9 entry by entry; otherwise
// TableFromData returns an error naming the episode and step (or the
// final state) that disagrees with the first row seen for that state.
// Every row must also be a distribution (entries >= 0, summing to 1
// within 1e-6, as policy.NewTabular requires).
//
// States the log never shows get the uniform row. Such a state carries no
// mass in any model fitted to this log (the count model never leads to
// it), so the row only matters if the policy is used on other data.
func TableFromData(d *dataset.Dataset) (*policy.Tabular, error) {
	if d == nil || !d.Discrete() || d.NumStates <= 0 || d.NumActions <= 0 || d.ActionDim != 0 {
		return nil, errors.New("value: target table: needs discrete states and actions (NumStates > 0, NumActions > 0)")
	}
	if !d.HasTargetProbs() {
		return nil, fmt.Errorf("value: target table: %w", errNoTarget)
	}
	nS, nA := d.NumStates, d.NumActions
	if len(d.TargetProbs) != nA*d.NumSteps() {
		return nil, fmt.Errorf("value: target table: %d target probabilities for %d steps of %d actions",
			len(d.TargetProbs), d.NumSteps(), nA)
	}
	rows := make([][]float64, nS)
	// where[s] describes the step that set rows[s], for the error message.
	where := make([]string, nS)
	set := func(s int, row []float64, at func() string) error {
		if s < 0 || s >= nS {
			return fmt.Errorf("value: target table: %s: state %d outside [0, %d)", at(), s, nS)
		}
		if err := checkRow(row); err != nil {
			return fmt.Errorf("value: target table: %s: %v", at(), err)
		}
		if rows[s] == nil {
			rows[s] = row
			where[s] = at()
			return nil
		}
		for a, p := range row {
			if math.Abs(p-rows[s][a]) > rowTol {
				return fmt.Errorf("value: target table: %s: pi(.|%d) = %v, but %s gives %v (a tabular target is a function of the state)",
					at(), s, row, where[s], rows[s])
			}
		}
		return nil
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			at := func() string { return fmt.Sprintf("episode %q step %d", d.IDs[e], j-lo) }
			if err := set(int(d.State[j]), d.TargetProbsAt(j), at); err != nil {
				return nil, err
			}
		}
		if d.HasFinalTarget != nil && d.HasFinalTarget[e] && d.HasFinal[e] {
			at := func() string { return fmt.Sprintf("episode %q final state", d.IDs[e]) }
			if err := set(int(d.FinalState[e]), d.FinalTargetProbs[e*nA:(e+1)*nA], at); err != nil {
				return nil, err
			}
		}
	}
	uniform := make([]float64, nA)
	for a := range uniform {
		uniform[a] = 1 / float64(nA)
	}
	for s, r := range rows {
		if r == nil {
			rows[s] = uniform
		}
	}
	return policy.NewTabular(rows)
}

// checkRow returns an error unless row is a probability distribution
// (entries finite and >= 0, summing to 1 within 1e-6).
func checkRow(row []float64) error {
	sum := 0.0
	for a, p := range row {
		if !(p >= 0) || math.IsInf(p, 1) {
			return fmt.Errorf("target probability %v of action %d", p, a)
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-6 {
		return fmt.Errorf("target probabilities %v sum to %v, want 1", row, sum)
	}
	return nil
}

// stateCounter is a policy that knows its number of states, as
// *policy.Tabular does.
type stateCounter interface{ NumStates() int }

// discreteTarget returns the target's action distribution for a learner
// over the discrete states and actions of d: t.Policy if set (with
// matching sizes), else the table of d's target_prob_k columns
// (TableFromData).
func discreteTarget(d *dataset.Dataset, t Target) (policy.Discrete, error) {
	switch {
	case t.Policy != nil:
		if t.Policy.NumActions() != d.NumActions {
			return nil, fmt.Errorf("target policy has %d actions, the data %d", t.Policy.NumActions(), d.NumActions)
		}
		if c, ok := t.Policy.(stateCounter); ok && c.NumStates() != d.NumStates {
			return nil, fmt.Errorf("target policy has %d states, the data %d", c.NumStates(), d.NumStates)
		}
		return t.Policy, nil
	case t.Continuous != nil:
		return nil, fmt.Errorf("a policy over real actions cannot act on %d discrete actions; %w", d.NumActions, errNoTarget)
	case d.HasTargetProbs():
		return TableFromData(d)
	}
	return nil, errNoTarget
}
