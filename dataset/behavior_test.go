package dataset_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// A log without behavior_prob or behavior_logprob is read with
// HasBehavior false and LogBehavior nil, everything else as with the
// column; it writes back without the column and reads back identical, in
// both formats, and its subsets keep having none.
func TestWithoutBehavior(t *testing.T) {
	with := sampled(t, 6, 5)
	var b strings.Builder
	for i, line := range strings.SplitAfter(string(writeCSV(t, with)), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 6 {
			b.WriteString(line)
			continue
		}
		if i == 0 && f[5] != "behavior_logprob" {
			t.Fatalf("column 6 is %q", f[5])
		}
		b.WriteString(strings.Join(append(f[:5:5], f[6:]...), ","))
	}
	d := readCSV(t, []byte(b.String()))
	if d.HasBehavior() || d.LogBehavior != nil {
		t.Fatalf("HasBehavior %v, LogBehavior of length %d", d.HasBehavior(), len(d.LogBehavior))
	}
	want := with.Clone()
	want.LogBehavior = nil
	if !reflect.DeepEqual(d, want) {
		t.Fatal("read without behavior_logprob: differs from the log with it, LogBehavior apart")
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	csv := writeCSV(t, d)
	if strings.Contains(string(csv), "behavior") {
		t.Errorf("written with a behavior column:\n%.200s", csv)
	}
	if got := readCSV(t, csv); !reflect.DeepEqual(got, d) {
		t.Error("CSV round trip differs")
	}
	if got := readParquet(t, writeParquet(t, d)); !reflect.DeepEqual(got, d) {
		t.Error("Parquet round trip differs")
	}
	for i, sub := range []*dataset.Dataset{d.Subset([]int{1, 1, 3}), d.Head(2, 3), d.Clone()} {
		if sub.HasBehavior() {
			t.Errorf("%d: a part of a log without behavior probabilities has them", i)
		}
	}
	if s := d.Step(0, 0); !math.IsNaN(s.LogBehavior) {
		t.Errorf("Step: LogBehavior %v, want NaN", s.LogBehavior)
	}
	if s := dataset.Summarize(d); s.LargeRatio != 0 || !math.IsNaN(s.MaxLogRatio) || s.Steps != 30 {
		t.Errorf("summary %+v", s)
	}
	// Subsets of a log with behavior probabilities keep them, even empty.
	if !with.Subset(nil).HasBehavior() {
		t.Error("an empty subset lost HasBehavior")
	}
}

// Bad input in a log without behavior columns is still refused with its
// file, row and column.
func TestWithoutBehaviorBadInput(t *testing.T) {
	const h = "episode,t,state,action,reward,target_prob\n"
	for i, c := range []struct {
		in       string
		row      int
		col, msg string
	}{
		{h + "a,0,1,0,1,0.5\na,2,1,0,1,0.5\n", 3, "t", "t = 1 is missing"},
		{h + "a,0,1,0,x,0.5\n", 2, "reward", "not a number"},
		{h + "a,0,1,0,1,1.5\n", 2, "target_prob", "outside [0, 1]"},
		{"episode,t,state,action,reward\na,0,1,0,1\n", 1, "target_prob", "required column is missing"},
	} {
		_, err := logio.ReadCSV(strings.NewReader(c.in), "logs.csv")
		fe, ok := err.(*logio.FormatError)
		if !ok || fe.Row != c.row || fe.Column != c.col || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%d: %v, want row %d, column %q, %q", i, err, c.row, c.col, c.msg)
		}
	}
}

func TestFindBehaviorConflict(t *testing.T) {
	const h = "episode,t,state,action,reward,behavior_prob,target_prob\n"
	for i, c := range []struct {
		in   string
		want dataset.BehaviorConflict
	}{
		{h + "a,0,1,0,1,0.5,0.5\na,1,1,0,1,0.5,0.5\nb,0,1,1,0,0.25,0.5\n", dataset.BehaviorConflict{}},
		// Within 1e-6 is the same probability.
		{h + "a,0,1,0,1,0.5,0.5\nb,0,1,0,1,0.5000005,0.5\n", dataset.BehaviorConflict{}},
		{h + "a,0,1,0,1,0.5,0.5\na,1,2,0,1,0.3,0.5\nb,0,2,0,1,0.3,0.5\nb,1,1,0,1,0.25,0.5\nb,2,1,0,1,0.75,0.5\nc,0,2,0,1,0.4,0.5\n",
			dataset.BehaviorConflict{Pairs: 2, State: 1, Action: 0,
				First: dataset.LoggedProb{Episode: "a", T: 0, Prob: 0.5}, Second: dataset.LoggedProb{Episode: "b", T: 1, Prob: 0.25}}},
		// Without behavior probabilities, or with real states: nothing to check.
		{"episode,t,state,action,reward,target_prob\na,0,1,0,1,0.5\n", dataset.BehaviorConflict{}},
		{"episode,t,state_0,action,reward,behavior_prob,target_prob\na,0,1,0,1,0.5,0.5\nb,0,1,0,1,0.25,0.5\n", dataset.BehaviorConflict{}},
	} {
		d, err := logio.ReadCSV(strings.NewReader(c.in), "logs.csv")
		if err != nil {
			t.Fatal(err)
		}
		got := dataset.FindBehaviorConflict(d)
		got.First.Prob, got.Second.Prob = round(got.First.Prob), round(got.Second.Prob)
		if got != c.want {
			t.Errorf("%d: %+v, want %+v", i, got, c.want)
		}
	}
}

func round(p float64) float64 { return math.Round(p*1e9) / 1e9 }
