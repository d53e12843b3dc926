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
