package cobs

import (
	"fmt"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// The two actions of the Graph, ModelFail and ModelWin.
const (
	A0 = 0 // the "upper" action: to the odd (+1) state with probability 1 - Slip
	A1 = 1 // the "lower" action: to the even (-1) state with probability 1 - Slip
)

// GraphConfig is the set of options of COBS's Graph class (ope/envs/graph.py),
// named as there: max_length is Length, transitions_deterministic is
// Slip = 0 and sparse_rewards is Sparse. make_pomdp with
// number_of_pomdp_states is Observations (0: the state is observed).
// COBS's stochastic_rewards (Gaussian noise on the rewards) is left out:
// it changes no expected value.
type GraphConfig struct {
	Length       int     // L >= 2: layers 0..L-1, then the absorbing state; also the horizon
	Slip         float64 // probability that an action leads to the other state of the next layer
	Sparse       bool    // reward only on the last step
	Observations int     // 0, or the number k >= 2 of observations of COBS's POMDP version
}

// Graph is COBS's Graph world: a chain of L layers that every episode
// crosses in exactly L steps. Layer 0 is the start state 0; layer
// j = 1..L-1 holds an odd state 2j-1 (paying +1 to enter) and an even state
// 2j (paying -1 to enter). From any state of layers 0..L-2, action A0 goes
// to the odd state of the next layer and A1 to the even one, each with
// probability 1 - Slip (the other state with probability Slip). From the
// last layer every action ends the episode, paying +1 from the odd state
// and -1 from the even one, into the absorbing state 2L-1.
//
// With Sparse the steps into layers 1..L-1 pay 0, so that only the last
// step pays +1 or -1.
type Graph struct {
	*sim.Table
	cfg GraphConfig
	obs []int // observation of each state
}

var (
	_ mdp.Finite   = (*Graph)(nil)
	_ sim.Discrete = (*Graph)(nil)
	_ sim.Episodic = (*Graph)(nil)
)

// NewGraph returns the Graph with the given options.
func NewGraph(c GraphConfig) (*Graph, error) {
	L := c.Length
	if L < 2 {
		return nil, fmt.Errorf("cobs: graph length %d, want >= 2", L)
	}
	if !(c.Slip >= 0 && c.Slip <= 1) {
		return nil, fmt.Errorf("cobs: graph slip %v outside [0, 1]", c.Slip)
	}
	if c.Observations != 0 && (c.Observations < 2 || c.Observations > 2*L-1) {
		return nil, fmt.Errorf("cobs: %d observations of a graph of length %d, want 0 or 2..%d", c.Observations, L, 2*L-1)
	}
	n := 2 * L
	absorbing := n - 1
	out := make([][][]mdp.Outcome, n)
	for s := range out {
		out[s] = make([][]mdp.Outcome, 2)
		switch {
		case s == absorbing:
			for a := range out[s] {
				out[s][a] = []mdp.Outcome{{Next: s, Prob: 1}}
			}
		case s >= 2*L-3: // the last layer: 2L-3 (odd) and 2L-2 (even)
			r := 1.0
			if s%2 == 0 {
				r = -1
			}
			for a := range out[s] {
				out[s][a] = []mdp.Outcome{{Next: absorbing, Prob: 1, Reward: r}}
			}
		default:
			j := (s + 1) / 2 // layer of s: 0 for the start, j for 2j-1 and 2j
			odd, even := 2*j+1, 2*j+2
			rOdd, rEven := 1.0, -1.0
			if c.Sparse {
				rOdd, rEven = 0, 0
			}
			up := mdp.Outcome{Next: odd, Reward: rOdd}
			down := mdp.Outcome{Next: even, Reward: rEven}
			out[s][A0] = split(up, down, c.Slip)
			out[s][A1] = split(down, up, c.Slip)
		}
	}
	init := make([]float64, n)
	init[0] = 1
	t, err := sim.NewTable(out, init)
	if err != nil {
		return nil, err
	}
	return &Graph{Table: t, cfg: c, obs: observations(L, c.Observations)}, nil
}

// split returns the outcomes "intended with probability 1 - slip, other
// with probability slip", leaving out an outcome of probability 0.
func split(intended, other mdp.Outcome, slip float64) []mdp.Outcome {
	intended.Prob, other.Prob = 1-slip, slip
	switch slip {
	case 0:
		return []mdp.Outcome{intended}
	case 1:
		return []mdp.Outcome{other}
	}
	return []mdp.Outcome{intended, other}
}

// observations returns COBS's state_to_pomdp_state for k observations:
// the states 1..2L-2 split into k-1 consecutive groups as numpy's
// array_split does (the first groups one larger when they cannot be
// equal), group i seen as observation i; the start state is seen as 0 and
// the absorbing state as k-1. k = 0 means every state is observed.
func observations(L, k int) []int {
	n := 2 * L
	obs := make([]int, n)
	if k == 0 {
		for s := range obs {
			obs[s] = s
		}
		return obs
	}
	inner := n - 2 // states 1..2L-2
	groups := k - 1
	s := 1
	for g := 0; g < groups; g++ {
		size := inner / groups
		if g < inner%groups {
			size++
		}
		for range size {
			obs[s] = g
			s++
		}
	}
	obs[0], obs[n-1] = 0, k-1
	return obs
}

// Config returns the options the Graph was built with.
func (g *Graph) Config() GraphConfig { return g.cfg }

// Absorbing reports whether s is the absorbing state 2L-1 that every
// episode enters after L steps.
func (g *Graph) Absorbing(s int) bool { return s == g.NumStates()-1 }

// NumObservations returns the number of distinct observations: k for the
// POMDP version, the number of states otherwise.
func (g *Graph) NumObservations() int {
	if g.cfg.Observations == 0 {
		return g.NumStates()
	}
	return g.cfg.Observations
}

// Observe returns what an agent sees in state s: s itself, or its group in
// the POMDP version (COBS's state_to_pomdp_state). The table, the exact
// values and the policies of this package are over states; the
// observations are what a partially observed log would record.
func (g *Graph) Observe(s int) int { return g.obs[s] }

// Policy returns the policy that picks A0 with probability p0 in every
// state but the absorbing one, where it picks A0 (no decision is made
// there: every policy of this package agrees on it, so that its steps
// carry importance ratio 1, as COBS's padding does). It panics unless
// 0 <= p0 <= 1.
func (g *Graph) Policy(p0 float64) *policy.Tabular {
	return stateless(g.NumStates(), g.Absorbing, A0, p0)
}

// Target returns the Graph's target policy, Policy(Level(TargetK)).
func (g *Graph) Target() *policy.Tabular { return g.Policy(Level(TargetK)) }

// Behavior returns the Graph's behavior policy, Policy(Level(BehaviorK)).
func (g *Graph) Behavior() *policy.Tabular { return g.Policy(Level(BehaviorK)) }
