package dataset_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

func TestValidate(t *testing.T) {
	// goodEpisodes is a valid discrete log with two episodes in row form;
	// good builds it. Each case breaks one thing, in the columns of the
	// built dataset (Validate's rules) or, for the rules that the columnar
	// form cannot break, in the rows given to dataset.New.
	goodEpisodes := func() []dataset.Episode {
		return []dataset.Episode{
			{ID: "a", Steps: []dataset.Step{
				{State: 0, Action: 1, Reward: 1, HasNext: true, NextState: 2, LogBehavior: -1, LogTarget: math.Inf(-1)},
				{State: 2, Action: 0, Reward: 0, HasNext: true, NextState: 1, LogBehavior: -1, LogTarget: -2},
			}},
			{ID: "b", Steps: []dataset.Step{
				{State: 1, Action: 0, Reward: 1, NextState: -1, LogBehavior: 0, LogTarget: 0},
			}},
		}
	}
	good := func() *dataset.Dataset { return mustNew(t, 3, 2, goodEpisodes()) }
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	// Steps of good(): 0 and 1 are episode "a", 2 is episode "b".
	for i, c := range []struct {
		name   string
		break_ func(d *dataset.Dataset)
		msg    string
	}{
		{"duplicate id", func(d *dataset.Dataset) { d.IDs[1] = "a" }, `episodes 0 and 1 have the same ID "a"`},
		{"empty id", func(d *dataset.Dataset) { d.IDs[1] = "" }, "episode 1 has an empty ID"},
		{"no steps", func(d *dataset.Dataset) {
			// Drop the only step of "b": Start[1] = Start[2].
			d.Start[2] = 2
			d.State, d.Action, d.Reward = d.State[:2], d.Action[:2], d.Reward[:2]
			d.LogBehavior, d.LogTarget = d.LogBehavior[:2], d.LogTarget[:2]
		}, `episode "b" has no steps`},
		{"state out of range", func(d *dataset.Dataset) { d.State[2] = 3 }, "state 3 is not an id in [0, 3)"},
		{"next state out of range", func(d *dataset.Dataset) { d.FinalState[0] = -1 }, "next state -1 is not an id"},
		{"action out of range", func(d *dataset.Dataset) { d.Action[2] = 2 }, "action 2 is not an id in [0, 2)"},
		{"NaN reward", func(d *dataset.Dataset) { d.Reward[2] = math.NaN() }, "reward: NaN is not allowed"},
		{"behavior -Inf", func(d *dataset.Dataset) { d.LogBehavior[2] = math.Inf(-1) }, "LogBehavior: -Inf is not allowed"},
		{"target +Inf", func(d *dataset.Dataset) { d.LogTarget[2] = math.Inf(1) }, "LogTarget: +Inf is not allowed"},
		{"log-probability above 0", func(d *dataset.Dataset) { d.LogTarget[2] = 0.5 }, "must be at most 0"},
		{"sizes", func(d *dataset.Dataset) { d.StateDim = 2 }, "both NumStates (3) and StateDim (2) are set"},
		{"no actions", func(d *dataset.Dataset) { d.NumActions = 0 }, "NumActions is 0 and steps carry no action vectors"},
		// The shape of the columns.
		{"obs column with discrete states", func(d *dataset.Dataset) { d.Obs = []float64{1} }, "column Obs has 1 entries, want 0"},
		{"short column", func(d *dataset.Dataset) { d.LogTarget = d.LogTarget[:2] }, "column LogTarget has 2 entries, want 3"},
		{"start past the steps", func(d *dataset.Dataset) { d.Start[2] = 4 }, "Start has 3 offsets for 2 episodes and 3 steps"},
		{"start decreases", func(d *dataset.Dataset) { d.Start[1] = 4 }, "Start decreases at episode 1"},
		{"final states per episode", func(d *dataset.Dataset) { d.HasFinal = d.HasFinal[:1] }, "column HasFinal has 1 entries, want 2"},
	} {
		d := good()
		c.break_(d)
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%d %s: %v, want an error with %q", i, c.name, err, c.msg)
			continue
		}
		var buf bytes.Buffer
		if werr := logio.WriteCSV(&buf, d); werr == nil || werr.Error() != err.Error() || buf.Len() != 0 {
			t.Errorf("%d %s: WriteCSV gave %v and wrote %d bytes", i, c.name, werr, buf.Len())
		}
		if werr := logio.WriteParquet(&buf, d); werr == nil || buf.Len() != 0 {
			t.Errorf("%d %s: WriteParquet gave %v and wrote %d bytes", i, c.name, werr, buf.Len())
		}
	}
	// The next state of an inner step is the state of the step after it,
	// so a dataset cannot hold a disagreeing or missing one: dataset.New
	// (the Builder) rejects such rows, which is where the rule lives now.
	for i, c := range []struct {
		name   string
		break_ func(eps []dataset.Episode)
		msg    string
	}{
		{"HasNext false inside", func(eps []dataset.Episode) { eps[0].Steps[0].HasNext = false }, "episode 0, step 0: HasNext is false"},
		{"next state disagrees", func(eps []dataset.Episode) { eps[0].Steps[0].NextState = 1 }, "next state 1 differs from the state 2 of step 1"},
		// And what Validate checks is checked when building.
		{"state out of range", func(eps []dataset.Episode) { eps[1].Steps[0].State = 3 }, "state 3 is not an id in [0, 3)"},
		{"no steps", func(eps []dataset.Episode) { eps[1].Steps = nil }, `episode "b" has no steps`},
	} {
		eps := goodEpisodes()
		c.break_(eps)
		if d, err := dataset.New(3, 2, eps); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("New %d %s: %v (dataset %v), want an error with %q", i, c.name, err, d != nil, c.msg)
		}
	}

	// Vector states and actions.
	v := continuous(t)
	for i, c := range []struct {
		name   string
		break_ func(d *dataset.Dataset)
		msg    string
	}{
		{"Inf in obs", func(d *dataset.Dataset) { d.Obs[(d.Start[1]+2)*d.StateDim] = math.Inf(1) }, "state component 0: +Inf is not allowed"},
		{"Inf in final obs", func(d *dataset.Dataset) { d.FinalObs[2*d.StateDim+1] = math.Inf(-1) }, "next state component 1: -Inf is not allowed"},
		{"NaN in action", func(d *dataset.Dataset) { d.ActionVec[3] = math.NaN() }, "action component 1: NaN is not allowed"},
		{"NumActions with vectors", func(d *dataset.Dataset) { d.NumActions = 2 }, "both NumActions (2) and ActionDim (2) are set"},
		{"state id column with vectors", func(d *dataset.Dataset) { d.State = make([]int32, d.NumSteps()) }, "column State has 25 entries, want 0"},
		{"short obs column", func(d *dataset.Dataset) { d.Obs = d.Obs[:len(d.Obs)-1] }, "column Obs has 74 entries, want 75"},
	} {
		d := continuous(t)
		c.break_(d)
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("vector %d %s: %v, want an error with %q", i, c.name, err, c.msg)
		}
	}
	// A vector of the wrong length cannot be stored in a column of
	// StateDim (or ActionDim) entries per step: the Builder rejects it.
	// (New takes the lengths from the first step, so the short vector is
	// in the second episode.)
	for i, c := range []struct {
		name   string
		break_ func(eps []dataset.Episode)
		msg    string
	}{
		{"short obs", func(eps []dataset.Episode) { eps[1].Steps[0].Obs = []float64{1} }, "episode 1, step 0: state vector of length 1, want 3"},
		{"action vector length", func(eps []dataset.Episode) { eps[2].Steps[0].ActionVec = []float64{1} }, "action vector of length 1, want 2"},
		{"next state vector length", func(eps []dataset.Episode) {
			eps[0].Steps[len(eps[0].Steps)-1].NextObs = []float64{1, 2}
		}, "next state vector of length 2, want 3"},
	} {
		eps := v.Episodes()
		c.break_(eps)
		if _, err := dataset.New(0, 0, eps); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("New vector %d %s: %v, want an error with %q", i, c.name, err, c.msg)
		}
	}
	if err := v.Validate(); err != nil {
		t.Error(err)
	}
}
