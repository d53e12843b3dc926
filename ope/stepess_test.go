package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
)

// Step-wise IS and WIS say when every step rests on a few episodes,
// which their pooled effective sample size hides. Of m = 40 episodes of
// 10 steps, k keep weight 1 at every step (target = behavior) and the
// rest weight 0 from their first step (an action the target never
// takes): each step's effective sample size is exactly k of 40, so the
// per-step share is k/40 (2.5% for k = 1: warned; 10% for k = 4, warned
// by the floor of 5 episodes; 15% for k = 6: silent), while the pooled
// one over the 400 steps is k/40 too, above WeightWarnings' 0.5% of steps
// either way. In memory and streamed alike.
func TestStepESSWarning(t *testing.T) {
	const m, T = 40, 10
	for _, c := range []struct {
		k    int
		warn bool
	}{{1, true}, {4, true}, {6, false}} {
		var eps []dataset.Episode
		for i := range m {
			steps := make([]dataset.Step, T)
			for j := range steps {
				lt := math.Log(0.5) // target = behavior
				if i >= c.k && j == 0 {
					lt = math.Inf(-1)
				}
				steps[j] = dataset.Step{State: j % 2, Action: 0, Reward: float64(i % 3), HasNext: true, NextState: (j + 1) % 2,
					LogBehavior: math.Log(0.5), LogTarget: lt}
			}
			eps = append(eps, dataset.Episode{ID: fmt.Sprint(i), Steps: steps})
		}
		d, err := dataset.New(2, 2, eps)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("per step, an effective sample size of %d.0 episodes, %.1f%% of those that reach the step", c.k, 100*float64(c.k)/m)
		for _, e := range []ope.Estimator{&ope.StepwiseWIS{}, &ope.StepwiseIS{}} {
			for _, gamma := range []float64{1, 0.9} {
				r, err := e.Estimate(d, gamma)
				if err != nil {
					t.Fatal(err)
				}
				s, err := e.(ope.Summer).NewSums(gamma, 1)
				if err != nil {
					t.Fatal(err)
				}
				for i := range d.NumEpisodes() {
					if err := s.Add(d, i, []int{1}); err != nil {
						t.Fatal(err)
					}
				}
				sr, _, err := s.Finish(0)
				if err != nil {
					t.Fatal(err)
				}
				for how, ws := range map[string][]string{"in memory": r.Warnings, "streamed": sr.Warnings} {
					got := strings.Join(ws, "\n")
					if c.warn != strings.Contains(got, want) {
						t.Errorf("%s, gamma %g, k = %d, %s: warnings %q, want one with %q: %v", e.Name(), gamma, c.k, how, got, want, c.warn)
					}
				}
				if pooled := ope.WeightWarnings(e.Name(), ope.UnitStep, r.Weights); len(pooled) != 0 {
					t.Errorf("%s, k = %d: the pooled weights warn too: %q", e.Name(), c.k, pooled)
				}
			}
		}
	}
}

// On-policy logs (every weight 1) whose episodes differ in length do not
// warn: the ratios are judged, not the episodes' normalised discounts,
// which differ with the length.
func TestStepESSOnPolicySilent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, lens := range [][]int{
		{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048},
		func() []int { // 20 episodes, lengths log-uniform 1..1000
			var l []int
			for range 20 {
				l = append(l, int(math.Exp(rng.Float64()*math.Log(1000)))+1)
			}
			return l
		}(),
	} {
		var eps []dataset.Episode
		for i, n := range lens {
			steps := make([]dataset.Step, n)
			for j := range steps {
				steps[j] = dataset.Step{State: 0, Action: 0, Reward: rng.Float64(), HasNext: true, NextState: 0,
					LogBehavior: math.Log(0.5), LogTarget: math.Log(0.5)}
			}
			eps = append(eps, dataset.Episode{ID: fmt.Sprint(i), Steps: steps})
		}
		d, err := dataset.New(1, 2, eps)
		if err != nil {
			t.Fatal(err)
		}
		for _, gamma := range []float64{1, 0.99} {
			r, err := (&ope.StepwiseWIS{}).Estimate(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Warnings) > 0 {
				t.Errorf("lengths %v gamma %v: on-policy, all weights 1: %q", lens, gamma, r.Warnings)
			}
		}
	}
}

// Every episode identical, weight 2^(t+1) at step t in all of them: each
// step's effective sample size is exactly m, and no warning comes from
// weights that underflow against a global maximum (each step keeps its
// own scale).
func TestStepESSNoUnderflow(t *testing.T) {
	const m, T = 12, 1200
	var eps []dataset.Episode
	for i := range m {
		steps := make([]dataset.Step, T)
		for j := range steps {
			r := 0.0
			if j < 100 {
				r = 1
			}
			steps[j] = dataset.Step{State: 0, Action: 0, Reward: r, HasNext: true, NextState: 0,
				LogBehavior: math.Log(0.5), LogTarget: 0}
		}
		eps = append(eps, dataset.Episode{ID: fmt.Sprint(i), Steps: steps})
	}
	d, err := dataset.New(1, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{1, 0.999} {
		for _, e := range []ope.Estimator{&ope.StepwiseIS{}, &ope.StepwiseWIS{}} {
			r, err := e.Estimate(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := e.(ope.Summer).NewSums(gamma, 1)
			for i := range m {
				s.Add(d, i, []int{1})
			}
			sr, _, _ := s.Finish(0)
			if len(r.Warnings)+len(sr.Warnings) > 0 {
				t.Errorf("%s gamma %v: every step has ESS %d of %d, yet: in memory %q; streamed %q", e.Name(), gamma, m, m, r.Warnings, sr.Warnings)
			}
		}
	}
}
