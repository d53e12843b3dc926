package ope_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
)

// The policy ratios of a log average exactly 1 when its behavior
// probabilities match the frequencies of its actions, and 1.5625 when
// they claim 0.8 and 0.2 for actions taken half the time each (target
// 0.5 and 0.5: (0.5/0.8 + 0.5/0.2)/2), which warns; a target that puts
// 10% of its mass on an action never logged averages 0.9, and the
// warning says that too.
func TestBalanceWarning(t *testing.T) {
	build := func(behavior, target [2]float64) *dataset.Dataset {
		var eps []dataset.Episode
		for e := range 40 {
			var steps []dataset.Step
			for j := range 10 {
				a := j % 2
				steps = append(steps, dataset.Step{State: 0, Action: a, Reward: 1, HasNext: true,
					LogBehavior: math.Log(behavior[a]), LogTarget: math.Log(target[a])})
			}
			eps = append(eps, dataset.Episode{ID: string(rune('a'+e%26)) + string(rune('a'+e/26)), Steps: steps})
		}
		d, err := dataset.New(1, 3, eps)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		name             string
		behavior, target [2]float64
		fitted           bool
		want             string
	}{
		{"right", [2]float64{0.5, 0.5}, [2]float64{0.5, 0.5}, false, ""},
		{"wrong", [2]float64{0.8, 0.2}, [2]float64{0.5, 0.5}, false, "average 1.56 (standard error 0, by episode), but under the behavior that logged the actions they average 1: the logged behavior probabilities are wrong"},
		{"wrong, fitted", [2]float64{0.8, 0.2}, [2]float64{0.5, 0.5}, true, "the fitted behavior policy is (--fit-behavior"},
		{"unlogged action (average 0.9)", [2]float64{0.5, 0.5}, [2]float64{0.45, 0.45}, false, "by episode), but under the behavior that logged the actions they average 1: either the target takes, at some states, actions the behavior never does"},
	} {
		got := ope.BalanceWarning(build(c.behavior, c.target), c.fitted)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// StepMean's standard error is clustered by episode: two episodes of
// constant x (1 and 3, of 2 and 1 steps) have mean 5/3 and residual sums
// 2 - 10/3 and 3 - 5/3, so SE sqrt((4/3)^2 + (4/3)^2)/3.
func TestStepMean(t *testing.T) {
	d, err := dataset.New(1, 1, []dataset.Episode{
		{ID: "a", Steps: []dataset.Step{{Reward: 1, HasNext: true}, {Reward: 1}}},
		{ID: "b", Steps: []dataset.Step{{Reward: 3}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m, se := ope.StepMean(d, func(j int) float64 { return d.Reward[j] })
	if want := math.Sqrt(2*16.0/9) / 3; math.Abs(m-5.0/3) > 1e-15 || math.Abs(se-want) > 1e-15 {
		t.Errorf("mean %v, se %v; want 5/3, %v", m, se, want)
	}
}
