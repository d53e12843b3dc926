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
	var t TargetRows
	for e := range d.NumEpisodes() {
		if err := t.Add(d, e); err != nil {
			return nil, err
		}
	}
	return t.Table(d.NumStates)
}

// TargetRows gathers TableFromData's rows from a log given in parts,
// episode after episode (a stream of shards). Its fields are exported so
// that it can be encoded between processes.
type TargetRows struct {
	NumActions int
	// Rows[s] is the first row seen for state s (nil if none), Where[s]
	// where it was seen, for the error message of a disagreeing row.
	Rows  [][]float64
	Where []string
}

// Add adds the rows of episode e of d.
func (t *TargetRows) Add(d *dataset.Dataset, e int) error {
	if !d.HasTargetProbs() {
		return fmt.Errorf("value: target table: %w", errNoTarget)
	}
	nA := d.NumActions
	if t.NumActions == 0 {
		t.NumActions = nA
	}
	if nA != t.NumActions || len(d.TargetProbs) != nA*d.NumSteps() {
		return fmt.Errorf("value: target table: %d target probabilities for %d steps of %d actions (%d before)",
			len(d.TargetProbs), d.NumSteps(), nA, t.NumActions)
	}
	lo, hi := d.Span(e)
	for j := lo; j < hi; j++ {
		at := func() string { return fmt.Sprintf("episode %q step %d", d.IDs[e], j-lo) }
		if err := t.set(int(d.State[j]), d.TargetProbsAt(j), at); err != nil {
			return err
		}
	}
	if d.HasFinalTarget != nil && d.HasFinalTarget[e] && d.HasFinal[e] {
		at := func() string { return fmt.Sprintf("episode %q final state", d.IDs[e]) }
		if err := t.set(int(d.FinalState[e]), d.FinalTargetProbs[e*nA:(e+1)*nA], at); err != nil {
			return err
		}
	}
	return nil
}

// set records row as pi(.|s), or checks it against the row seen before.
func (t *TargetRows) set(s int, row []float64, at func() string) error {
	if s < 0 {
		return fmt.Errorf("value: target table: %s: state %d", at(), s)
	}
	if err := policy.CheckRow(row); err != nil {
		return fmt.Errorf("value: target table: %s: not a target probability distribution: %v", at(), err)
	}
	if s >= len(t.Rows) {
		t.Rows = append(t.Rows, make([][]float64, s+1-len(t.Rows))...)
		t.Where = append(t.Where, make([]string, s+1-len(t.Where))...)
	}
	if t.Rows[s] == nil {
		t.Rows[s] = append([]float64(nil), row...)
		t.Where[s] = at()
		return nil
	}
	for a, p := range row {
		if math.Abs(p-t.Rows[s][a]) > rowTol {
			return fmt.Errorf("value: target table: %s: pi(.|%d) = %v, but %s gives %v (a tabular target is a function of the state)",
				at(), s, row, t.Where[s], t.Rows[s])
		}
	}
	return nil
}

// Merge adds o's rows, checking those of the states both have seen.
func (t *TargetRows) Merge(o *TargetRows) error {
	// An empty t (a combiner's first accumulator) takes o's number of
	// actions: without it the merged table said "no target" (an audit
	// found five of ihope-beam's default estimators empty on logs with
	// target_prob_k columns).
	switch {
	case t.NumActions == 0:
		t.NumActions = o.NumActions
	case o.NumActions != 0 && o.NumActions != t.NumActions:
		return fmt.Errorf("value: target table: merging rows of %d actions into rows of %d", o.NumActions, t.NumActions)
	}
	for s, row := range o.Rows {
		if row == nil {
			continue
		}
		if err := t.set(s, row, func() string { return o.Where[s] }); err != nil {
			return err
		}
	}
	return nil
}

// Table returns the target policy over nS states: the rows seen, and the
// uniform row for the states the log never shows.
func (t *TargetRows) Table(nS int) (*policy.Tabular, error) {
	if len(t.Rows) > nS {
		return nil, fmt.Errorf("value: target table: state %d outside [0, %d)", len(t.Rows)-1, nS)
	}
	if t.NumActions <= 0 {
		return nil, fmt.Errorf("value: target table: %w", errNoTarget)
	}
	uniform := make([]float64, t.NumActions)
	for a := range uniform {
		uniform[a] = 1 / float64(t.NumActions)
	}
	rows := make([][]float64, nS)
	for s := range rows {
		rows[s] = uniform
		if s < len(t.Rows) && t.Rows[s] != nil {
			rows[s] = t.Rows[s]
		}
	}
	return policy.NewTabular(rows)
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
