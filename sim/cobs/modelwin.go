package cobs

import (
	"fmt"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// ModelWin is COBS's ModelWin world (ope/envs/model_win.py), the "Model
// Win" domain of Thomas and Brunskill (2016): three states and two
// actions. From state 0, A0 leads to state 1 with probability 0.4 and to
// state 2 with probability 0.6, A1 the other way round (0.6 and 0.4);
// entering state 1 pays +1 and entering state 2 pays -1. From states 1 and
// 2 every action returns to state 0 and pays 0. Episodes start in state 0
// and have no terminal state: they end at the horizon (ModelWinHorizon),
// as COBS's max_length ends them. The state is fully observed and the
// dynamics are Markov, so a model of the logs is right asymptotically:
// the domain where model-based estimates win.
type ModelWin struct {
	*sim.Table
}

var (
	_ mdp.Finite   = (*ModelWin)(nil)
	_ sim.Discrete = (*ModelWin)(nil)
)

// NewModelWin returns the Model Win world.
func NewModelWin() *ModelWin {
	win, lose := mdp.Outcome{Next: 1, Reward: 1}, mdp.Outcome{Next: 2, Reward: -1}
	back := []mdp.Outcome{{Next: 0, Prob: 1}}
	out := [][][]mdp.Outcome{
		{
			A0: {{Next: win.Next, Prob: 0.4, Reward: win.Reward}, {Next: lose.Next, Prob: 0.6, Reward: lose.Reward}},
			A1: {{Next: win.Next, Prob: 0.6, Reward: win.Reward}, {Next: lose.Next, Prob: 0.4, Reward: lose.Reward}},
		},
		{back, back},
		{back, back},
	}
	t, err := sim.NewTable(out, []float64{1, 0, 0})
	if err != nil {
		panic(err) // unreachable: the table is well formed
	}
	return &ModelWin{Table: t}
}

// Policy returns COBS's BasicPolicy_MODELWIN: A0 with probability p0 in
// state 0, uniform in states 1 and 2 (where the action changes nothing).
// It panics unless 0 <= p0 <= 1.
func (m *ModelWin) Policy(p0 float64) *policy.Tabular {
	if !(p0 >= 0 && p0 <= 1) {
		panic(fmt.Sprintf("cobs: action probability %v outside [0, 1]", p0))
	}
	p, err := policy.NewTabular([][]float64{{p0, 1 - p0}, {0.5, 0.5}, {0.5, 0.5}})
	if err != nil {
		panic(err) // unreachable: the rows are distributions
	}
	return p
}

// Target returns ModelWin's target, Policy(Level(TargetK)).
func (m *ModelWin) Target() *policy.Tabular { return m.Policy(Level(TargetK)) }

// Behavior returns ModelWin's behavior, Policy(Level(BehaviorK)).
func (m *ModelWin) Behavior() *policy.Tabular { return m.Policy(Level(BehaviorK)) }
