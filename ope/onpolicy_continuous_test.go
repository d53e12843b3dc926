package ope

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// counter is a deterministic continuous world: the state is a counter
// that starts at 0 and grows by 1 per step, and a step pays the counter
// plus the action. Its observation is the counter times 10, so a policy
// that read the state instead of the observation would be caught.
type counter struct{}

func (counter) StateDim() int                 { return 1 }
func (counter) ObsDim() int                   { return 1 }
func (counter) ActionDim() int                { return 1 }
func (counter) Reset(*rand.Rand) []float64    { return []float64{0} }
func (counter) Observe(s []float64) []float64 { return []float64{10 * s[0]} }
func (counter) Step(_ *rand.Rand, s, a []float64) ([]float64, float64) {
	return []float64{s[0] + 1}, s[0] + a[0]
}

// obsAction plays a = c + obs/1000 deterministically.
type obsAction struct{ c float64 }

func (obsAction) ActionDim() int                 { return 1 }
func (obsAction) LogProb(_, _ []float64) float64 { return 0 }
func (p obsAction) Sample(_ *rand.Rand, obs []float64) []float64 {
	return []float64{p.c + obs[0]/1000}
}

func TestOnPolicyContinuousShape(t *testing.T) {
	// Logged episodes of lengths 1 and 4 (their contents are ignored).
	d := loggedData(
		[]dataset.Step{loggedStep(0.5, 0.5, 7)},
		[]dataset.Step{loggedStep(0.5, 0.5, 7), loggedStep(0.5, 0.5, 7), loggedStep(0.5, 0.5, 7), loggedStep(0.5, 0.5, 7)},
	)
	// With c = 0 a rollout of T steps pays r_t = t + t/100 = 1.01 t.
	cases := []struct {
		name              string
		c                 float64
		episodes, horizon int
		gamma, want       float64
	}{
		// Lengths (1, 4): (0 + 1.01 (0+1+2+3)/4)/2 = 0.7575.
		{"logged shape", 0, 0, 0, 1, 0.7575},
		// gamma = 1/2: the 4-step rollout gives 1.01 (1/2 + 2/4 + 3/8)/(15/8)
		// = 1.01 * 11/15; the 1-step one 0.
		{"logged shape, gamma 1/2", 0, 0, 0, 0.5, 1.01 * 11 / 30},
		// Horizon 2 for both: 1.01/2; c = 0.25 adds 0.25 to every value.
		{"horizon", 0.25, 0, 2, 1, 0.505 + 0.25},
		// Three rollouts reuse the lengths (1, 4, 1): (0 + 1.515 + 0)/3.
		{"episodes", 0, 3, 0, 1, 0.505},
		{"both", 0, 7, 3, 1, 1.01},
	}
	for _, c := range cases {
		e := &OnPolicy{Sim: rollout.SimulatorContinuous{Env: counter{}, Target: obsAction{c.c}}, Episodes: c.episodes, Horizon: c.horizon}
		res, err := e.Estimate(d, c.gamma)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if math.Abs(res.Value-c.want) > 1e-14 || res.Weights != nil {
			t.Errorf("%s: %v (weights %v), want %v", c.name, res.Value, res.Weights, c.want)
		}
	}
	// With both Episodes and Horizon set, no data is needed.
	res, err := (&OnPolicy{Sim: rollout.SimulatorContinuous{Env: counter{}, Target: obsAction{}}, Episodes: 2, Horizon: 5}).Estimate(nil, 1)
	if err != nil || math.Abs(res.Value-2.02) > 1e-14 {
		t.Errorf("no data: %v, %v; want 2.02", res.Value, err)
	}
	if (&OnPolicy{}).Name() != "on-policy" {
		t.Errorf("name %q", (&OnPolicy{}).Name())
	}
}

// twoActions is a policy with the wrong number of action components.
type twoActions struct{ obsAction }

func (twoActions) ActionDim() int { return 2 }

func TestOnPolicyContinuousErrors(t *testing.T) {
	d := loggedData([]dataset.Step{loggedStep(0.5, 0.5, 1)})
	for k, c := range []struct {
		e     *OnPolicy
		d     *dataset.Dataset
		gamma float64
		want  string
	}{
		{&OnPolicy{Sim: rollout.SimulatorContinuous{Env: counter{}, Target: obsAction{}}}, d, 0, "discount"},
		{&OnPolicy{Sim: rollout.SimulatorContinuous{Target: obsAction{}}}, d, 1, "needs an environment"},
		{&OnPolicy{Sim: rollout.SimulatorContinuous{Env: counter{}, Target: twoActions{}}}, d, 1, "action components"},
		{&OnPolicy{Sim: rollout.SimulatorContinuous{Env: counter{}, Target: obsAction{}}, Episodes: -1}, d, 1, "episodes"},
		{&OnPolicy{Sim: rollout.SimulatorContinuous{Env: counter{}, Target: obsAction{}}}, &dataset.Dataset{}, 1, "no episodes"},
		{&OnPolicy{Sim: rollout.SimulatorContinuous{Env: counter{}, Target: obsAction{math.NaN()}}}, d, 1, "non-finite"},
	} {
		_, err := c.e.Estimate(c.d, c.gamma)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: error %v, want one mentioning %q", k, err, c.want)
		}
	}
}

// On the linear-Gaussian system the oracle's average over many rollouts
// agrees with the exact T-step value, and equal seeds give equal
// estimates.
func TestOnPolicyContinuousLinearGaussian(t *testing.T) {
	p := lineargauss.Problem1D()
	const n, T = 4000, 20
	for _, gamma := range []float64{1, 0.9} {
		want, err := p.System.Value(p.Target, gamma, T)
		if err != nil {
			t.Fatal(err)
		}
		e := &OnPolicy{Sim: rollout.SimulatorContinuous{Env: p.System, Target: p.Target}, Seed: 7, Episodes: n, Horizon: T}
		a, err := e.Estimate(nil, gamma)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := e.Estimate(nil, gamma)
		if a.Value != b.Value {
			t.Errorf("gamma %v: same seed, estimates %v and %v", gamma, a.Value, b.Value)
		}
		// The per-rollout value has a standard deviation of 0.12 (gamma
		// = 1) and 0.17 (gamma = 0.9), so the mean of 4000 has a standard
		// error below 0.003: 0.011 is four of them.
		if math.Abs(a.Value-want) > 0.011 {
			t.Errorf("gamma %v: oracle %v, exact %v", gamma, a.Value, want)
		}
	}
}
