package dataset_test

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/parquet-go/parquet-go"
)

// pq writes rows of a struct type to Parquet bytes with parquet-go's
// generic writer, as another program would.
func pq[T any](t *testing.T, rows ...T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// goodRow is a log row with the usual types; episode is an integer, state
// an INT32 and action a whole-number DOUBLE, as pandas might write them.
type goodRow struct {
	Episode  int64   `parquet:"episode"`
	T        int32   `parquet:"t"`
	State    int32   `parquet:"state"`
	Action   float64 `parquet:"action"`
	Reward   float32 `parquet:"reward"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
	Next     *int64  `parquet:"next_state,optional"`
}

type stringState struct {
	Episode  string  `parquet:"episode"`
	T        int64   `parquet:"t"`
	State    string  `parquet:"state"`
	Action   int64   `parquet:"action"`
	Reward   float64 `parquet:"reward"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
}

type floatState struct {
	Episode  string  `parquet:"episode"`
	T        int64   `parquet:"t"`
	State    float64 `parquet:"state"`
	Action   int64   `parquet:"action"`
	Reward   float64 `parquet:"reward"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
}

type stringReward struct {
	Episode  string  `parquet:"episode"`
	T        int64   `parquet:"t"`
	State    int64   `parquet:"state"`
	Action   int64   `parquet:"action"`
	Reward   string  `parquet:"reward"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
}

type nullableReward struct {
	Episode  string   `parquet:"episode"`
	T        int64    `parquet:"t"`
	State    int64    `parquet:"state"`
	Action   int64    `parquet:"action"`
	Reward   *float64 `parquet:"reward,optional"`
	Behavior float64  `parquet:"behavior_logprob"`
	Target   float64  `parquet:"target_logprob"`
}

type noReward struct {
	Episode  string  `parquet:"episode"`
	T        int64   `parquet:"t"`
	State    int64   `parquet:"state"`
	Action   int64   `parquet:"action"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
}

type pandasIndex struct {
	Index    int64   `parquet:"__index_level_0__"`
	Episode  string  `parquet:"episode"`
	T        int64   `parquet:"t"`
	State    int64   `parquet:"state"`
	Action   int64   `parquet:"action"`
	Reward   float64 `parquet:"reward"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
}

type nullableEpisode struct {
	Episode  *string `parquet:"episode,optional"`
	T        int64   `parquet:"t"`
	State    int64   `parquet:"state"`
	Action   int64   `parquet:"action"`
	Reward   float64 `parquet:"reward"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
}

type vectorNext struct {
	Episode  string   `parquet:"episode"`
	T        int64    `parquet:"t"`
	State0   float64  `parquet:"state_0"`
	State1   float64  `parquet:"state_1"`
	Action   int64    `parquet:"action"`
	Reward   float64  `parquet:"reward"`
	Behavior float64  `parquet:"behavior_prob"`
	Target   float64  `parquet:"target_prob"`
	Next0    *float64 `parquet:"next_state_0,optional"`
	Next1    *float64 `parquet:"next_state_1,optional"`
}

type boolReward struct {
	Episode  string  `parquet:"episode"`
	T        int64   `parquet:"t"`
	State    int64   `parquet:"state"`
	Action   int64   `parquet:"action"`
	Reward   bool    `parquet:"reward"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
}

type listState struct {
	Episode  string  `parquet:"episode"`
	T        int64   `parquet:"t"`
	State    []int64 `parquet:"state,list"`
	Action   int64   `parquet:"action"`
	Reward   float64 `parquet:"reward"`
	Behavior float64 `parquet:"behavior_prob"`
	Target   float64 `parquet:"target_prob"`
}

func TestReadParquetMalformed(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	fs := func(ep string, t int64, s float64) floatState {
		return floatState{Episode: ep, T: t, State: s, Reward: 1, Behavior: 0.5, Target: 0.5}
	}
	for i, c := range []struct {
		name string
		data []byte
		row  int
		col  string
		msg  string
	}{
		{"not Parquet", []byte(hdr + ok), 0, "", "not a readable Parquet file"},
		{"empty", nil, 0, "", "not a readable Parquet file"},
		{"state as a string", pq(t, stringState{Episode: "a", State: "1", Behavior: 0.5, Target: 0.5}), 0, "state",
			"has type BYTE_ARRAY (STRING), want an integer"},
		{"reward as a string", pq(t, stringReward{Episode: "a", Reward: "1", Behavior: 0.5, Target: 0.5}), 0, "reward",
			"has type BYTE_ARRAY (STRING), want a number"},
		{"fractional state", pq(t, fs("a", 0, 1), fs("a", 1, 3.5)), 2, "state", "3.5 is not an integer; a state id"},
		{"negative state", pq(t, fs("a", 0, -1)), 1, "state", "-1 is negative"},
		{"NaN state", pq(t, fs("a", 0, math.NaN())), 1, "state", "NaN is not allowed"},
		{"null reward", pq(t,
			nullableReward{Episode: "a", Reward: f(1), Behavior: -1},
			nullableReward{Episode: "a", T: 1, Behavior: -1}), 2, "reward", "empty value (null)"},
		{"behavior_logprob -Inf", pq(t, nullableReward{Episode: "a", Reward: f(1), Behavior: math.Inf(-1)}), 1, "behavior_logprob", "-Inf is not allowed"},
		{"behavior_prob 0", pq(t, goodRow{Behavior: 0.5}, goodRow{T: 1, Behavior: 0}), 2, "behavior_prob", "0 is outside (0, 1]"},
		{"missing reward", pq(t, noReward{Episode: "a", Behavior: 0.5, Target: 0.5}), 0, "reward", "required column is missing"},
		{"list column", pq(t, listState{Episode: "a", State: []int64{1}, Behavior: 0.5, Target: 0.5}), 0, "state", "nested column (a group, list or map)"},
		{"gap in t", pq(t, fs("a", 0, 1), fs("b", 0, 1), fs("a", 2, 1)), 3, "t", "t = 1 is missing"},
		{"empty episode", pq(t, fs("", 0, 1)), 1, "episode", "empty value"},
		{"null episode", pq(t, nullableEpisode{Episode: new("a"), Behavior: 0.5}, nullableEpisode{T: 1, Behavior: 0.5}), 2, "episode", "empty value (null)"},
		{"no rows", pq[floatState](t), 0, "", "no data rows"},
		{"huge footer length", func() []byte {
			b := pq(t, fs("a", 0, 1))
			copy(b[len(b)-8:], []byte{0xff, 0xff, 0xff, 0x7f})
			return b
		}(), 0, "", "its footer claims 2147483647 bytes"},
		{"truncated file", func() []byte { b := pq(t, fs("a", 0, 1)); return b[:len(b)-20] }(), 0, "", "not a readable Parquet file"},
		{"pandas index", pq(t, pandasIndex{Episode: "a", Behavior: 0.5}), 0, "__index_level_0__", "to_parquet(index=False)"},
		{"boolean reward", pq(t, boolReward{Episode: "a", Behavior: 0.5}), 0, "reward", "has type BOOLEAN, want a number"},
		{"partial next vector", pq(t, vectorNext{Episode: "a", Behavior: 0.5, Next1: f(2)}), 1, "next_state_0", "give all or none"},
		{"target_prob above 1", pq(t, fs("a", 0, 1), floatState{Episode: "a", T: 1, Behavior: 0.5, Target: 2}), 2, "target_prob", "2 is outside [0, 1]"},
		{"next_state disagrees", pq(t, goodRow{Behavior: 0.5, Next: new(int64(7))}, goodRow{T: 1, State: 2, Behavior: 0.5}),
			1, "next_state", "next_state 7 differs from the state 2"},
	} {
		_, err := logio.ReadParquet(bytes.NewReader(c.data), int64(len(c.data)), "test.parquet")
		var fe *logio.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%d %s: error %v, want a *FormatError", i, c.name, err)
			continue
		}
		if fe.File != "test.parquet" || fe.Row != c.row || fe.Column != c.col || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%d %s: got %#v\nwant row %d, column %q, message with %q", i, c.name, *fe, c.row, c.col, c.msg)
		}
	}
}

// TestReadParquetTypes reads integer episode ids, INT32 ids, whole-number
// DOUBLE ids, FLOAT rewards and a nullable next_state, across several
// row groups and batches.
func TestReadParquetTypes(t *testing.T) {
	const n = 10000 // more than one batch of 4096 rows
	rows := make([]goodRow, n)
	var eps []dataset.Episode
	var steps []dataset.Step
	for i := range rows {
		ep, tt := i/100, i%100
		rows[i] = goodRow{Episode: int64(ep), T: int32(tt), State: int32(tt % 4), Action: float64(tt % 2),
			Reward: 0.25 * float32(tt), Behavior: 0.5, Target: 1}
		s := dataset.Step{State: tt % 4, Action: tt % 2, Reward: 0.25 * float64(tt), HasNext: true, NextState: (tt + 1) % 4,
			LogBehavior: math.Log(0.5), LogTarget: 0}
		if tt == 99 {
			if ep%2 == 0 {
				rows[i].Next = new(int64(4))
				s.NextState = 4
			} else {
				s.HasNext, s.NextState = false, -1
			}
		}
		steps = append(steps, s)
		if tt == 99 {
			eps = append(eps, dataset.Episode{ID: strconv.Itoa(ep), Steps: steps})
			steps = nil
		}
	}
	want, err := dataset.New(5, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[goodRow](&buf, parquet.MaxRowsPerRowGroup(3000), parquet.PageBufferSize(1000))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readParquet(t, buf.Bytes())
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %d episodes (first %+v),\nwant %d (first %+v)", got.NumEpisodes(), got.Episode(0).Steps[:2], want.NumEpisodes(), want.Episode(0).Steps[:2])
	}
}

// d3rlpyRow is a row of a d3rlpy-style flat dump written to Parquet: no
// episode and no t column, episodes ended by terminals and timeouts.
type d3rlpyRow struct {
	Obs0      float32 `parquet:"observations_0"`
	Actions   int64   `parquet:"actions"`
	Rewards   float32 `parquet:"rewards"`
	Terminals float32 `parquet:"terminals"`
	Timeouts  int32   `parquet:"timeouts"`
	Pscore    float64 `parquet:"pscore"`
	Target    float64 `parquet:"target_prob"`
}

// The Parquet reader reads episodes from the terminal and truncated
// flags as the CSV reader does: a terminal episode, a cut-off one, an
// open last one; every row kept.
func TestParquetEpisodesFromFlags(t *testing.T) {
	row := func(term float32, trunc int32) d3rlpyRow {
		return d3rlpyRow{Obs0: 0.5, Actions: 1, Rewards: 1, Terminals: term, Timeouts: trunc, Pscore: 0.5, Target: 0.25}
	}
	b := pq(t, row(0, 0), row(1, 0), row(0, 1), row(0, 0), row(0, 0))
	o := logio.ReadOptions{Format: logio.Parquet, Columns: map[string]string{"state_": "observations_", "action": "actions",
		"reward": "rewards", "terminal": "terminals", "truncated": "timeouts", "behavior_prob": "pscore"}}
	d, _, err := logio.Read(bytes.NewReader(b), "d3.parquet", o)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 2, 3, 5}; !reflect.DeepEqual(d.Start, want) {
		t.Errorf("start %v, want %v", d.Start, want)
	}
	if want := []bool{true, false, false}; !reflect.DeepEqual(d.Terminal, want) {
		t.Errorf("terminal %v, want %v", d.Terminal, want)
	}
	if want := []string{"0", "1", "2"}; !reflect.DeepEqual(d.IDs, want) {
		t.Errorf("ids %q, want %q", d.IDs, want)
	}
}
