package ope

import (
	"math"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// firstStep is a 5-state chain 0 -> 1 -> ... -> 4 -> 4 with one action
// that starts in 0 and pays 1 in state 0 only, so a rollout of length T
// earns gamma_0 = 1 / sum_{t<T} gamma^t.
type firstStep struct{}

func (firstStep) NumStates() int     { return 5 }
func (firstStep) NumActions() int    { return 1 }
func (firstStep) Initial() []float64 { return []float64{1, 0, 0, 0, 0} }
func (firstStep) Outcomes(s, a int) []mdp.Outcome {
	r := 0.0
	if s == 0 {
		r = 1
	}
	return []mdp.Outcome{{Next: min(s+1, 4), Prob: 1, Reward: r}}
}

func TestOnPolicyShape(t *testing.T) {
	// Logged episodes of lengths 1 and 4 (their contents are ignored).
	d := loggedData(
		[]dataset.Step{loggedStep(0.5, 0.5, 7)},
		[]dataset.Step{loggedStep(0.5, 0.5, 7), loggedStep(0.5, 0.5, 7), loggedStep(0.5, 0.5, 7), loggedStep(0.5, 0.5, 7)},
	)
	e := sim.NewSampler(firstStep{})
	pi := policy.Uniform(5, 1)
	cases := []struct {
		name              string
		episodes, horizon int
		gamma, want       float64
	}{
		// Lengths (1, 4): (1 + 1/4)/2.
		{"logged shape", 0, 0, 1, 5. / 8},
		// gamma = 1/2: (1 + 1/(1 + 1/2 + 1/4 + 1/8))/2 = (1 + 8/15)/2.
		{"logged shape, gamma 1/2", 0, 0, 0.5, 23. / 30},
		// Horizon 2 for both: 1/2.
		{"horizon", 0, 2, 1, 0.5},
		// Three rollouts reuse the lengths (1, 4, 1): (1 + 1/4 + 1)/3.
		{"episodes", 3, 0, 1, 0.75},
		{"both", 7, 3, 1, 1. / 3},
	}
	for _, c := range cases {
		res, err := (&OnPolicy{Sim: rollout.Simulator{Env: e, Target: pi}, Episodes: c.episodes, Horizon: c.horizon}).Estimate(d, c.gamma)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if math.Abs(res.Value-c.want) > 1e-15 || res.Weights != nil {
			t.Errorf("%s: %v (weights %v), want %v", c.name, res.Value, res.Weights, c.want)
		}
	}
	// With both overrides the dataset may be nil.
	if res, err := (&OnPolicy{Sim: rollout.Simulator{Env: e, Target: pi}, Episodes: 2, Horizon: 4}).Estimate(nil, 1); err != nil || res.Value != 0.25 {
		t.Errorf("nil dataset: %v, %v; want 0.25", res.Value, err)
	}
}

func TestOnPolicyValue(t *testing.T) {
	target := tabularPolicy(t, [][]float64{{0.2, 0.8}, {0.9, 0.1}, {0.3, 0.7}})
	e := sim.NewSampler(chain3{})
	const n, T = 20000, 6
	for _, gamma := range []float64{1, 0.8} {
		est := &OnPolicy{Sim: rollout.Simulator{Env: e, Target: target}, Seed: 9, Episodes: n, Horizon: T}
		a, err := est.Estimate(nil, gamma)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := est.Estimate(nil, gamma)
		if a.Value != b.Value {
			t.Errorf("gamma %v: same seed gave %v and %v", gamma, a.Value, b.Value)
		}
		est.Seed = 10
		c, _ := est.Estimate(nil, gamma)
		if a.Value == c.Value {
			t.Errorf("gamma %v: seeds 9 and 10 gave the same %v", gamma, a.Value)
		}
		// Rewards lie in [0, 4], so a rollout's normalised value has
		// standard deviation at most 2 and the mean of n at most
		// 2/sqrt(n) ~ 0.014.
		want := mdp.Value(chain3{}, target, nil, T, gamma)
		if tol := 4 * 2 / math.Sqrt(n); math.Abs(a.Value-want) > tol {
			t.Errorf("gamma %v: %v, exact %v (tolerance %v)", gamma, a.Value, want, tol)
		}
	}
}

func TestOnPolicyErrors(t *testing.T) {
	e := sim.NewSampler(chain3{})
	cases := []struct {
		name string
		est  *OnPolicy
		d    *dataset.Dataset
		text string
	}{
		{"no env", &OnPolicy{Sim: rollout.Simulator{Target: policy.Uniform(3, 2)}}, handEqual, "environment"},
		{"actions", &OnPolicy{Sim: rollout.Simulator{Env: e, Target: policy.Uniform(3, 3)}}, handEqual, "3 actions"},
		{"no data", &OnPolicy{Sim: rollout.Simulator{Env: e, Target: policy.Uniform(3, 2)}, Episodes: 4}, nil, "no episodes"},
		{"negative", &OnPolicy{Sim: rollout.Simulator{Env: e, Target: policy.Uniform(3, 2)}, Horizon: -1}, handEqual, "horizon -1"},
	}
	for _, c := range cases {
		_, err := c.est.Estimate(c.d, 1)
		if err == nil || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.text)
		}
	}
}
