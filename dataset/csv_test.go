package dataset_test

import (
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

const hdr = "episode,t,state,action,reward,behavior_prob,target_prob\n"

// ok is a good data row of hdr.
const ok = "a,0,1,0,0.5,0.5,0.25\n"

func TestReadCSVMalformed(t *testing.T) {
	for i, c := range []struct {
		name, in string
		row      int
		col, msg string
	}{
		{"empty file", "", 0, "", "empty file"},
		{"byte-order mark only", "\xef\xbb\xbf", 0, "", "empty file"},
		{"header only", hdr, 0, "", "no data rows"},
		{"header only, no newline", strings.TrimSuffix(hdr, "\n"), 0, "", "no data rows"},
		{"header repeated", hdr + ok + hdr + ok, 3, "", "the header row again (two files joined with both headers?)"},
		{"empty header", "\n" + ok, 1, "", "header row is empty"},
		{"missing reward", "episode,t,state,action,behavior_prob,target_prob\na,0,1,0,0.5,0.5\n", 1, "reward", "required column is missing"},
		{"missing state", "episode,t,action,reward,behavior_prob,target_prob\na,0,0,1,0.5,0.5\n", 1, "state", `give "state" for a state id or "state_0"`},
		{"missing episode", "t,state,action,reward,behavior_prob,target_prob\n0,1,0,1,0.5,0.5\n", 1, "episode", "required column is missing"},
		{"state and state_0", "episode,t,state,state_0,action,reward,behavior_prob,target_prob\n", 1, "state_0", `both "state" and "state_0"`},
		{"behavior prob and logprob", "episode,t,state,action,reward,behavior_logprob,target_prob,behavior_prob\n", 1, "behavior_prob", `both "behavior_logprob" and "behavior_prob"`},
		{"action and action_0", "episode,t,state,action_0,action,reward,behavior_prob,target_prob\n", 1, "action", `both "action_0" and "action"`},
		{"target prob and logprob", "episode,t,state,action,reward,behavior_prob,target_prob,target_logprob\n", 1, "target_logprob", "use one of them"},
		{"unknown column", "episode,t,state,action,rewrad,behavior_prob,target_prob\n" + ok, 1, "rewrad", `unknown column (did you mean "reward"?)`},
		{"unknown extra column", strings.TrimSuffix(hdr, "\n") + ",notes\n" + "a,0,1,0,0.5,0.5,0.25,hi\n", 1, "notes", "unknown column: drop it with --ignore notes"},
		{"column in capitals", "Episode,t,state,action,reward,behavior_prob,target_prob\n" + ok, 1, "Episode", `did you mean "episode"?`},
		{"duplicate column", "episode,t,state,action,reward,reward,behavior_prob,target_prob\n", 1, "reward", "duplicate column (columns 5 and 6"},
		{"nameless column", "episode,t,,state,action,reward,behavior_prob,target_prob\n", 1, "", "column 3 has no name"},
		{"state_k gap", "episode,t,state_0,state_2,action,reward,behavior_prob,target_prob\n", 1, "state_1", "state_2 is present"},
		{"state_k leading zero", "episode,t,state_0,state_01,action,reward,behavior_prob,target_prob\n", 1, "state_01", "unknown column"},
		{"next_state with state vectors", "episode,t,state_0,action,reward,behavior_prob,target_prob,next_state\n", 1, "next_state", "the states are vectors"},
		{"next_state_0 with state ids", "episode,t,state,action,reward,behavior_prob,target_prob,next_state_0\n", 1, "next_state_0", "the states are ids"},
		{"next_state_k too short", "episode,t,state_0,state_1,action,reward,behavior_prob,target_prob,next_state_0\n", 1, "next_state_1", "the state has 2 components (state_0 ... state_1)"},
		{"state_k too short", "episode,t,state_0,action,reward,behavior_prob,target_prob,next_state_0,next_state_1\n", 1, "state_1", "column is missing: the next states have 2 components (next_state_0 ... next_state_1), the states 1 (state_0)"},
		{"non-numeric reward", hdr + ok + "a,1,1,0,abc,0.5,0.5\n", 3, "reward", `"abc" is not a number`},
		{"number with spaces", hdr + "a,0,1,0, 1,0.5,0.5\n", 2, "reward", `" 1" is not a number`},
		{"Go digit separators", hdr + "a,0,1,0,1_000,0.5,0.5\n", 2, "reward", `"1_000" is not a number`},
		{"hexadecimal float", hdr + "a,0,1,0,1,0x1p-1,0.5\n", 2, "behavior_prob", `"0x1p-1" is not a number`},
		{"state id with separator", hdr + "a,0,1_0,0,1,0.5,0.5\n", 2, "state", `"1_0" is not a number`},
		{"reward out of range", hdr + "a,0,1,0,1e400,0.5,0.5\n", 2, "reward", "out of the range"},
		{"empty reward", hdr + "a,0,1,0,,0.5,0.5\n", 2, "reward", "empty value"},
		{"empty episode", hdr + ",0,1,0,1,0.5,0.5\n", 2, "episode", "empty value"},
		{"empty state", hdr + "a,0,,0,1,0.5,0.5\n", 2, "state", "empty value"},
		{"NaN reward", hdr + "a,0,1,0,NaN,0.5,0.5\n", 2, "reward", "NaN is not allowed"},
		{"nan behavior_prob", hdr + "a,0,1,0,1,nan,0.5\n", 2, "behavior_prob", "NaN is not allowed"},
		{"Inf reward", hdr + "a,0,1,0,Inf,0.5,0.5\n", 2, "reward", "+Inf is not allowed"},
		{"+Inf state component", "episode,t,state_0,action,reward,behavior_prob,target_prob\na,0,+Inf,0,1,0.5,0.5\n", 2, "state_0", "+Inf is not allowed"},
		{"infinity target_prob", hdr + "a,0,1,0,1,0.5,infinity\n", 2, "target_prob", "+Inf is not allowed"},
		{"-Infinity reward", hdr + "a,0,1,0,-Infinity,0.5,0.5\n", 2, "reward", "-Inf is not allowed"},
		{"NaN action component", "episode,t,state,action_0,reward,behavior_prob,target_prob\na,0,1,NaN,1,0.5,0.5\n", 2, "action_0", "NaN is not allowed"},
		{"behavior_prob 0", hdr + ok + ok[:2] + "1,1,0,1,0,0.5\n", 3, "behavior_prob", "0 is outside (0, 1]"},
		{"behavior_prob above 1", hdr + "a,0,1,0,1,1.5,0.5\n", 2, "behavior_prob", "1.5 is outside (0, 1]"},
		{"behavior_prob negative", hdr + "a,0,1,0,1,-0.1,0.5\n", 2, "behavior_prob", "-0.1 is outside (0, 1]"},
		{"target_prob above 1", hdr + "a,0,1,0,1,0.5,1.0000001\n", 2, "target_prob", "1.0000001 is outside [0, 1]"},
		{"target_prob negative", hdr + "a,0,1,0,1,0.5,-0.5\n", 2, "target_prob", "-0.5 is outside [0, 1]"},
		{"behavior density 0", "episode,t,state,action_0,reward,behavior_prob,target_prob\na,0,1,0.3,1,0,0.5\n", 2, "behavior_prob", "0 is not a positive density"},
		{"target density negative", "episode,t,state,action_0,reward,behavior_prob,target_prob\na,0,1,0.3,1,2.5,-1\n", 2, "target_prob", "-1 is a negative density"},
		{"behavior_logprob -Inf", "episode,t,state,action,reward,behavior_logprob,target_prob\na,0,1,0,1,-Inf,0.5\n", 2, "behavior_logprob", "-Inf is not allowed"},
		{"behavior_logprob NaN", "episode,t,state,action,reward,behavior_logprob,target_prob\na,0,1,0,1,NaN,0.5\n", 2, "behavior_logprob", "NaN is not allowed"},
		{"behavior_logprob above 0", "episode,t,state,action,reward,behavior_logprob,target_prob\na,0,1,0,1,0.1,0.5\n", 2, "behavior_logprob", "0.1 is above 0"},
		{"target_logprob above 0", "episode,t,state,action,reward,behavior_prob,target_logprob\na,0,1,0,1,0.5,0.5\n", 2, "target_logprob", "0.5 is above 0"},
		{"target_logprob +Inf", "episode,t,state,action,reward,behavior_prob,target_logprob\na,0,1,0,1,0.5,+Inf\n", 2, "target_logprob", "+Inf is not allowed"},
		{"duplicate step", hdr + ok + "a,1,1,0,1,0.5,0.5\na,1,2,0,1,0.5,0.5\n", 4, "t", `duplicate step: episode "a" has t = 1 on row 3 too`},
		{"gap in t", hdr + ok + "a,1,1,0,1,0.5,0.5\na,3,2,0,1,0.5,0.5\n", 4, "t", "t jumps from 1 to 3 (t = 2 is missing)"},
		{"gap in shuffled rows", hdr + "a,4,1,0,1,0.5,0.5\n" + ok + "a,1,1,0,1,0.5,0.5\n", 2, "t", "t = 2 ... 3 are missing"},
		{"t starts at 1", hdr + "a,1,1,0,1,0.5,0.5\na,2,1,0,1,0.5,0.5\n", 2, "t", `episode "a" starts at t = 1`},
		{"second episode starts late", hdr + ok + "b,2,1,0,1,0.5,0.5\n", 3, "t", `episode "b" starts at t = 2`},
		{"t negative", hdr + "a,-1,1,0,1,0.5,0.5\n", 2, "t", "-1 is negative; the step index t is a non-negative integer"},
		{"t not an integer", hdr + "a,0.5,1,0,1,0.5,0.5\n", 2, "t", "0.5 is not an integer"},
		{"state not an integer", hdr + "a,0,3.5,0,1,0.5,0.5\n", 2, "state", "3.5 is not an integer; a state id is a non-negative integer"},
		{"state negative", hdr + "a,0,-2,0,1,0.5,0.5\n", 2, "state", "-2 is negative"},
		{"state too large", hdr + "a,0,1e10,0,1,0.5,0.5\n", 2, "state", "1e+10 is too large"},
		{"state id text", hdr + "a,0,s1,0,1,0.5,0.5\n", 2, "state", `"s1" is not a number`},
		{"action negative", hdr + "a,0,1,-1,1,0.5,0.5\n", 2, "action", "-1 is negative; an action id"},
		{"action not an integer", hdr + "a,0,1,0.25,1,0.5,0.5\n", 2, "action", "0.25 is not an integer"},
		{"too few fields", hdr + ok + "a,1,1,0,1,0.5\n" + ok, 3, "", "6 fields, but the header has 7"},
		{"too many fields", hdr + "a,0,1,0,1,0.5,0.5,9\n", 2, "", "8 fields, but the header has 7"},
		{"truncated last line", hdr + ok + "a,1,1,0,0.", 3, "", "truncated last line: 5 of 7 fields"},
		{"blank line between rows", hdr + ok + "\n" + "a,1,1,0,1,0.5,0.5\n", 3, "", "empty line between data rows"},
		{"next_state disagrees", "episode,t,state,action,reward,behavior_prob,target_prob,next_state\na,0,1,0,1,0.5,0.5,2\na,1,3,0,1,0.5,0.5,0\n", 2, "next_state",
			`next_state 2 differs from the state 3 of the next step of episode "a" (row 3)`},
		{"next_state not an integer", "episode,t,state,action,reward,behavior_prob,target_prob,next_state\na,0,1,0,1,0.5,0.5,x\n", 2, "next_state", `"x" is not a number`},
		{"next_state vector disagrees", "episode,t,state_0,state_1,action,reward,behavior_prob,target_prob,next_state_0,next_state_1\n" +
			"a,0,1,2,0,1,0.5,0.5,3,4.5\na,1,3,4,0,1,0.5,0.5,,\n", 2, "next_state_1", "4.5 differs from state_1 = 4"},
		{"next_state vector partial", "episode,t,state_0,state_1,action,reward,behavior_prob,target_prob,next_state_0,next_state_1\n" +
			"a,0,1,2,0,1,0.5,0.5,3,\n", 2, "next_state_1", "give all or none"},
		{"unterminated quote", hdr + ok + `"a,1,1,0,1,0.5,0.5` + "\n", 3, "episode", "unterminated quoted field"},
		{"bare quote", hdr + `a"b,0,1,0,1,0.5,0.5` + "\n", 2, "episode", "double quote in an unquoted field"},
		{"text after closing quote", hdr + `"a"b,0,1,0,1,0.5,0.5` + "\n", 2, "episode", `unexpected 'b' after a closing quote`},
		{"bare quote after a quoted field", hdr + `"a",0,1,0,1,0.5,0"` + "\n", 2, "target_prob", "double quote in an unquoted field"},
	} {
		_, err := logio.ReadCSV(strings.NewReader(c.in), "test.csv")
		var fe *logio.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%d %s: error %v, want a *FormatError", i, c.name, err)
			continue
		}
		if fe.File != "test.csv" || fe.Row != c.row || fe.Column != c.col || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%d %s: got %#v\nwant row %d, column %q, message with %q", i, c.name, *fe, c.row, c.col, c.msg)
		}
		if !strings.HasPrefix(err.Error(), "test.csv: ") || !strings.HasSuffix(err.Error(), fe.Msg) {
			t.Errorf("%d %s: message %q", i, c.name, err)
		}
	}
}

func TestFormatErrorMessage(t *testing.T) {
	in := hdr
	for k := range 5 {
		in += "a," + strconv.Itoa(k) + ",1,0,1,0.5,0.5\n"
	}
	in += "a,5,1,0,1,0,0.5\n" // row 7
	_, err := logio.ReadCSV(strings.NewReader(in), "logs.csv")
	want := `logs.csv: row 7, column "behavior_prob": 0 is outside (0, 1]`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	for _, c := range []struct {
		e    logio.FormatError
		want string
	}{
		{logio.FormatError{File: "f.csv", Row: 3, Msg: "m"}, "f.csv: row 3: m"},
		{logio.FormatError{File: "f.parquet", Column: "state", Msg: "m"}, `f.parquet: column "state": m`},
		{logio.FormatError{File: "f.csv", Msg: "empty file"}, "f.csv: empty file"},
		{logio.FormatError{Row: 2, Column: "t", Msg: "m"}, `row 2, column "t": m`},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}

// TestReadCSVValid checks the accepted forms of a log against hand-built
// datasets.
func TestReadCSVValid(t *testing.T) {
	inf := math.Inf(-1)
	for i, c := range []struct {
		name, in string
		want     *dataset.Dataset
	}{
		{
			// Probabilities, not log-probabilities; a target probability of
			// 0; "3.0" as an id; CRLF line ends; a byte-order mark; no
			// next_state column (so the last step has no next state);
			// episodes of different lengths; no final newline.
			"probabilities",
			"\xef\xbb\xbf" + strings.ReplaceAll(hdr, "\n", "\r\n") + "x,0,2,1,0.5,0.25,0\r\ny,0,0,0,-1,1,1\r\nx,1,3.0,0,2,0.5,0.5",
			mustNew(t, 4, 2, []dataset.Episode{
				{ID: "x", Steps: []dataset.Step{
					{State: 2, Action: 1, Reward: 0.5, HasNext: true, NextState: 3, LogBehavior: math.Log(0.25), LogTarget: inf},
					{State: 3, Action: 0, Reward: 2, NextState: -1, LogBehavior: math.Log(0.5), LogTarget: math.Log(0.5)},
				}},
				{ID: "y", Steps: []dataset.Step{
					{State: 0, Action: 0, Reward: -1, NextState: -1, LogBehavior: 0, LogTarget: 0},
				}},
			}),
		},
		{
			// Columns in any order, quoted fields, next_state on the last
			// row (raising NumStates), an empty next_state elsewhere,
			// trailing empty lines, target_logprob -Inf.
			"log-probabilities",
			"target_logprob,next_state,reward,\"action\",state,t,episode,behavior_logprob\n" +
				"-Inf,,1,0,0,0,\"ep \"\"1\"\"\",-0.5\n" +
				"-1,9,2,2,1,1,\"ep \"\"1\"\"\",-1.5\n\n\r\n",
			mustNew(t, 10, 3, []dataset.Episode{
				{ID: `ep "1"`, Steps: []dataset.Step{
					{State: 0, Action: 0, Reward: 1, HasNext: true, NextState: 1, LogBehavior: -0.5, LogTarget: inf},
					{State: 1, Action: 2, Reward: 2, HasNext: true, NextState: 9, LogBehavior: -1.5, LogTarget: -1},
				}},
			}),
		},
		{
			// Vector states and actions; densities above 1.
			"vectors",
			"episode,t,state_1,state_0,action_0,reward,behavior_prob,target_logprob,next_state_0,next_state_1\n" +
				"e,1,4,3,-0.5,0,4,1.5,5,6\n" +
				"e,0,2,1,0.25,1,2,-Inf,,\n",
			mustNew(t, 0, 0, []dataset.Episode{
				{ID: "e", Steps: []dataset.Step{
					{State: -1, Obs: []float64{1, 2}, Action: -1, ActionVec: []float64{0.25}, Reward: 1, HasNext: true, NextState: -1,
						NextObs: []float64{3, 4}, LogBehavior: math.Log(2), LogTarget: inf},
					{State: -1, Obs: []float64{3, 4}, Action: -1, ActionVec: []float64{-0.5}, Reward: 0, HasNext: true, NextState: -1,
						NextObs: []float64{5, 6}, LogBehavior: math.Log(4), LogTarget: 1.5},
				}},
			}),
		},
	} {
		got, err := logio.ReadCSV(strings.NewReader(c.in), "test.csv")
		if err != nil {
			t.Errorf("%d %s: %v", i, c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%d %s:\n got %+v\nwant %+v", i, c.name, got, c.want)
		}
	}
}

// A reader that fails is reported as such, not as a format error.
func TestReadCSVReaderError(t *testing.T) {
	r := &failingReader{data: hdr + ok, err: errors.New("disk on fire")}
	_, err := logio.ReadCSV(r, "x.csv")
	var fe *logio.FormatError
	if err == nil || errors.As(err, &fe) || !errors.Is(err, r.err) || !strings.HasPrefix(err.Error(), "x.csv: ") {
		t.Errorf("got %v", err)
	}
}

type failingReader struct {
	data string
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadCSVLongLine(t *testing.T) {
	in := io.MultiReader(strings.NewReader(hdr+"a"), &zeros{n: 65<<20 + 1})
	_, err := logio.ReadCSV(in, "big.csv")
	var fe *logio.FormatError
	if !errors.As(err, &fe) || fe.Row != 2 || fe.Column != "" || !strings.Contains(fe.Msg, "line longer than 64 MiB") {
		t.Errorf("got %v", err)
	}
}

// zeros reads n bytes '0'.
type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), z.n)
	for i := range k {
		p[i] = '0'
	}
	z.n -= k
	return k, nil
}

// A state id far beyond the data's size is refused (ids index dense
// arrays), naming its row and column.
func TestHugeStateID(t *testing.T) {
	in := "episode,t,state,action,reward,behavior_prob,target_prob\na,0,0,0,1,0.5,0.5\na,1,300000000,0,1,0.5,0.5\n"
	_, err := logio.ReadCSV(strings.NewReader(in), "h.csv")
	var fe *logio.FormatError
	if !errors.As(err, &fe) || fe.Row != 3 || fe.Column != "state" {
		t.Fatalf("got %v", err)
	}
}
