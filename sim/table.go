package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/mdp"
)

// Table is a finite MDP stored as its transition table. It is both a
// table (mdp.Finite, for exact values) and a Discrete simulator that draws
// from that same table, so that what is sampled and what is computed
// cannot disagree. The worlds of sim/cobs and sim/gridwalk are Tables.
type Table struct {
	out     [][][]mdp.Outcome // out[s][a]
	init    []float64
	sampler *Sampler
}

var (
	_ mdp.Finite = (*Table)(nil)
	_ Discrete   = (*Table)(nil)
)

// NewTable returns the MDP with outcomes out[s][a] and reset distribution
// init. Every state must have the same number (at least 1) of actions, and
// the table must pass Check. The slices are kept, not copied: the caller
// must not modify them afterwards.
func NewTable(out [][][]mdp.Outcome, init []float64) (*Table, error) {
	if len(out) == 0 || len(out[0]) == 0 {
		return nil, fmt.Errorf("env: empty table")
	}
	for s := range out {
		if len(out[s]) != len(out[0]) {
			return nil, fmt.Errorf("env: state %d has %d actions, state 0 has %d", s, len(out[s]), len(out[0]))
		}
	}
	t := &Table{out: out, init: init}
	if err := mdp.Check(t); err != nil {
		return nil, err
	}
	t.sampler = NewSampler(t)
	return t, nil
}

// NumStates returns the number of states.
func (t *Table) NumStates() int { return len(t.out) }

// NumActions returns the number of actions.
func (t *Table) NumActions() int { return len(t.out[0]) }

// Initial returns the reset distribution. It must not be modified.
func (t *Table) Initial() []float64 { return t.init }

// Outcomes returns the outcomes of action a in state s. The slice must not
// be modified.
func (t *Table) Outcomes(s, a int) []mdp.Outcome { return t.out[s][a] }

// Reset draws a start state from the reset distribution.
func (t *Table) Reset(rng *rand.Rand) int { return t.sampler.Reset(rng) }

// Step draws one outcome of action a in state s.
func (t *Table) Step(rng *rand.Rand, s, a int) (int, float64) { return t.sampler.Step(rng, s, a) }

// Episodic is implemented by tabular worlds whose episodes end. A terminal
// state is modelled as an absorbing state of the table: every action loops
// back to it with probability 1 and reward 0. Exact values (package mdp)
// then need no special case (after absorption every step adds 0), and a
// log padded to a fixed horizon stays in the absorbing state, as COBS pads
// its episodes. Absorbing says which states these are, so that a log can
// mark the steps taken after the episode ended.
type Episodic interface {
	Absorbing(s int) bool
}

// CheckAbsorbing verifies that every state s of m with absorbing(s) is
// absorbing: each action's outcomes lead back to s only, with reward 0.
func CheckAbsorbing(m mdp.Finite, absorbing func(s int) bool) error {
	for s := 0; s < m.NumStates(); s++ {
		if !absorbing(s) {
			continue
		}
		for a := 0; a < m.NumActions(); a++ {
			p := 0.0
			for _, o := range m.Outcomes(s, a) {
				if o.Prob == 0 {
					continue
				}
				if o.Next != s || o.Reward != 0 {
					return fmt.Errorf("env: absorbing state %d, action %d: outcome %+v leaves it or pays", s, a, o)
				}
				p += o.Prob
			}
			if math.Abs(p-1) > 1e-12 {
				return fmt.Errorf("env: absorbing state %d, action %d: self-loop probability %v", s, a, p)
			}
		}
	}
	return nil
}
