package dataset

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset/internal/rules"
)

// SetTargetPolicy sets the target's whole action distribution from p, a
// policy over discrete states and actions (a *policy.Tabular read from a
// target policy file, say): TargetProbs holds pi(.|s_j) for every step j,
// and FinalTargetProbs pi(.|s') for every episode whose final state s' is
// known (HasFinalTarget = HasFinal). It replaces any TargetProbs the log
// had. NumActions becomes max(NumActions, p.NumActions()): actions that p
// does not have get probability 0.
//
// The states and actions of d must be discrete, and p must cover them:
// p.NumStates() above the largest state id (final states included) and
// p.NumActions() above the largest action id; the error names the
// largest id and where it is. Every distribution p gives at a state of
// the log must lie in [0, 1] and sum to 1 within 1e-6. The log's target
// probability of each logged action, exp(LogTarget), must agree with p
// within 1e-6; the error names the episode, t and both values.
//
// LogTarget is kept as logged: where it agrees with p it is the same
// number, so the log's value wins for the logged action (its logarithm
// may be more exact than log p, and -Inf stays -Inf).
//
// On error d is left unchanged.
func (d *Dataset) SetTargetPolicy(p TablePolicy) error { return d.setTarget(p, targetFill) }

// ReplaceTargetPolicy makes SetTargetPolicy's checks and fills
// TargetProbs from p, and also sets LogTarget from p: for a log read
// without target columns, whose target is given as a policy file
// (package logio's ReadOptions.Target).
func (d *Dataset) ReplaceTargetPolicy(p TablePolicy) error { return d.setTarget(p, targetReplace) }

// CheckTargetPolicy makes SetTargetPolicy's checks of p against d and
// changes nothing: what a stream of shards runs on each shard, whose
// estimators take p itself.
func (d *Dataset) CheckTargetPolicy(p TablePolicy) error { return d.setTarget(p, targetCheck) }

// TablePolicy is a policy over discrete states and actions, as
// *policy.Tabular is.
type TablePolicy interface {
	NumStates() int
	NumActions() int
	Prob(s, a int) float64
}

// targetMode is what setTarget does with a target policy.
type targetMode int

const (
	targetCheck   targetMode = iota // check p against the log (CheckTargetPolicy)
	targetFill                      // and fill TargetProbs (SetTargetPolicy)
	targetReplace                   // and set LogTarget from p: the log has no target columns (ReadOptions.Target)
)

// setTarget is SetTargetPolicy and CheckTargetPolicy, by mode.
func (d *Dataset) setTarget(p TablePolicy, mode targetMode) error {
	fill, replace := mode >= targetFill, mode == targetReplace
	if d.StateDim > 0 || d.ActionDim > 0 {
		return fmt.Errorf("dataset: SetTargetPolicy needs discrete states and actions (the log has StateDim %d, ActionDim %d)",
			d.StateDim, d.ActionDim)
	}
	if err := d.checkShape(); err != nil {
		return err
	}
	nS, nA := p.NumStates(), p.NumActions()
	if nS <= 0 || nA <= 0 {
		return fmt.Errorf("dataset: the target policy has %d states and %d actions", nS, nA)
	}

	// The largest ids and where they are, for the coverage errors.
	type where struct {
		id, e, t int
		final    bool
	}
	maxS, maxA := where{id: -1}, where{id: -1}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			s, a := int(d.State[j]), int(d.Action[j])
			if s < 0 || a < 0 {
				return fmt.Errorf("dataset: episode %s, t = %d: negative state %d or action %d", Quote(d.IDs[e]), j-lo, s, a)
			}
			if s > maxS.id {
				maxS = where{id: s, e: e, t: j - lo}
			}
			if a > maxA.id {
				maxA = where{id: a, e: e, t: j - lo}
			}
		}
		if d.HasFinal[e] && d.FinalState[e] < 0 {
			return fmt.Errorf("dataset: episode %s: negative next state %d after its last step", Quote(d.IDs[e]), d.FinalState[e])
		}
		if d.HasFinal[e] && int(d.FinalState[e]) > maxS.id {
			maxS = where{id: int(d.FinalState[e]), e: e, t: hi - 1 - lo, final: true}
		}
	}
	if maxS.id >= nS {
		at := ""
		if maxS.final {
			at = "the next state of "
		}
		return fmt.Errorf("dataset: the target policy has %d states (ids 0 ... %d) but the log has state id %d (%sepisode %s, t = %d)",
			nS, nS-1, maxS.id, at, Quote(d.IDs[maxS.e]), maxS.t)
	}
	if maxA.id >= nA {
		return fmt.Errorf("dataset: the target policy has %d actions (ids 0 ... %d) but the log has action id %d (episode %s, t = %d)",
			nA, nA-1, maxA.id, Quote(d.IDs[maxA.e]), maxA.t)
	}

	// pi(.|s) once per state seen, checked; rows are padded to K.
	K := max(d.NumActions, nA)
	at := make([]int32, maxS.id+1) // state -> row in table, -1 if not yet
	for s := range at {
		at[s] = -1
	}
	var table []float64
	row := func(s int) ([]float64, error) {
		if at[s] < 0 {
			at[s] = int32(len(table) / K)
			r := make([]float64, K)
			for a := range nA {
				r[a] = p.Prob(s, a)
			}
			if msg := checkTargetRow(r); msg != "" {
				return nil, fmt.Errorf("dataset: the target policy at state %d: %s", s, msg)
			}
			table = append(table, r...)
		}
		i := int(at[s]) * K
		return table[i : i+K : i+K], nil
	}

	n, m := d.NumSteps(), d.NumEpisodes()
	var probs, final, logTarget []float64
	var hasFinal []bool
	if fill {
		probs, final, hasFinal = make([]float64, 0, n*K), make([]float64, m*K), make([]bool, m)
	}
	if replace {
		logTarget = make([]float64, n)
	}
	for e := range m {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			r, err := row(int(d.State[j]))
			if err != nil {
				return err
			}
			if a := d.Action[j]; replace {
				logTarget[j] = math.Log(r[a])
			} else if !rules.Agrees(d.LogTarget[j], r[a]) {
				return fmt.Errorf("dataset: episode %s, t = %d: the target policy file says pi(%d|%d) = %v but the log's target_prob says %v (they must agree within 1e-6)",
					Quote(d.IDs[e]), j-lo, a, d.State[j], r[a], math.Exp(d.LogTarget[j]))
			}
			if fill {
				probs = append(probs, r...)
			}
		}
		if d.HasFinal[e] {
			r, err := row(int(d.FinalState[e]))
			if err != nil {
				return err
			}
			if fill {
				copy(final[e*K:], r)
				hasFinal[e] = true
			}
		}
	}
	if !fill {
		return nil
	}
	d.NumActions = K
	d.TargetProbs, d.FinalTargetProbs, d.HasFinalTarget = probs, final, hasFinal
	if replace {
		d.LogTarget = logTarget
	}
	return nil
}
