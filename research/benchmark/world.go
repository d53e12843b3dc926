package benchmark

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// Table is a tabular world that also samples itself, so that the logs and
// the exact truths come from one table (sim.Table, taxi.MDP through
// sim.NewSampler).
type Table interface {
	mdp.Finite
	sim.Discrete
}

// World is one environment of the benchmark: a table, the behavior that
// logs it, a family of target policies to evaluate and rank, and the
// logging setting of its source.
type World struct {
	// Name is a short id, the panel name in the results file ("graph").
	Name string
	// Title says what the world is, for tables and figures.
	Title string
	// Source says where N, T, Gamma and the policies come from.
	Source string
	// Table is the world.
	Table Table
	// Behavior logs the data; Targets is the family evaluated on the same
	// logs, in the order of the figures' x axis.
	Behavior *policy.Tabular
	Targets  []Target
	// N episodes of T steps are logged per seed; Gamma is the discount
	// of the value estimated.
	N, T  int
	Gamma float64
	// Observe, if not nil, maps a state to what the log records instead
	// (COBS's ModelFail, whose log aliases states), NumObs observations
	// in all. The truths stay those of the world's states; the targets'
	// Logged policies are over observations.
	Observe func(s int) int
	NumObs  int
}

// Target is one policy of a world's family.
type Target struct {
	// Name identifies the policy ("pi19", "P(A0)=0.2"); Tick labels it on
	// a figure's axis.
	Name, Tick string
	// Policy acts in the world's states: the exact truths are its values.
	Policy *policy.Tabular
	// Logged is the same policy over what the log records (Policy itself
	// unless the world has Observe): what the estimators that need the
	// target's whole action distribution are given.
	Logged *policy.Tabular
}

// Truths returns the exact truth of every estimand for target i: the
// normalised T-step value from the reset distribution (mdp.Value, the
// Horizon estimand the benchmark asks for) and the long-run value
// (mdp.LongRun: the average reward for Gamma = 1, (1 - Gamma) E[V(s0)]
// below), which the estimators stating ope.LongRun are scored against.
// In an episodic world at Gamma = 1 the long-run value is 0: the episode
// has ended in its absorbing state.
func (w *World) Truths(i int) (map[ope.Estimand]float64, error) {
	pi := w.Targets[i].Policy
	lr, err := mdp.LongRun(w.Table, pi, w.Gamma)
	if err != nil {
		return nil, fmt.Errorf("%s, target %s: %w", w.Name, w.Targets[i].Name, err)
	}
	return map[ope.Estimand]float64{
		ope.Horizon: mdp.Value(w.Table, pi, nil, w.T, w.Gamma),
		ope.LongRun: lr,
	}, nil
}

// Sample logs w.N episodes of w.T steps under the behavior, recording
// target i's probabilities of the logged actions. The behavior's draws do
// not depend on the target, so one rng state gives every target of the
// family the same episodes (the family is ranked on one log, as DOPE
// does). Terminal states are the world's absorbing states (sim.Episodic):
// an episode that ends before T stays in its absorbing state, every
// policy takes action 0 there with probability 1 and every step there
// pays 0, so the padded steps carry ratio 1 and change no estimator's
// value of the episode (there is no terminal column in the log).
func (w *World) Sample(rng *rand.Rand, i int) (*dataset.Dataset, error) {
	d, err := rollout.Sample(rng, w.Table, w.Behavior, w.Targets[i].Policy, w.N, w.T)
	if err != nil || w.Observe == nil {
		return d, err
	}
	// The log records observations: the same steps, states aliased.
	var b dataset.Builder
	b.Init(w.NumObs, d.NumActions, 0, 0)
	b.Grow(d.NumSteps())
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			st := d.Step(e, j)
			st.State = w.Observe(st.State)
			if st.HasNext {
				st.NextState = w.Observe(st.NextState)
			}
			b.Add(st)
		}
		b.EndEpisode(d.IDs[e])
	}
	return b.Dataset()
}

// observed returns pi as a policy over observations: the row of every
// state seen as observation o. It fails if two states seen alike have
// different rows (the policy then cannot act on the observations).
func observed(pi *policy.Tabular, observe func(int) int, numObs int) (*policy.Tabular, error) {
	rows := make([][]float64, numObs)
	for s := range pi.NumStates() {
		o := observe(s)
		row := pi.Row(s)
		if rows[o] == nil {
			rows[o] = row
			continue
		}
		for a := range row {
			if row[a] != rows[o][a] {
				return nil, fmt.Errorf("benchmark: states seen as observation %d have different action distributions", o)
			}
		}
	}
	for o, r := range rows {
		if r == nil {
			return nil, fmt.Errorf("benchmark: no state is seen as observation %d", o)
		}
	}
	return policy.NewTabular(rows)
}
