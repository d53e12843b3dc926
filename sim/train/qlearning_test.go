package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// switchMDP has two states; action a moves to state a. Being in state 1
// pays 1 per step and switching states costs c, so
//
//	r(s, a) = [s == 1] - c [a != s].
type switchMDP struct{ cost float64 }

func (m switchMDP) NumStates() int     { return 2 }
func (m switchMDP) NumActions() int    { return 2 }
func (m switchMDP) Initial() []float64 { return []float64{1, 0} }
func (m switchMDP) Outcomes(s, a int) []mdp.Outcome {
	r := 0.0
	if s == 1 {
		r = 1
	}
	if a != s {
		r -= m.cost
	}
	return []mdp.Outcome{{Next: a, Prob: 1, Reward: r}}
}

// TestQLearningFixedPoint checks that on a deterministic MDP Q-learning
// reaches Q*, read back from the returned policy through
//
//	Q(s,1) - Q(s,0) = tau log(pi(1|s) / pi(0|s)).
//
// With gamma = 1/2, V*(1) = 1/(1-gamma) = 2 when staying in state 1 is
// optimal. For c = 0.1, switching from 0 is optimal: V*(0) = -0.1 + 0.5*2 =
// 0.9, Q*(0,.) = (0.45, 0.9), Q*(1,.) = (1 - 0.1 + 0.45, 2) = (1.35, 2).
// For c = 1.2, staying in 0 is optimal: V*(0) = 0, Q*(0,.) = (0, -0.2),
// Q*(1,.) = (-0.2, 2).
func TestQLearningFixedPoint(t *testing.T) {
	for i, tc := range []struct {
		cost   float64
		diff   [2]float64 // Q*(s,1) - Q*(s,0)
		greedy [2]int
	}{
		{cost: 0.1, diff: [2]float64{0.45, 0.65}, greedy: [2]int{1, 1}},
		{cost: 1.2, diff: [2]float64{-0.2, 2.2}, greedy: [2]int{0, 1}},
	} {
		q := QLearning{LearningRate: 0.5, Gamma: 0.5, Temperature: 1, StepsPerIteration: 1000, Iterations: 10}
		pis, err := q.Run(rand.New(rand.NewPCG(uint64(i), 0)), sim.NewSampler(switchMDP{tc.cost}), nil)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(pis) != 1 {
			t.Fatalf("case %d: %d policies, want 1", i, len(pis))
		}
		pi := pis[0]
		for s := range 2 {
			row := pi.Row(s)
			if got := math.Log(row[1] / row[0]); math.Abs(got-tc.diff[s]) > 1e-12 {
				t.Errorf("case %d state %d: Q(s,1)-Q(s,0) = %.15g, want %v", i, s, got, tc.diff[s])
			}
			if got := argmax(row); got != tc.greedy[s] {
				t.Errorf("case %d state %d: greedy action %d, want %d (policy %v)", i, s, got, tc.greedy[s], row)
			}
		}
	}
}

func argmax(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// TestQLearningSnapshots checks the bookkeeping of snapshots: iteration 0
// is softmax of the initial Q (the first 4 uniforms of the rng), requested
// order and duplicates are honoured, the same seed gives the same
// policies, and Progress counts every iteration.
func TestQLearningSnapshots(t *testing.T) {
	e := sim.NewSampler(switchMDP{0.1})
	calls := 0
	q := QLearning{Temperature: 0.5, StepsPerIteration: 7, Progress: func(done, total int) {
		calls++
		if done != calls || total != 6 {
			t.Errorf("progress(%d, %d) at call %d, want (%d, 6)", done, total, calls, calls)
		}
	}}
	got, err := q.Run(rand.New(rand.NewPCG(3, 0)), e, []int{6, 0, 2, 6})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 6 {
		t.Errorf("progress called %d times, want 6", calls)
	}
	q.Progress = nil
	want, err := q.Run(rand.New(rand.NewPCG(3, 0)), e, []int{0, 2, 6})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range []int{2, 0, 1, 2} {
		if !samePolicy(got[i], want[j]) {
			t.Errorf("snapshot %d differs from the sorted run's %d", i, j)
		}
	}
	if samePolicy(want[0], want[1]) || samePolicy(want[1], want[2]) {
		t.Errorf("policy did not change between snapshots")
	}

	rng := rand.New(rand.NewPCG(3, 0))
	q0 := [][]float64{{rng.Float64(), rng.Float64()}, {rng.Float64(), rng.Float64()}}
	init, err := policy.SoftmaxQ(q0, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if !samePolicy(got[1], init) {
		t.Errorf("snapshot at iteration 0 = %v %v, want softmax of the initial Q %v %v",
			got[1].Row(0), got[1].Row(1), init.Row(0), init.Row(1))
	}
}

func samePolicy(a, b *policy.Tabular) bool {
	if a.NumStates() != b.NumStates() {
		return false
	}
	for s := range a.NumStates() {
		if !slices.Equal(a.Row(s), b.Row(s)) {
			return false
		}
	}
	return true
}

func TestQLearningErrors(t *testing.T) {
	e := sim.NewSampler(switchMDP{0.1})
	for i, tc := range []struct {
		q     QLearning
		snaps []int
	}{
		{q: QLearning{LearningRate: -0.1}},
		{q: QLearning{LearningRate: 1.5}},
		{q: QLearning{Gamma: 1}},
		{q: QLearning{Gamma: -0.5}},
		{q: QLearning{Gamma: math.NaN()}},
		{q: QLearning{Temperature: -2}},
		{q: QLearning{Temperature: math.Inf(1)}},
		{q: QLearning{StepsPerIteration: -1}},
		{q: QLearning{Iterations: -3}},
		{q: QLearning{StepsPerIteration: 1}, snaps: []int{1, -1}},
	} {
		if _, err := tc.q.Run(rand.New(rand.NewPCG(1, 0)), e, tc.snaps); err == nil {
			t.Errorf("case %d: %+v with snapshots %v: no error", i, tc.q, tc.snaps)
		}
	}
}

// badEnv steps outside its state space.
type badEnv struct{ reward float64 }

func (badEnv) NumStates() int       { return 2 }
func (badEnv) NumActions() int      { return 2 }
func (badEnv) Reset(*rand.Rand) int { return 0 }
func (b badEnv) Step(_ *rand.Rand, s, a int) (int, float64) {
	if b.reward == 0 {
		return 2, 0
	}
	return 1, b.reward
}

func TestQLearningBadEnv(t *testing.T) {
	for i, e := range []badEnv{{0}, {math.NaN()}, {math.Inf(-1)}} {
		if _, err := (QLearning{StepsPerIteration: 1}).Run(rand.New(rand.NewPCG(1, 0)), e, []int{1}); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}
