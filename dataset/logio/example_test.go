package logio_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

func ExampleReadCSV() {
	const logs = `episode,t,state,action,reward,behavior_prob,target_prob,next_state
u1,1,2,0,0,0.5,0.9,3
u2,0,0,1,1,0.25,0,
u1,0,0,1,1,0.5,0.1,
`
	d, err := logio.ReadCSV(strings.NewReader(logs), "logs.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d states, %d actions\n", d.NumStates, d.NumActions)
	for _, ep := range d.Episodes() {
		for t, s := range ep.Steps {
			fmt.Printf("%s t=%d: s=%d a=%d r=%g next=%d (known %v) ratio=%.1f\n",
				ep.ID, t, s.State, s.Action, s.Reward, s.NextState, s.HasNext, s.Ratio())
		}
	}
	// Output:
	// 4 states, 2 actions
	// u1 t=0: s=0 a=1 r=1 next=2 (known true) ratio=0.2
	// u1 t=1: s=2 a=0 r=0 next=3 (known true) ratio=1.8
	// u2 t=0: s=0 a=1 r=1 next=-1 (known false) ratio=0.0
}

func ExampleFormatError() {
	const logs = `episode,t,state,action,reward,behavior_prob,target_prob
a,0,0,1,1,0.5,0.5
a,1,2,0,0,0,0.5
`
	_, err := logio.ReadCSV(strings.NewReader(logs), "logs.csv")
	fmt.Println(err)
	var fe *logio.FormatError
	if errors.As(err, &fe) {
		fmt.Println(fe.Row, fe.Column)
	}
	// Output:
	// logs.csv: row 3, column "behavior_prob": 0 is outside (0, 1]
	// 3 behavior_prob
}

func ExampleWriteCSV() {
	d, err := dataset.New(3, 2, []dataset.Episode{{
		ID: "a",
		Steps: []dataset.Step{
			{State: 0, Action: 1, Reward: 1, HasNext: true, NextState: 2, LogBehavior: math.Log(0.5), LogTarget: math.Inf(-1)},
			{State: 2, Action: 0, Reward: 0.5, HasNext: true, NextState: 1, LogBehavior: math.Log(0.25), LogTarget: 0},
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := logio.WriteCSV(os.Stdout, d); err != nil {
		fmt.Println(err)
	}
	// Output:
	// episode,t,state,action,reward,behavior_logprob,target_logprob,next_state
	// a,0,0,1,1,-0.6931471805599453,-Inf,
	// a,1,2,0,0.5,-1.3862943611198906,0,1
}

func ExampleWriteParquet() {
	d, err := dataset.New(0, 0, []dataset.Episode{{
		ID: "run-1",
		Steps: []dataset.Step{{
			State: -1, Obs: []float64{0.5, -1}, Action: -1, ActionVec: []float64{0.3},
			Reward: 2, NextState: -1, LogBehavior: 0.2, LogTarget: -0.1,
		}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var buf bytes.Buffer
	if err := logio.WriteParquet(&buf, d); err != nil {
		fmt.Println(err)
		return
	}
	back, err := logio.ReadParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "run.parquet")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := back.Step(0, 0)
	fmt.Println(back.StateDim, s.Obs, s.ActionVec, s.HasNext, reflect.DeepEqual(back, d))
	// Output:
	// 2 [0.5 -1] [0.3] false true
}

// Another tool's export: its names for the contract's columns and an
// extra column are refused with the flags (ReadOptions) that read them.
func ExampleRead() {
	const logs = `trajectory_id,step,state,action,reward,pscore,target_prob,user_id
u1,0,0,1,1,0.5,0.1,42
u1,1,2,0,0,0.5,0.9,42
`
	o := logio.ReadOptions{Format: logio.CSV}
	_, _, err := logio.Read(strings.NewReader(logs), "obp.csv", o)
	fmt.Println(err)

	o.Columns, err = logio.ParseColumns([]string{"episode=trajectory_id", "t=step", "behavior_prob=pscore"})
	if err != nil {
		fmt.Println(err)
		return
	}
	o.Ignore = []string{"user_id"}
	d, _, err := logio.Read(strings.NewReader(logs), "obp.csv", o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d episode of %d steps, behavior probability %.1f\n", d.NumEpisodes(), d.NumSteps(), math.Exp(d.LogBehavior[0]))
	// Output:
	// obp.csv: row 1: 4 problems with the header:
	//   column "trajectory_id": unknown column; other OPE tools' name for episode: read it with --column episode=trajectory_id
	//   column "step": unknown column; other OPE tools' name for t: read it with --column t=step
	//   column "pscore": unknown column; other OPE tools' name for behavior_prob: read it with --column behavior_prob=pscore
	//   column "user_id": unknown column: drop it with --ignore user_id, or read it as a contract column with --column ROLE=user_id
	// to read the file as it is, add: --column episode=trajectory_id --column t=step --column behavior_prob=pscore --ignore user_id
	// 1 episode of 2 steps, behavior probability 0.5
}

// Labels for states and actions get ids in sorted order; Labels says
// which is which.
func ExampleLabels() {
	const logs = `episode,t,state,action,reward,behavior_prob,target_prob
a,0,kitchen,wait,0,0.5,0.5
a,1,hall,go,1,0.5,0.5
`
	d, labels, err := logio.Read(strings.NewReader(logs), "rooms.csv",
		logio.ReadOptions{Format: logio.CSV, Categorical: []string{"state", "action"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.State, d.Action)
	labels.WriteCSV(os.Stdout)
	// Output:
	// [1 0] [1 0]
	// column,id,label
	// state,0,hall
	// state,1,kitchen
	// action,0,go
	// action,1,wait
}
