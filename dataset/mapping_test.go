package dataset_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// obpForm writes d (discrete states and actions) as another OPE tool's
// export would: trajectory_id, step and pscore for episode, t and
// behavior_prob, an extra user_id column, and the columns in another
// order. contract is the same table under the contract's names, without
// user_id.
func obpForm(t *testing.T, d *dataset.Dataset) (other, contract string) {
	t.Helper()
	var o, c strings.Builder
	o.WriteString("user_id,trajectory_id,step,state,action,reward,pscore,target_prob,next_state\n")
	c.WriteString("episode,t,state,action,reward,behavior_prob,target_prob,next_state\n")
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			next := ""
			if j == hi-1 && d.HasFinal[e] {
				next = strconv.Itoa(int(d.FinalState[e]))
			}
			row := fmt.Sprintf("%s,%d,%d,%d,%s,%s,%s,%s", d.IDs[e], j-lo, d.State[j], d.Action[j], g(d.Reward[j]),
				g(math.Exp(d.LogBehavior[j])), g(math.Exp(d.LogTarget[j])), next)
			fmt.Fprintf(&o, "u%d,%s\n", (7*j)%5, row)
			c.WriteString(row + "\n")
		}
	}
	return o.String(), c.String()
}

// A log in another tool's names is refused with every mapping it needs
// named at once, and read with those flags it is the log in contract form.
func TestMappingOtherToolsNames(t *testing.T) {
	other, contract := obpForm(t, sampled(t, 5, 8))
	want, err := logio.ReadCSV(strings.NewReader(contract), "contract.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, err = logio.ReadCSV(strings.NewReader(other), "obp.csv")
	var fe *logio.FormatError
	if !errors.As(err, &fe) || fe.Row != 1 || fe.Column != "" {
		t.Fatalf("got %#v", err)
	}
	flags := []string{"--ignore user_id", "--column episode=trajectory_id", "--column t=step", "--column behavior_prob=pscore"}
	for _, f := range flags {
		if !strings.Contains(fe.Msg, f) {
			t.Errorf("the message does not name %s:\n%v", f, err)
		}
	}
	const add = "to read the file as it is, add: --ignore user_id --column episode=trajectory_id --column t=step --column behavior_prob=pscore"
	if !strings.HasPrefix(fe.Msg, "4 problems with the header:\n") || !strings.HasSuffix(fe.Msg, add) || strings.Contains(fe.Msg, "missing") {
		t.Errorf("message:\n%s", fe.Msg)
	}
	// The flags as the message gives them read the file.
	o := optionsFromFlags(t, strings.Fields(strings.TrimPrefix(fe.Msg[strings.LastIndex(fe.Msg, "\n")+1:], "to read the file as it is, add: ")))
	for _, f := range []logio.Format{logio.CSV, logio.Parquet} {
		in := []byte(other)
		if f == logio.Parquet {
			in = csvToParquet(t, other)
		}
		o.Format = f
		got, labels, err := logio.Read(bytes.NewReader(in), "obp", o)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if labels != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: mapped read differs from the contract form", f)
		}
	}
}

// optionsFromFlags turns "--column ROLE=NAME" and "--ignore NAME" pairs
// into ReadOptions, as the command line does.
func optionsFromFlags(t *testing.T, words []string) logio.ReadOptions {
	t.Helper()
	var cols []string
	var o logio.ReadOptions
	for i := 0; i+1 < len(words); i += 2 {
		switch words[i] {
		case "--column":
			cols = append(cols, words[i+1])
		case "--ignore":
			o.Ignore = append(o.Ignore, words[i+1])
		default:
			t.Fatalf("flag %q", words[i])
		}
	}
	var err error
	if o.Columns, err = logio.ParseColumns(cols); err != nil {
		t.Fatal(err)
	}
	return o
}

// Each header problem, alone, is one line naming the column and the flag
// that fixes it; together they are reported at once.
func TestMappingMessages(t *testing.T) {
	const rest = "state,action,reward,behavior_prob,target_prob"
	row := "a,0,1,0,0.5,0.5,0.25\n"
	for _, c := range []struct {
		name, header string
		flags        []string
		col, msg     string
	}{
		{"pscore", "episode,t,state,action,reward,pscore,target_prob", nil,
			"pscore", "unknown column; other OPE tools' name for behavior_prob: read it with --column behavior_prob=pscore"},
		{"action_prob", "episode,t,state,action,reward,behavior_prob,action_prob", nil,
			"action_prob", "read it with --column target_prob=action_prob (RLlib's action_prob is the logging policy's: then read it with --column behavior_prob=action_prob)"},
		{"quoted name", "Trajectory ID,t," + rest, nil,
			"Trajectory ID", "read it with --column 'episode=Trajectory ID'"},
		{"typo", "episode,t,state,action,rewrad,behavior_prob,target_prob", nil,
			"rewrad", `unknown column (did you mean "reward"?): rename it, or read it with --column reward=rewrad`},
		{"capitals", "Episode,t," + rest, nil, "Episode", "--column episode=Episode"},
		{"extra", "episode,t," + rest + ",user_id", nil, "user_id", "unknown column: drop it with --ignore user_id, or read it as a contract column with --column ROLE=user_id"},
		{"pandas index", "Unnamed: 0,episode,t," + rest, nil, "Unnamed: 0", "drop it with --ignore 'Unnamed: 0'"},
		{"mapped name missing", "episode,t," + rest, []string{"--column", "t=step"},
			"", "--column t=step: the file has no column \"step\""},
		{"mapped name near", "episode,steps," + rest, []string{"--column", "t=step"},
			"", `--column t=step: the file has no column "step" (did you mean "steps"?)`},
		{"ignored name missing", "episode,t," + rest, []string{"--ignore", "user_id"},
			"", "--ignore user_id: the file has no column \"user_id\""},
		{"prefix matches nothing", "episode,t," + rest, []string{"--column", "state_=obs_"},
			"", `--column state_=obs_: no column of the file is "obs_" followed by a number`},
		{"mapped onto a present column", "episode,t," + rest + ",pscore", []string{"--column", "behavior_prob=pscore"},
			"pscore", `is behavior_prob (--column behavior_prob=pscore), but column 6, "behavior_prob", is behavior_prob too`},
		{"duplicate", "episode,t,t," + rest, nil, "t", "duplicate column (columns 2 and 3 have this name)"},
		{"categorical vectors", "episode,t,state_0,action,reward,behavior_prob,target_prob", []string{"--categorical", "state"},
			"state_0", "--categorical state: the states are vectors (state_0); labels are for a state column"},
		{"categorical action and target_prob_k", "episode,t,state,action,reward,target_prob_0,target_prob_1", []string{"--categorical", "action"},
			"target_prob_0", "--categorical action: target_prob_k give the target's probability of action id k"},
	} {
		o := logio.ReadOptions{Format: logio.CSV}
		var cols []string
		for i := 0; i < len(c.flags); i += 2 {
			switch c.flags[i] {
			case "--column":
				cols = append(cols, c.flags[i+1])
			case "--ignore":
				o.Ignore = append(o.Ignore, c.flags[i+1])
			case "--categorical":
				o.Categorical = append(o.Categorical, c.flags[i+1])
			}
		}
		var err error
		if o.Columns, err = logio.ParseColumns(cols); err != nil {
			t.Fatal(err)
		}
		_, _, err = logio.Read(strings.NewReader(c.header+"\n"+row), "test.csv", o)
		var fe *logio.FormatError
		if !errors.As(err, &fe) || fe.Row != 1 || fe.Column != c.col || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%s: got %v\nwant column %q and %q", c.name, err, c.col, c.msg)
		}
	}
}

// A vector under another prefix is one suggestion, and read with it the
// log is the contract's; row errors name the file's columns.
func TestMappingPrefix(t *testing.T) {
	d := continuous(t)
	var buf bytes.Buffer
	if err := logio.WriteCSV(&buf, d); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(buf.String(), "\n", 2)
	header := strings.NewReplacer("next_state_", "next_obs_", "state_", "obs_", "episode", "ep").Replace(lines[0])
	in := header + "\n" + lines[1]
	_, err := logio.ReadCSV(strings.NewReader(in), "test.csv")
	if err == nil || !strings.HasSuffix(err.Error(), "add: --column episode=ep --column state_=obs_ --column next_state_=next_obs_") {
		t.Fatalf("got %v", err)
	}
	cols, err := logio.ParseColumns([]string{"episode=ep", "state_=obs_", "next_state_=next_obs_"})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := logio.Read(strings.NewReader(in), "test.csv", logio.ReadOptions{Format: logio.CSV, Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Error("mapped read differs")
	}
	// A row error names the column as the file does.
	bad := strings.Replace(in, "\na,0,", "\na,-1,", 1)
	_, _, err = logio.Read(strings.NewReader(bad), "test.csv", logio.ReadOptions{Format: logio.CSV, Columns: cols})
	if err == nil || !strings.Contains(err.Error(), `column "t"`) {
		t.Errorf("got %v", err)
	}
	other, contract := obpForm(t, sampled(t, 2, 3))
	for _, c := range []struct{ in, want string }{
		{strings.Replace(other, ",1,", ",3,", 1), `column "step": gap in episode`},
		{strings.Replace(other, "0.5,", "0,", 1), `column "pscore": 0 is outside (0, 1]`},
	} {
		o := optionsFromFlags(t, []string{"--ignore", "user_id", "--column", "episode=trajectory_id", "--column", "t=step", "--column", "behavior_prob=pscore"})
		o.Format = logio.CSV
		_, _, err := logio.Read(strings.NewReader(c.in), "test.csv", o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q\n%s", err, c.want, contract)
		}
	}
}

func TestReadOptionsCheck(t *testing.T) {
	for _, c := range []struct {
		o    logio.ReadOptions
		want string
	}{
		{logio.ReadOptions{Columns: map[string]string{"propensity": "p"}}, `"propensity" is not a column of the log contract`},
		{logio.ReadOptions{Columns: map[string]string{"behavior_prob": "p", "target_prob": "p"}}, "one column cannot be two contract columns"},
		{logio.ReadOptions{Columns: map[string]string{"t": "step"}, Ignore: []string{"step"}}, "a column is either read or ignored"},
		{logio.ReadOptions{Categorical: []string{"reward"}}, "only state and action may hold labels"},
		{logio.ReadOptions{Format: "xlsx"}, `unknown format "xlsx"`},
	} {
		err := c.o.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.o, err, c.want)
		}
		if _, _, err := logio.Read(strings.NewReader(hdr+ok), "x", c.o); err == nil {
			t.Errorf("%+v: Read: no error", c.o)
		}
	}
	for _, flags := range [][]string{{"behavior_prob"}, {"=pscore"}, {"t=step", "t=steps"}, {"bogus=x"}} {
		if _, err := logio.ParseColumns(flags); err == nil {
			t.Errorf("ParseColumns(%q): no error", flags)
		}
	}
	m, err := logio.ParseColumns([]string{"behavior_prob =pscore ", "state_=obs_", "state_0=x"})
	if err != nil || !reflect.DeepEqual(m, map[string]string{"behavior_prob": "pscore ", "state_": "obs_", "state_0": "x"}) {
		t.Errorf("ParseColumns: %v, %v", m, err)
	}
}

// Categorical states and actions get ids in sorted order, whatever the
// row order; next_state shares the states' numbering.
func TestCategorical(t *testing.T) {
	const in = `episode,t,state,action,reward,behavior_prob,target_prob,next_state
b,0,work,right,1,0.5,0.5,
a,1,home,left,0,0.5,0.5,park
a,0,work,left,1,0.5,0.5,
`
	o := logio.ReadOptions{Format: logio.CSV, Categorical: []string{"state", "action"}}
	d, labels, err := logio.Read(strings.NewReader(in), "test.csv", o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(labels, &logio.Labels{State: []string{"home", "park", "work"}, Action: []string{"left", "right"}}) {
		t.Errorf("labels %+v", labels)
	}
	// Rows out of order: the episodes come in the order of their ids, a
	// then b.
	if !reflect.DeepEqual(d.IDs, []string{"a", "b"}) || !reflect.DeepEqual(d.State, []int32{2, 0, 2}) || !reflect.DeepEqual(d.Action, []int32{0, 0, 1}) ||
		!reflect.DeepEqual(d.FinalState, []int32{1, -1}) || d.NumStates != 3 || d.NumActions != 2 {
		t.Errorf("states %v, actions %v, final %v, %d states, %d actions", d.State, d.Action, d.FinalState, d.NumStates, d.NumActions)
	}
	var buf bytes.Buffer
	if err := labels.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	if want := "column,id,label\nstate,0,home\nstate,1,park\nstate,2,work\naction,0,left\naction,1,right\n"; buf.String() != want {
		t.Errorf("labels CSV:\n%s", buf.String())
	}
	// Parquet: a string state column.
	pqIn := pq(t, stringState{"e", 0, "s9", 1, 1, 0.5, 0.5}, stringState{"e", 1, "s10", 0, 1, 0.5, 0.5})
	got, labels, err := logio.Read(bytes.NewReader(pqIn), "test.parquet",
		logio.ReadOptions{Format: logio.Parquet, Categorical: []string{"state"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(labels.State, []string{"s10", "s9"}) || labels.Action != nil || !reflect.DeepEqual(got.State, []int32{1, 0}) {
		t.Errorf("Parquet: labels %+v, states %v", labels, got.State)
	}
	// Without --categorical, labels are refused with a hint.
	_, err = logio.ReadCSV(strings.NewReader(in), "test.csv")
	if err == nil || !strings.Contains(err.Error(), `"work" is not a number (if the states are labels, read them with --categorical state)`) {
		t.Errorf("CSV without --categorical: %v", err)
	}
	_, err = logio.ReadParquet(bytes.NewReader(pqIn), int64(len(pqIn)), "test.parquet")
	if err == nil || !strings.Contains(err.Error(), "(if the states are labels, read them with --categorical state)") {
		t.Errorf("Parquet without --categorical: %v", err)
	}
	path := filepath.Join(t.TempDir(), "log.csv")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, labels, err := logio.ReadFileWith(path, logio.ReadOptions{Categorical: []string{"action"}}); err == nil {
		t.Errorf("labelled states read as ids: %+v", labels)
	}
}

// A name with a space at its end, as spreadsheets leave them, is
// suggested quoted and read as it is.
func TestMappingSpacedName(t *testing.T) {
	const in = "episode,t,state,action,reward,pscore ,target_prob\n" + ok
	_, err := logio.ReadCSV(strings.NewReader(in), "test.csv")
	if err == nil || !strings.Contains(err.Error(), "--column 'behavior_prob=pscore '") {
		t.Fatalf("got %v", err)
	}
	cols, err := logio.ParseColumns([]string{"behavior_prob=pscore "})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := logio.Read(strings.NewReader(in), "test.csv", logio.ReadOptions{Format: logio.CSV, Columns: cols}); err != nil {
		t.Error(err)
	}
}
