package dataset_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// episodic is a log of three episodes: "quit" ends in a terminal state
// after two steps, "cut" is cut off after three with a next state, "open"
// after one without.
func episodic(t testing.TB) *dataset.Dataset {
	t.Helper()
	st := func(s, a, next int, r float64) dataset.Step {
		return dataset.Step{State: s, Action: a, Reward: r, HasNext: next >= 0, NextState: next,
			LogBehavior: -0.6931471805599453, LogTarget: -0.2876820724517809}
	}
	quit := st(1, 1, -1, 3)
	quit.Terminal = true
	return mustNew(t, 2, 2, []dataset.Episode{
		{ID: "quit", Steps: []dataset.Step{st(0, 0, 1, 1), quit}},
		{ID: "cut", Steps: []dataset.Step{st(0, 0, 1, 1), st(1, 0, 0, 0), st(0, 0, 1, 1)}},
		{ID: "open", Steps: []dataset.Step{st(0, 0, -1, 1)}},
	})
}

// The terminal column reads back as it was written, in every form; the
// Builder sets it per episode.
func TestTerminalRoundTrip(t *testing.T) {
	d := episodic(t)
	if want := []bool{true, false, false}; !reflect.DeepEqual(d.Terminal, want) || d.NumTerminal() != 1 {
		t.Fatalf("Terminal %v, want %v", d.Terminal, want)
	}
	if s := d.Step(0, 1); !s.Terminal || d.Step(0, 0).Terminal {
		t.Errorf("Step: terminal flags %v, %v", d.Step(0, 0).Terminal, s.Terminal)
	}
	for _, f := range logio.Formats {
		var buf bytes.Buffer
		if err := logio.Write(&buf, d, f); err != nil {
			t.Fatal(err)
		}
		got, _, err := logio.Read(bytes.NewReader(buf.Bytes()), "log", logio.ReadOptions{Format: f})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Errorf("%s: read back %v, want %v", f, got.Terminal, d.Terminal)
		}
	}
	// A log with the column keeps it, all 0, in a subset of cut-off
	// episodes: they are known to be cut off.
	var buf bytes.Buffer
	if err := logio.WriteCSV(&buf, d.Subset([]int{1, 2})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), ",terminal\n") {
		t.Errorf("a subset keeps the column (all 0): %q", strings.SplitN(buf.String(), "\n", 2)[0])
	}
	if cut := d.Head(3, 1); cut.IsTerminal(0) {
		t.Errorf("Head cuts the terminal episode before its terminal step, yet it stays terminal")
	}
	if whole := d.Head(3, 5); !whole.IsTerminal(0) {
		t.Errorf("Head keeps the terminal episode whole, yet it is no longer terminal")
	}
}

// A terminal row must be its episode's last; values are 0 or 1 (true and
// false as pandas writes them), and every problem names file, row and
// column, in CSV and Parquet alike.
func TestTerminalColumn(t *testing.T) {
	const head = "episode,t,state,action,reward,behavior_prob,target_prob,terminal\n"
	good := head + "a,0,0,0,1,0.5,0.75,0\na,1,1,1,3,0.5,0.25,True\nb,0,0,1,2,0.5,0.25,1.0\n"
	d, err := logio.ReadCSV(strings.NewReader(good), "log.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Terminal, []bool{true, true}) {
		t.Errorf("Terminal %v", d.Terminal)
	}
	for _, c := range []struct {
		name, rows string
		row        int
		msg        string
	}{
		{"terminal inside an episode", "a,0,0,0,1,0.5,0.75,1\na,1,1,1,3,0.5,0.25,0\n", 2,
			`is 1 on a row that is not the last of episode "a" (t = 1 follows on row`},
		{"rows out of order", "a,1,1,1,3,0.5,0.25,0\na,0,0,0,1,0.5,0.75,1\n", 3, "is 1 on a row that is not the last"},
		{"two", "a,0,0,0,1,0.5,0.75,2\n", 2, "2 is neither 0 nor 1"},
		{"yes", "a,0,0,0,1,0.5,0.75,yes\n", 2, `"yes" is not 0, 1, true or false`},
		{"empty", "a,0,0,0,1,0.5,0.75,\n", 2, "empty value"},
	} {
		for _, f := range []logio.Format{logio.CSV, logio.Parquet} {
			in := []byte(head + c.rows)
			if f == logio.Parquet {
				if c.name == "yes" || c.name == "empty" {
					continue // text and nulls are CSV matters
				}
				in = csvToParquet(t, head+c.rows)
			}
			_, _, err := logio.Read(bytes.NewReader(in), "log", logio.ReadOptions{Format: f})
			var fe *logio.FormatError
			row := c.row
			if f == logio.Parquet {
				row-- // no header row
			}
			if !errors.As(err, &fe) || fe.File != "log" || fe.Row != row || fe.Column != "terminal" || !strings.Contains(fe.Msg, c.msg) {
				t.Errorf("%s, %s: got %v, want row %d, column terminal: %s", c.name, f, err, row, c.msg)
			}
		}
	}
}

// d3rlpy's terminals and gym's done are suggested as the terminal column,
// done with the warning that a time limit is no terminal state.
func TestTerminalSuggestions(t *testing.T) {
	for _, c := range []struct{ name, flag, note string }{
		{"terminals", "--column terminal=terminals", ""},
		{"done", "--column terminal=done", "a time limit cut an episode off"},
	} {
		in := "episode,t,state,action,reward,behavior_prob,target_prob," + c.name + "\na,0,0,0,1,0.5,0.75,1\n"
		_, err := logio.ReadCSV(strings.NewReader(in), "log.csv")
		if err == nil || !strings.Contains(err.Error(), c.flag) || !strings.Contains(err.Error(), c.note) {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		o := optionsFromFlags(t, strings.Fields(c.flag))
		o.Format = logio.CSV
		d, _, err := logio.Read(strings.NewReader(in), "log.csv", o)
		if err != nil || !d.IsTerminal(0) {
			t.Errorf("%s read with %s: %v", c.name, c.flag, err)
		}
	}
}

// Absorbing pads each terminal episode with steps in the absorbing state
// (a new state id, or the indicator component of real states) and leaves
// cut-off episodes alone.
func TestAbsorbing(t *testing.T) {
	d := episodic(t)
	a := d.Absorbing(4)
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if a.NumStates != 3 || a.Terminal != nil || a.Len(0) != 4 || a.Len(1) != 3 || a.Len(2) != 1 {
		t.Fatalf("NumStates %d, Terminal %v, lengths %d %d %d", a.NumStates, a.Terminal, a.Len(0), a.Len(1), a.Len(2))
	}
	ep := a.Episode(0)
	for k, want := range []int{0, 1, 2, 2} {
		if s := ep.Steps[k]; s.State != want || (k >= 2 && (s.Reward != 0 || s.Action != 0 || s.LogBehavior != 0 || s.LogTarget != 0)) {
			t.Errorf("step %d: %+v", k, s)
		}
	}
	if ns, ok := a.NextState(0, a.Start[1]-1); !ok || ns != 2 {
		t.Errorf("final state %d (%v), want the absorbing state 2", ns, ok)
	}
	if !reflect.DeepEqual(a.Episode(1), d.Episode(1)) || !reflect.DeepEqual(a.Episode(2), d.Episode(2)) {
		t.Errorf("cut-off episodes changed")
	}
	// Long enough already: no padding, but z as the next state.
	if b := d.Absorbing(2); b.Len(0) != 2 || b.FinalState[0] != 2 || !b.HasFinal[0] {
		t.Errorf("Absorbing(2): length %d, final state %d", b.Len(0), b.FinalState[0])
	}
	if d.Subset([]int{1, 2}).Absorbing(9).Len(0) != 3 {
		t.Errorf("a log without terminal episodes is padded")
	}

	// Real states: the indicator.
	st := func(x float64, next []float64) dataset.Step {
		return dataset.Step{State: -1, Obs: []float64{x, -x}, Action: 1, Reward: x, HasNext: next != nil, NextObs: next,
			LogBehavior: -0.5, LogTarget: -0.25}
	}
	last := st(2, nil)
	last.Terminal = true
	r := mustNew(t, 0, 2, []dataset.Episode{
		{ID: "x", Steps: []dataset.Step{st(1, []float64{2, -2}), last}},
		{ID: "y", Steps: []dataset.Step{st(5, []float64{6, -6})}},
	})
	ra := r.Absorbing(3)
	if err := ra.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []float64{1, -1, 0, 2, -2, 0, 0, 0, 1, 5, -5, 0}
	if ra.StateDim != 3 || !reflect.DeepEqual(ra.Obs, want) {
		t.Errorf("StateDim %d, Obs %v, want %v", ra.StateDim, ra.Obs, want)
	}
	if v, ok := ra.NextObs(1, 3); !ok || !reflect.DeepEqual(v, []float64{6, -6, 0}) {
		t.Errorf("cut-off episode's next state %v", v)
	}
	if v, _ := ra.NextObs(0, 2); !reflect.DeepEqual(v, []float64{0, 0, 1}) {
		t.Errorf("terminal episode's next state %v, want z", v)
	}
}

// A moving-block resample of a terminal episode keeps its block ends'
// logged next states through Absorbing.
func TestAbsorbingBlocks(t *testing.T) {
	d := episodic(t).Subset([]int{0}) // "quit": 0 -> 1, then terminal
	b := d.Blocks([]int{1, 0, 1}, []int{1, 1, 1})
	if !b.IsTerminal(0) {
		t.Fatal("the last block ends at the terminal step, yet the resample is not terminal")
	}
	a := b.Absorbing(5)
	// Steps: 1 (a block end whose logged next state is unknown: the
	// terminal step's), 0 (a block end, next 1), 1 (terminal), then z, z.
	for j, want := range []int{-1, 1, 2, 2, 2} {
		ns, ok := a.NextState(0, j)
		if want >= 0 && (!ok || ns != want) {
			t.Errorf("step %d: next state %d (%v), want %d", j, ns, ok, want)
		}
	}
	if got := a.State; !reflect.DeepEqual(got, []int32{1, 0, 1, 2, 2}) {
		t.Errorf("states %v", got)
	}
}
