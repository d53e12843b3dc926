package dataset_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

func TestValidate(t *testing.T) {
	// good returns a valid discrete dataset with two episodes; each case
	// breaks one thing.
	good := func() *dataset.Dataset {
		return &dataset.Dataset{NumStates: 3, NumActions: 2, Episodes: []dataset.Episode{
			{ID: "a", Steps: []dataset.Step{
				{State: 0, Action: 1, Reward: 1, HasNext: true, NextState: 2, LogBehavior: -1, LogTarget: math.Inf(-1)},
				{State: 2, Action: 0, Reward: 0, HasNext: true, NextState: 1, LogBehavior: -1, LogTarget: -2},
			}},
			{ID: "b", Steps: []dataset.Step{
				{State: 1, Action: 0, Reward: 1, NextState: -1, LogBehavior: 0, LogTarget: 0},
			}},
		}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		name   string
		break_ func(d *dataset.Dataset)
		msg    string
	}{
		{"duplicate id", func(d *dataset.Dataset) { d.Episodes[1].ID = "a" }, `episodes 0 and 1 have the same ID "a"`},
		{"empty id", func(d *dataset.Dataset) { d.Episodes[1].ID = "" }, "episode 1 has an empty ID"},
		{"no steps", func(d *dataset.Dataset) { d.Episodes[1].Steps = nil }, `episode "b" has no steps`},
		{"HasNext false inside", func(d *dataset.Dataset) { d.Episodes[0].Steps[0].HasNext = false }, `episode "a", step 0: HasNext is false`},
		{"next state disagrees", func(d *dataset.Dataset) { d.Episodes[0].Steps[0].NextState = 1 }, "next state 1 differs from the state 2 of step 1"},
		{"state out of range", func(d *dataset.Dataset) { d.Episodes[1].Steps[0].State = 3 }, "state 3 is not an id in [0, 3)"},
		{"next state out of range", func(d *dataset.Dataset) { d.Episodes[0].Steps[1].NextState = -1 }, "next state -1 is not an id"},
		{"obs with discrete states", func(d *dataset.Dataset) { d.Episodes[1].Steps[0].Obs = []float64{1} }, "or its vector is set"},
		{"action out of range", func(d *dataset.Dataset) { d.Episodes[1].Steps[0].Action = 2 }, "action 2 is not an id in [0, 2)"},
		{"NaN reward", func(d *dataset.Dataset) { d.Episodes[1].Steps[0].Reward = math.NaN() }, "reward: NaN is not allowed"},
		{"behavior -Inf", func(d *dataset.Dataset) { d.Episodes[1].Steps[0].LogBehavior = math.Inf(-1) }, "LogBehavior: -Inf is not allowed"},
		{"target +Inf", func(d *dataset.Dataset) { d.Episodes[1].Steps[0].LogTarget = math.Inf(1) }, "LogTarget: +Inf is not allowed"},
		{"log-probability above 0", func(d *dataset.Dataset) { d.Episodes[1].Steps[0].LogTarget = 0.5 }, "must be at most 0"},
		{"sizes", func(d *dataset.Dataset) { d.StateDim = 2 }, "both NumStates (3) and StateDim (2) are set"},
		{"no actions", func(d *dataset.Dataset) { d.NumActions = 0 }, "NumActions is 0 and steps carry no action vectors"},
	} {
		d := good()
		c.break_(d)
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%d %s: %v, want an error with %q", i, c.name, err, c.msg)
			continue
		}
		var buf bytes.Buffer
		if werr := dataset.WriteCSV(&buf, d); werr == nil || werr.Error() != err.Error() || buf.Len() != 0 {
			t.Errorf("%d %s: WriteCSV gave %v and wrote %d bytes", i, c.name, werr, buf.Len())
		}
		if werr := dataset.WriteParquet(&buf, d); werr == nil || buf.Len() != 0 {
			t.Errorf("%d %s: WriteParquet gave %v and wrote %d bytes", i, c.name, werr, buf.Len())
		}
	}
	// Vector states and actions.
	v := continuous(t)
	for i, c := range []struct {
		name   string
		break_ func(d *dataset.Dataset)
		msg    string
	}{
		{"short obs", func(d *dataset.Dataset) { d.Episodes[0].Steps[0].Obs = []float64{1} }, "state vector of length 1 (want 3)"},
		{"state id with vectors", func(d *dataset.Dataset) { d.Episodes[0].Steps[0].State = 0 }, "id 0 (want -1)"},
		{"action vector length", func(d *dataset.Dataset) { d.Episodes[2].Steps[0].ActionVec = []float64{1} }, "action vector of length 1 (want 2)"},
		{"Inf in obs", func(d *dataset.Dataset) { d.Episodes[1].Steps[2].Obs[0] = math.Inf(1) }, "state component 0: +Inf is not allowed"},
		{"NumActions with vectors", func(d *dataset.Dataset) { d.NumActions = 2 }, "NumActions is 2 but steps carry action vectors"},
	} {
		d := continuous(t)
		c.break_(d)
		if err := d.Validate(); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("vector %d %s: %v, want an error with %q", i, c.name, err, c.msg)
		}
	}
	if err := v.Validate(); err != nil {
		t.Error(err)
	}
}
