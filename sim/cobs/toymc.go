package cobs

import (
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// The two actions of ToyMC.
const (
	Left  = 0
	Right = 1
)

// ToyMC's positions: -ToyMCLeft..ToyMCRight+1, the last one terminal.
const (
	ToyMCLeft  = 10
	ToyMCRight = 10
)

// ToyMC is COBS's discrete toy mountain car (ope/envs/discrete_toy_mc.py,
// DiscreteToyMC with its defaults): positions x = -10..+11, state
// s = x + 10 (0..21). Every episode starts at x = 0 (state 10). Left moves
// to x-1 (staying at -10), Right to x+1; every step pays -1, the step into
// x = +11 included. x = +11 (state 21) ends the episode: it is the
// absorbing state (COBS pads episodes with it too).
type ToyMC struct {
	*sim.Table
}

var (
	_ mdp.Finite   = (*ToyMC)(nil)
	_ sim.Discrete = (*ToyMC)(nil)
	_ sim.Episodic = (*ToyMC)(nil)
)

// NewToyMC returns the toy mountain car.
func NewToyMC() *ToyMC {
	n := ToyMCLeft + ToyMCRight + 2
	terminal := n - 1
	out := make([][][]mdp.Outcome, n)
	for s := range out {
		if s == terminal {
			out[s] = [][]mdp.Outcome{{{Next: s, Prob: 1}}, {{Next: s, Prob: 1}}}
			continue
		}
		out[s] = [][]mdp.Outcome{
			Left:  {{Next: max(s-1, 0), Prob: 1, Reward: -1}},
			Right: {{Next: s + 1, Prob: 1, Reward: -1}},
		}
	}
	init := make([]float64, n)
	init[ToyMCLeft] = 1
	t, err := sim.NewTable(out, init)
	if err != nil {
		panic(err) // unreachable: the table is well formed
	}
	return &ToyMC{Table: t}
}

// Absorbing reports whether s is the terminal position +11 (state 21).
func (m *ToyMC) Absorbing(s int) bool { return s == m.NumStates()-1 }

// Position returns the position x = s - 10 of state s.
func (m *ToyMC) Position(s int) int { return s - ToyMCLeft }

// Policy returns the policy that moves Right with probability pRight in
// every state but the absorbing one (COBS's BasicPolicy([0, 1],
// [1-p, p])). In the absorbing state every policy of this package picks
// action 0, so that those steps carry importance ratio 1. It panics
// unless 0 <= pRight <= 1.
func (m *ToyMC) Policy(pRight float64) *policy.Tabular {
	return stateless(m.NumStates(), m.Absorbing, Right, pRight)
}

// Target returns ToyMC's target, Policy(Level(TargetK)): Right with
// probability 0.2.
func (m *ToyMC) Target() *policy.Tabular { return m.Policy(Level(TargetK)) }

// Behavior returns ToyMC's behavior, Policy(Level(BehaviorK)): Right with
// probability 0.8.
func (m *ToyMC) Behavior() *policy.Tabular { return m.Policy(Level(BehaviorK)) }
