package dataset_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env/lineargauss"
	"github.com/ihope-ope/ihope/env/pendulum"
	"github.com/ihope-ope/ihope/policy"
)

func TestSampleContinuous(t *testing.T) {
	p := lineargauss.Problem1D()
	rng := rand.New(rand.NewPCG(1, 1))
	const n, T = 3, 5
	d, err := dataset.SampleContinuous(rng, p.System, p.Behavior, p.Target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	if d.StateDim != 1 || d.NumStates != 0 || d.NumActions != 0 || d.Discrete() || d.NumSteps() != n*T || d.MaxLen() != T {
		t.Fatalf("dataset shape %+v", d)
	}
	for i, ep := range d.Episodes {
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
	d, err = dataset.SampleContinuous(rng, p.System, p.Behavior, p.Target, 5000, 4)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sumSq float64
	for _, ep := range d.Episodes {
		v := 0.0
		for _, s := range ep.Steps {
			v += s.Reward / 4
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
	d, err := dataset.SampleContinuous(rng, pendulum.Pendulum{}, b, pendulum.DefaultTarget(), 2, 50)
	if err != nil {
		t.Fatal(err)
	}
	if d.StateDim != 3 {
		t.Errorf("StateDim %d, want 3 (observations, not the internal state)", d.StateDim)
	}
	for _, ep := range d.Episodes {
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
	if _, err := dataset.SampleContinuous(rng, p.System, p.Behavior, p.Target, 0, 5); err == nil {
		t.Error("0 episodes accepted")
	}
	two, _ := policy.NewTruncGaussian(&policy.MLP{Sizes: []int{1, 2}, Params: make([]float64, 4)}, 1,
		[]float64{-1, -1}, []float64{1, 1})
	if _, err := dataset.SampleContinuous(rng, p.System, p.Behavior, two, 2, 5); err == nil {
		t.Error("target with 2 action components accepted for a 1-action system")
	}
}

func ExampleSampleContinuous() {
	// Log 10 episodes of 100 steps on Pendulum under the behavior
	// 0.5 pi_* + 0.5 pi_+, recording the target pi_*'s log-densities.
	behavior, _ := pendulum.Behavior(0.5)
	rng := rand.New(rand.NewPCG(1, 1))
	d, err := dataset.SampleContinuous(rng, pendulum.Pendulum{}, behavior, pendulum.DefaultTarget(), 10, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := d.Episodes[0].Steps[0]
	fmt.Println(d.NumSteps(), "steps of", d.StateDim, "observation components")
	fmt.Println("first step:", len(s.Obs), "observations,", len(s.ActionVec), "action, ratio <= 2:", s.Ratio() <= 2)
	// Output:
	// 1000 steps of 3 observation components
	// first step: 3 observations, 1 action, ratio <= 2: true
}
