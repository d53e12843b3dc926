package ope

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/value"
)

// sarStep is a logged (s, a, r, s') step; next < 0 means no next state.
func sarStep(s, a int, r float64, next int) dataset.Step {
	st := dataset.Step{State: s, Action: a, Reward: r, NextState: next, HasNext: next >= 0}
	if next < 0 {
		st.NextState = -1
	}
	return st
}

// countData has 3 states and 3 actions:
//
//	ep a: (0,0,1 -> 1) (1,0,0 -> 0) (0,0,3 -> 0)
//	ep b: (0,1,2 -> 1) (1,0,2 -> 2)
//	ep c: (1,1,5, no next state)
//
// State 2 is never left; action 2 is never taken; (1,1) has a reward but
// no transition.
func countData() *dataset.Dataset {
	d, err := dataset.New(3, 3, []dataset.Episode{
		{ID: "a", Steps: []dataset.Step{sarStep(0, 0, 1, 1), sarStep(1, 0, 0, 0), sarStep(0, 0, 3, 0)}},
		{ID: "b", Steps: []dataset.Step{sarStep(0, 1, 2, 1), sarStep(1, 0, 2, 2)}},
		{ID: "c", Steps: []dataset.Step{sarStep(1, 1, 5, -1)}},
	})
	if err != nil {
		panic(err)
	}
	return d
}

func TestCountModel(t *testing.T) {
	m, err := value.FitCountModel(countData())
	if err != nil {
		t.Fatal(err)
	}
	if err := mdp.Check(m); err != nil {
		t.Fatalf("fitted model is not a valid table: %v", err)
	}
	// Start states: a and b start in 0, c in 1.
	wantInit := []float64{2. / 3, 1. / 3, 0}
	for s, p := range wantInit {
		if math.Abs(m.Initial()[s]-p) > 1e-15 {
			t.Errorf("Initial()[%d] = %v, want %v", s, m.Initial()[s], p)
		}
	}
	const global = 13. / 6 // (1+0+3+2+2+5)/6
	cases := []struct {
		s, a   int
		visits int
		want   []mdp.Outcome
	}{
		// Seen: next states 1 and 0 once each, rewards 1 and 3.
		{0, 0, 2, []mdp.Outcome{{Next: 0, Prob: 0.5, Reward: 2}, {Next: 1, Prob: 0.5, Reward: 2}}},
		{0, 1, 1, []mdp.Outcome{{Next: 1, Prob: 1, Reward: 2}}},
		// Unseen action 2 in state 0: pooled next states {1, 0, 1}, state
		// mean reward (1+3+2)/3.
		{0, 2, 0, []mdp.Outcome{{Next: 0, Prob: 1. / 3, Reward: 2}, {Next: 1, Prob: 2. / 3, Reward: 2}}},
		{1, 0, 2, []mdp.Outcome{{Next: 0, Prob: 0.5, Reward: 1}, {Next: 2, Prob: 0.5, Reward: 1}}},
		// Reward seen (5) but no transition: pooled next states of state 1.
		{1, 1, 0, []mdp.Outcome{{Next: 0, Prob: 0.5, Reward: 5}, {Next: 2, Prob: 0.5, Reward: 5}}},
		// Nothing seen: pooled next states, state-1 mean reward (0+2+5)/3.
		{1, 2, 0, []mdp.Outcome{{Next: 0, Prob: 0.5, Reward: 7. / 3}, {Next: 2, Prob: 0.5, Reward: 7. / 3}}},
		// State 2 is never left: self-loop with the data mean.
		{2, 0, 0, []mdp.Outcome{{Next: 2, Prob: 1, Reward: global}}},
		{2, 2, 0, []mdp.Outcome{{Next: 2, Prob: 1, Reward: global}}},
	}
	for _, c := range cases {
		if v := m.Visits(c.s, c.a); v != c.visits {
			t.Errorf("Visits(%d, %d) = %d, want %d", c.s, c.a, v, c.visits)
		}
		got := m.Outcomes(c.s, c.a)
		if len(got) != len(c.want) {
			t.Errorf("Outcomes(%d, %d) = %v, want %v", c.s, c.a, got, c.want)
			continue
		}
		for i := range got {
			if got[i].Next != c.want[i].Next || math.Abs(got[i].Prob-c.want[i].Prob) > 1e-15 ||
				math.Abs(got[i].Reward-c.want[i].Reward) > 1e-15 {
				t.Errorf("Outcomes(%d, %d) = %v, want %v", c.s, c.a, got, c.want)
				break
			}
		}
	}
}

func TestModelBasedHand(t *testing.T) {
	// Target: always action 0. In the model of countData,
	//	d_0 = (2/3, 1/3, 0); E r_0 = 2/3 * r(0,0) + 1/3 * r(1,0) = 4/3 + 1/3 = 5/3;
	//	d_1 = 2/3 (1/2, 1/2, 0) + 1/3 (1/2, 0, 1/2) = (1/2, 1/3, 1/6);
	//	E r_1 = 1/2 * 2 + 1/3 * 1 + 1/6 * 13/6 = 61/36.
	// T = 2: gamma = 1 gives (5/3 + 61/36)/2 = 121/72; gamma = 1/2 gives
	// 2/3 * 5/3 + 1/3 * 61/36 = 181/108.
	target := tabularPolicy(t, [][]float64{{1, 0, 0}, {1, 0, 0}, {1, 0, 0}})
	for _, c := range []struct {
		gamma, want float64
	}{{1, 121. / 72}, {0.5, 181. / 108}} {
		res, err := (&ModelBased{Target: target, Horizon: 2}).Estimate(countData(), c.gamma)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Value-c.want) > 1e-12 {
			t.Errorf("gamma %v: %.17g, want %.17g", c.gamma, res.Value, c.want)
		}
	}
	// Horizon 0 means each episode's own length (a: 3 steps from state 0,
	// b: 2 from state 0, c: 1 from state 1): the mean of the three pushes
	// through the count model.
	d := countData()
	m, err := value.FitCountModel(d)
	if err != nil {
		t.Fatal(err)
	}
	want := (mdp.Value(m, target, []float64{1, 0, 0}, 3, 0.9) +
		mdp.Value(m, target, []float64{1, 0, 0}, 2, 0.9) +
		mdp.Value(m, target, []float64{0, 1, 0}, 1, 0.9)) / 3
	def, err1 := (&ModelBased{Target: target}).Estimate(d, 0.9)
	three, err2 := (&ModelBased{Target: target, Horizon: 3}).Estimate(d, 0.9)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if math.Abs(def.Value-want) > 1e-12 || def.Value == three.Value {
		t.Errorf("horizon 0: %.17g, want %.17g; horizon 3: %v", def.Value, want, three.Value)
	}
}

// detMDP is a deterministic 3-state, 2-action MDP with integer rewards.
type detMDP struct{}

func (detMDP) NumStates() int     { return 3 }
func (detMDP) NumActions() int    { return 2 }
func (detMDP) Initial() []float64 { return []float64{0.5, 0.25, 0.25} }
func (detMDP) Outcomes(s, a int) []mdp.Outcome {
	next := []int{(s + 1) % 3, (s * 2) % 3}[a]
	return []mdp.Outcome{{Next: next, Prob: 1, Reward: float64(2*s - a)}}
}

// TestModelBasedKnownModel: with deterministic dynamics and every pair
// visited, the count model is the true model, so the estimate equals the
// exact value from the empirical start distribution.
func TestModelBasedKnownModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	target := tabularPolicy(t, [][]float64{{0.3, 0.7}, {0.8, 0.2}, {0.5, 0.5}})
	d, err := rollout.Sample(rng, sim.NewSampler(detMDP{}), policy.Uniform(3, 2), target, 20, 15)
	if err != nil {
		t.Fatal(err)
	}
	m, err := value.FitCountModel(d)
	if err != nil {
		t.Fatal(err)
	}
	for s := range 3 {
		for a := range 2 {
			if m.Visits(s, a) == 0 {
				t.Fatalf("pair (%d, %d) not visited; pick another seed", s, a)
			}
		}
	}
	d0 := make([]float64, 3)
	for e := range d.NumEpisodes() {
		d0[d.State[d.Start[e]]] += 1.0 / float64(d.NumEpisodes())
	}
	for _, gamma := range []float64{1, 0.9} {
		for _, T := range []int{0, 1, 40} {
			res, err := (&ModelBased{Target: target, Horizon: T}).Estimate(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			h := T
			if h == 0 {
				h = 15
			}
			want := mdp.Value(detMDP{}, target, d0, h, gamma)
			if math.Abs(res.Value-want) > 1e-12 {
				t.Errorf("gamma %v, T %d: %.17g, exact %.17g", gamma, T, res.Value, want)
			}
		}
	}
}

// TestModelBasedUnequalLengths: on logs whose episodes have different
// lengths, the Horizon estimate is the mean over episodes of the exact
// value from each episode's first state with its own length (the
// estimand every estimator targets), here exact because the count model
// of deterministic dynamics is the true model; and it equals tabular
// fqe's. Before, every start was pushed through the longest length.
func TestModelBasedUnequalLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	target := tabularPolicy(t, [][]float64{{0.3, 0.7}, {0.8, 0.2}, {0.5, 0.5}})
	full, err := rollout.Sample(rng, sim.NewSampler(detMDP{}), policy.Uniform(3, 2), target, 40, 15)
	if err != nil {
		t.Fatal(err)
	}
	eps := full.Episodes()
	for i := range eps {
		if i%2 == 1 {
			eps[i].Steps = eps[i].Steps[:4] // lengths 15, 4, 15, 4, ...
		}
	}
	d, err := dataset.New(3, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{1, 0.9} {
		want := 0.0
		for e := range d.NumEpisodes() {
			lo, hi := d.Span(e)
			d0 := make([]float64, 3)
			d0[d.State[lo]] = 1
			want += mdp.Value(detMDP{}, target, d0, hi-lo, gamma) / float64(d.NumEpisodes())
		}
		mb, err := (&ModelBased{Target: target}).Estimate(d, gamma)
		if err != nil {
			t.Fatal(err)
		}
		fqe, err := FQE{Target: value.Target{Policy: target}}.Estimate(d, gamma)
		if err != nil {
			t.Fatal(err)
		}
		longest := mdp.Value(detMDP{}, target, startLaw(d), 15, gamma)
		t.Logf("gamma %v: model-based %.12f, fqe %.12f, exact %.12f, all pushed 15 steps %.12f", gamma, mb.Value, fqe.Value, want, longest)
		if math.Abs(mb.Value-want) > 1e-12 || math.Abs(fqe.Value-want) > 1e-12 {
			t.Errorf("gamma %v: model-based %.15g, fqe %.15g, want the exact %.15g", gamma, mb.Value, fqe.Value, want)
		}
	}
}

// startLaw is the empirical distribution of d's first states.
func startLaw(d *dataset.Dataset) []float64 {
	p := make([]float64, d.NumStates)
	for e := range d.NumEpisodes() {
		p[d.State[d.Start[e]]] += 1 / float64(d.NumEpisodes())
	}
	return p
}

func TestModelBasedErrors(t *testing.T) {
	target := tabularPolicy(t, [][]float64{{1, 0, 0}, {1, 0, 0}, {1, 0, 0}})
	// One step of a real state (0, 1) and no action count, built by hand
	// (dataset.New refuses NumActions = 0 without action vectors).
	continuous := &dataset.Dataset{StateDim: 2, IDs: []string{"x"}, Start: []int{0, 1},
		Obs: []float64{0, 1}, Action: []int32{0}, Reward: []float64{0},
		LogBehavior: []float64{0}, LogTarget: []float64{0},
		HasFinal: []bool{false}, FinalObs: []float64{0, 0}}
	// The next state of episode b's last step (step 1) is its final state.
	badState := countData()
	badState.FinalState[1] = 3
	// Episode a's step 2 is step 2 of the log.
	badAction := countData()
	badAction.Action[badAction.Start[0]+2] = -1
	cases := []struct {
		name string
		e    *ModelBased
		d    *dataset.Dataset
		text string
	}{
		{"continuous", &ModelBased{Target: target}, continuous, "discrete"},
		{"no target", &ModelBased{}, countData(), "target"},
		{"wrong shape", &ModelBased{Target: policy.Uniform(3, 2)}, countData(), "3x2"},
		{"next state", &ModelBased{Target: target}, badState, `episode "b" step 1: next state 3`},
		{"action", &ModelBased{Target: target}, badAction, `episode "a" step 2: action -1`},
		{"horizon", &ModelBased{Target: target, Horizon: -1}, countData(), "horizon"},
	}
	for _, c := range cases {
		_, err := c.e.Estimate(c.d, 1)
		if err == nil || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.text)
		}
	}
}

func BenchmarkModelBased(b *testing.B) {
	d, target := benchData(b)
	e := &ModelBased{Target: target}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Estimate(d, 0.99); err != nil {
			b.Fatal(err)
		}
	}
}
