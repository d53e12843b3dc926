package rollout_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

func TestSample(t *testing.T) {
	m := taxi.New()
	pi, err := taxi.Policy(taxi.DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	pi0, err := taxi.Policy(taxi.DefaultBehavior)
	if err != nil {
		t.Fatal(err)
	}
	const n, T = 4, 60
	sample := func(seed uint64) (*dataset.Dataset, []byte) {
		t.Helper()
		d, err := rollout.Sample(rand.New(rand.NewPCG(seed, 0)), sim.NewSampler(m), pi0, pi, n, T)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := logio.WriteCSV(&buf, d); err != nil {
			t.Fatal(err)
		}
		return d, buf.Bytes()
	}
	d, csv := sample(1)
	if _, again := sample(1); !bytes.Equal(csv, again) {
		t.Error("the same seed gave different logs")
	}
	if _, other := sample(2); bytes.Equal(csv, other) {
		t.Error("seeds 1 and 2 gave the same log")
	}
	if d.NumStates != taxi.NumStates || d.NumActions != taxi.NumActions || !d.Discrete() || d.ActionDim != 0 ||
		d.NumSteps() != n*T || d.MaxLen() != T || !slices.Equal(d.IDs, []string{"0", "1", "2", "3"}) {
		t.Fatalf("dataset shape: %d states, %d actions, StateDim %d, ActionDim %d, %d steps, ids %v",
			d.NumStates, d.NumActions, d.StateDim, d.ActionDim, d.NumSteps(), d.IDs)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, ep := range d.Episodes() {
		for k, s := range ep.Steps {
			// Every step has a next state, the last included, and the next
			// state of every other step is the state of the step after it.
			if !s.HasNext {
				t.Fatalf("episode %d step %d: no next state", i, k)
			}
			if k+1 < len(ep.Steps) && s.NextState != ep.Steps[k+1].State {
				t.Errorf("episode %d step %d: next state %d, the next step's state %d", i, k, s.NextState, ep.Steps[k+1].State)
			}
			// The transition is one of the MDP's, with its reward.
			possible := false
			for _, o := range m.Outcomes(s.State, s.Action) {
				possible = possible || (o.Prob > 0 && o.Next == s.NextState && o.Reward == s.Reward)
			}
			if !possible {
				t.Errorf("episode %d step %d: %d -(%d)-> %d with reward %v is not a transition of Taxi", i, k, s.State, s.Action, s.NextState, s.Reward)
			}
			if lb, lt := math.Log(pi0.Prob(s.State, s.Action)), math.Log(pi.Prob(s.State, s.Action)); s.LogBehavior != lb || s.LogTarget != lt {
				t.Errorf("episode %d step %d: log-probabilities %v, %v, policies say %v, %v", i, k, s.LogBehavior, s.LogTarget, lb, lt)
			}
		}
	}

	rng := rand.New(rand.NewPCG(3, 3))
	if _, err := rollout.Sample(rng, sim.NewSampler(m), pi0, pi, 0, 5); err == nil {
		t.Error("0 episodes accepted")
	}
	if _, err := rollout.Sample(rng, sim.NewSampler(m), pi0, pi, 2, 0); err == nil {
		t.Error("0 steps accepted")
	}
	if _, err := rollout.Sample(rng, sim.NewSampler(m), pi0, ring.Policy(5, 0.5), 2, 5); err == nil {
		t.Error("target with 2 actions accepted for a 6-action MDP")
	}
}

func TestSampleContinuous(t *testing.T) {
	p := lineargauss.Problem1D()
	rng := rand.New(rand.NewPCG(1, 1))
	const n, T = 3, 5
	d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	if d.StateDim != 1 || d.ActionDim != 1 || d.NumStates != 0 || d.NumActions != 0 || d.Discrete() || d.NumSteps() != n*T || d.MaxLen() != T {
		t.Fatalf("dataset shape %+v", d)
	}
	for i, ep := range d.Episodes() {
		if ep.ID != fmt.Sprint(i) {
			t.Errorf("episode %d has id %q", i, ep.ID)
		}
		for k, s := range ep.Steps {
			if s.State != -1 || s.NextState != -1 || s.Action != -1 || !s.HasNext || len(s.Obs) != 1 || len(s.ActionVec) != 1 {
				t.Fatalf("episode %d step %d: %+v", i, k, s)
			}
			if lb := p.Behavior.LogProb(s.Obs, s.ActionVec); lb != s.LogBehavior {
				t.Errorf("episode %d step %d: LogBehavior %v, policy says %v", i, k, s.LogBehavior, lb)
			}
			if lt := p.Target.LogProb(s.Obs, s.ActionVec); lt != s.LogTarget {
				t.Errorf("episode %d step %d: LogTarget %v, policy says %v", i, k, s.LogTarget, lt)
			}
			if r := p.System.RewardAt(s.Obs, s.ActionVec); r != s.Reward {
				t.Errorf("episode %d step %d: reward %v, r(s, a) = %v", i, k, s.Reward, r)
			}
			if k > 0 && ep.Steps[k-1].NextObs[0] != s.Obs[0] {
				t.Errorf("episode %d step %d: observation %v does not follow %v", i, k, s.Obs, ep.Steps[k-1].NextObs)
			}
		}
	}

	// The reset is the behavior's stationary law, so the mean logged
	// reward is the behavior's average reward, -0.64459 (5 standard
	// errors; steps of one episode are correlated, episodes are not).
	d, err = rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 5000, 4)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sumSq float64
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		v := 0.0
		for _, r := range d.Reward[lo:hi] {
			v += r / 4
		}
		sum += v
		sumSq += v * v
	}
	mean := sum / 5000
	se := math.Sqrt((sumSq/5000 - mean*mean) / 5000)
	want, _ := p.System.AverageReward(p.Behavior)
	if math.Abs(mean-want) > 5*se {
		t.Errorf("mean reward %.4f +- %.4f, want %.4f", mean, se, want)
	}
}

func TestSampleContinuousPendulum(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	b, err := pendulum.Behavior(0.5)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rollout.SampleContinuous(rng, pendulum.Pendulum{}, b, pendulum.DefaultTarget(), 2, 50)
	if err != nil {
		t.Fatal(err)
	}
	if d.StateDim != 3 {
		t.Errorf("StateDim %d, want 3 (observations, not the internal state)", d.StateDim)
	}
	for _, ep := range d.Episodes() {
		for _, s := range ep.Steps {
			c, sn := s.Obs[0], s.Obs[1]
			if math.Abs(c*c+sn*sn-1) > 1e-12 || s.ActionVec[0] < -2 || s.ActionVec[0] > 2 ||
				s.Reward > 0 || s.Reward < pendulum.MinReward {
				t.Fatalf("step %+v", s)
			}
			// Mixture weights: beta = pi_*/((1-a) pi_* + a pi_+) <= 1/(1-a) = 2.
			if s.Ratio() > 2+1e-12 {
				t.Errorf("ratio %v > 2", s.Ratio())
			}
		}
	}
}

func TestSampleContinuousErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	p := lineargauss.Problem1D()
	if _, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 0, 5); err == nil {
		t.Error("0 episodes accepted")
	}
	two, _ := policy.NewTruncGaussian(&policy.MLP{Sizes: []int{1, 2}, Params: make([]float64, 4)}, 1,
		[]float64{-1, -1}, []float64{1, 1})
	if _, err := rollout.SampleContinuous(rng, p.System, p.Behavior, two, 2, 5); err == nil {
		t.Error("target with 2 action components accepted for a 1-action system")
	}
}

func ExampleSampleContinuous() {
	// Log 10 episodes of 100 steps on Pendulum under the behavior
	// 0.5 pi_* + 0.5 pi_+, recording the target pi_*'s log-densities.
	behavior, _ := pendulum.Behavior(0.5)
	rng := rand.New(rand.NewPCG(1, 1))
	d, err := rollout.SampleContinuous(rng, pendulum.Pendulum{}, behavior, pendulum.DefaultTarget(), 10, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := d.Step(0, 0)
	fmt.Println(d.NumSteps(), "steps of", d.StateDim, "observation components")
	fmt.Println("first step:", len(s.Obs), "observations,", len(s.ActionVec), "action, ratio <= 2:", s.Ratio() <= 2)
	// Output:
	// 1000 steps of 3 observation components
	// first step: 3 observations, 1 action, ratio <= 2: true
}
