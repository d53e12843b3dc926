package ope_test

import (
	"fmt"
	"math"
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
		want := fmt.Sprintf("per step, an effective sample size of %d.0 of the 40 episodes, %.1f%%", c.k, 100*float64(c.k)/m)
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
