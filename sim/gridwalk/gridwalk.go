package gridwalk

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// The four actions, in dice_rl's order.
const (
	XPlus  = 0 // x+1
	YPlus  = 1 // y+1
	XMinus = 2 // x-1
	YMinus = 3 // y-1
)

// NumActions is the number of actions.
const NumActions = 4

// The settings of dice_rl's GridWalk experiments: a 10x10 grid, the
// target alpha = 1 and behavior alpha = 0 (scripts/create_dataset.py and
// the run_*_dice.py scripts), trajectories of 100 steps, gamma = 0.99
// (google/scripts/xm_run_neural_dice.py).
const (
	DefaultLength = 10
	TargetAlpha   = 1.0
	BehaviorAlpha = 0.0
	Horizon       = 100
	Gamma         = 0.99
)

// TargetAlphas is the family of target policies: alpha = 1 (dice_rl's
// target) and the alphas 0.75 ... 0.95 that BayesDICE's experiments
// evaluate (google/scripts/xm_run_neural_bayes_dice.py), in decreasing
// order (increasing epsilon). It must not be modified.
var TargetAlphas = []float64{1, 0.95, 0.9, 0.85, 0.8, 0.75}

// GridWalk is dice_rl's GridWalk (environments/gridworld/navigation.py): an
// n x n grid without walls, positions (x, y) with 0 <= x, y < n, state
// s = n x + y, the goal in the corner (n-1, n-1). Each action moves one
// cell (XPlus: x+1, YPlus: y+1, XMinus: x-1, YMinus: y-1); a move off the
// grid stays in place. Every step pays exp(-2 d / n), d the Manhattan
// distance from the cell reached to the goal: 1 at the goal, exp(-2 (2n-2)/n)
// in the far corner. There is no terminal state (the task is continuing),
// and the reset draws the start cell uniformly among the n^2 cells (the map
// has no start cell 'S', so Navigation.reset draws one at random).
type GridWalk struct {
	*sim.Table
	n      int
	greedy []int // the shortest-path action of each state
}

var (
	_ mdp.Finite   = (*GridWalk)(nil)
	_ sim.Discrete = (*GridWalk)(nil)
)

// New returns the n x n GridWalk; dice_rl's is New(DefaultLength).
func New(n int) (*GridWalk, error) {
	if n < 2 {
		return nil, fmt.Errorf("gridwalk: side %d, want >= 2", n)
	}
	g := &GridWalk{n: n}
	out := make([][][]mdp.Outcome, n*n)
	init := make([]float64, n*n)
	for s := range out {
		x, y := g.Decode(s)
		out[s] = make([][]mdp.Outcome, NumActions)
		for a := range out[s] {
			nx, ny := g.move(x, y, a)
			out[s][a] = []mdp.Outcome{{Next: g.Encode(nx, ny), Prob: 1, Reward: g.Reward(nx, ny)}}
		}
		init[s] = 1 / float64(n*n)
	}
	t, err := sim.NewTable(out, init)
	if err != nil {
		return nil, err
	}
	g.Table = t
	g.greedy = g.shortestPathActions()
	return g, nil
}

// Length returns the side n of the grid.
func (g *GridWalk) Length() int { return g.n }

// Encode returns the state of cell (x, y), n x + y (dice_rl's tabular
// observation). It panics if the cell is off the grid.
func (g *GridWalk) Encode(x, y int) int {
	if x < 0 || x >= g.n || y < 0 || y >= g.n {
		panic(fmt.Sprintf("gridwalk: cell (%d, %d) off the %dx%d grid", x, y, g.n, g.n))
	}
	return g.n*x + y
}

// Decode returns the cell (x, y) of state s.
func (g *GridWalk) Decode(s int) (x, y int) { return s / g.n, s % g.n }

// Goal returns the goal cell (n-1, n-1).
func (g *GridWalk) Goal() (x, y int) { return g.n - 1, g.n - 1 }

// Distance returns the Manhattan distance from (x, y) to the goal.
func (g *GridWalk) Distance(x, y int) int { return (g.n - 1 - x) + (g.n - 1 - y) }

// Reward returns what a step into cell (x, y) pays, exp(-2 d / n) with d
// its distance to the goal.
func (g *GridWalk) Reward(x, y int) float64 {
	return math.Exp(-2 * float64(g.Distance(x, y)) / float64(g.n))
}

// move returns the cell that action a leads to from (x, y).
func (g *GridWalk) move(x, y, a int) (int, int) {
	switch a {
	case XPlus:
		x = min(x+1, g.n-1)
	case YPlus:
		y = min(y+1, g.n-1)
	case XMinus:
		x = max(x-1, 0)
	case YMinus:
		y = max(y-1, 0)
	}
	return x, y
}

// shortestPathActions reproduces dice_rl's _compute_near_optimal_actions:
// a breadth-first search from the goal that gives each cell, when first
// reached, the action that steps back towards the cell it was reached
// from, visiting the neighbours (x-1, y), (x, y-1), (x+1, y), (x, y+1) of
// each cell in that order. The goal's own action is XPlus, a move into the
// wall that keeps the walker on the goal. Off the goal's row and column
// both XPlus and YPlus are shortest; the search order gives YPlus to every
// cell but those of the column y = n-1, which get XPlus.
func (g *GridWalk) shortestPathActions() []int {
	act := make([]int, g.n*g.n)
	seen := make([]bool, g.n*g.n)
	gx, gy := g.Goal()
	act[g.Encode(gx, gy)] = XPlus
	seen[g.Encode(gx, gy)] = true
	current := [][2]int{{gx, gy}}
	for len(current) > 0 {
		var next [][2]int
		for _, p := range current {
			for _, c := range []struct {
				a    int
				x, y int
			}{
				{XPlus, p[0] - 1, p[1]},
				{YPlus, p[0], p[1] - 1},
				{XMinus, p[0] + 1, p[1]},
				{YMinus, p[0], p[1] + 1},
			} {
				if c.x < 0 || c.y < 0 || c.x >= g.n || c.y >= g.n {
					continue
				}
				s := g.Encode(c.x, c.y)
				if seen[s] {
					continue
				}
				seen[s] = true
				act[s] = c.a
				next = append(next, [2]int{c.x, c.y})
			}
		}
		current = next
	}
	return act
}

// Greedy returns the shortest-path action of state s that the policies
// favour (dice_rl's near-optimal action).
func (g *GridWalk) Greedy(s int) int { return g.greedy[s] }

// EpsilonGreedy returns dice_rl's navigation policy with exploration eps
// (get_navigation_policy): in every state, the shortest-path action with
// probability 1 - eps + eps/4 and each other action with probability
// eps/4. It panics unless 0 <= eps <= 1.
func (g *GridWalk) EpsilonGreedy(eps float64) *policy.Tabular {
	if !(eps >= 0 && eps <= 1) {
		panic(fmt.Sprintf("gridwalk: exploration %v outside [0, 1]", eps))
	}
	rows := make([][]float64, g.NumStates())
	for s := range rows {
		row := make([]float64, NumActions)
		for a := range row {
			row[a] = eps / NumActions
		}
		row[g.greedy[s]] += 1 - eps
		rows[s] = row
	}
	p, err := policy.NewTabular(rows)
	if err != nil {
		panic(err) // unreachable: the rows are distributions
	}
	return p
}

// Epsilon returns dice_rl's exploration for closeness alpha to the
// target, 0.1 + 0.6 (1 - alpha) (environments/env_policies.py,
// get_env_and_policy for 'grid'): 0.1 at alpha = 1, 0.7 at alpha = 0.
func Epsilon(alpha float64) float64 { return 0.1 + 0.6*(1-alpha) }

// Policy returns the policy of closeness alpha to the target,
// EpsilonGreedy(Epsilon(alpha)). It panics unless 0 <= alpha <= 1.
func (g *GridWalk) Policy(alpha float64) *policy.Tabular {
	if !(alpha >= 0 && alpha <= 1) {
		panic(fmt.Sprintf("gridwalk: alpha %v outside [0, 1]", alpha))
	}
	return g.EpsilonGreedy(Epsilon(alpha))
}

// Target returns dice_rl's target policy, Policy(TargetAlpha) (epsilon 0.1).
func (g *GridWalk) Target() *policy.Tabular { return g.Policy(TargetAlpha) }

// Behavior returns dice_rl's behavior policy, Policy(BehaviorAlpha)
// (epsilon 0.7).
func (g *GridWalk) Behavior() *policy.Tabular { return g.Policy(BehaviorAlpha) }
