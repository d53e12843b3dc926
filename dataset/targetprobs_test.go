package dataset_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/policy"
)

// csvToParquet writes the rows of a CSV log as Parquet, as another program
// would: every column an optional DOUBLE (episode and other textColumns
// an optional string), an
// empty field a null. Parquet orders the columns by name. Its rows are
// the CSV rows less one (Parquet has no header row).
func csvToParquet(t testing.TB, in string) []byte {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(in)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	names := recs[0]
	g := parquet.Group{}
	for _, name := range names {
		if textColumns[name] {
			g[name] = parquet.Optional(parquet.String())
		} else {
			g[name] = parquet.Optional(parquet.Leaf(parquet.DoubleType))
		}
	}
	schema := parquet.NewSchema("log", g)
	index := map[string]int{}
	for i, path := range schema.Columns() {
		index[path[0]] = i
	}
	var rows []parquet.Row
	for _, rec := range recs[1:] {
		row := make(parquet.Row, len(names))
		for j, f := range rec {
			col := index[names[j]]
			switch {
			case f == "":
				row[col] = parquet.NullValue().Level(0, 0, col)
			case textColumns[names[j]]:
				row[col] = parquet.ByteArrayValue([]byte(f)).Level(0, 1, col)
			default:
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					t.Fatal(err)
				}
				row[col] = parquet.DoubleValue(v).Level(0, 1, col)
			}
		}
		rows = append(rows, row)
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema)
	if _, err := w.WriteRows(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// textColumns are the columns csvToParquet writes as strings.
var textColumns = map[string]bool{"episode": true, "trajectory_id": true, "user_id": true}

// readBoth reads a CSV log as CSV and, converted, as Parquet.
func readBoth(t *testing.T, in string) (fromCSV, fromParquet *dataset.Dataset, csvErr, pqErr error) {
	t.Helper()
	fromCSV, csvErr = logio.ReadCSV(strings.NewReader(in), "test.csv")
	b := csvToParquet(t, in)
	fromParquet, pqErr = logio.ReadParquet(bytes.NewReader(b), int64(len(b)), "test.parquet")
	return fromCSV, fromParquet, csvErr, pqErr
}

const (
	// tpHdr is a log with the target's whole distribution over 3 actions
	// and no target_prob column; tpRow0 and tpRow1 are good rows of one
	// episode.
	tpHdr  = "episode,t,state,action,reward,behavior_prob,target_prob_0,target_prob_1,target_prob_2\n"
	tpRow0 = "a,0,0,1,1,0.5,0.2,0.8,0\n"
	tpRow1 = "a,1,1,0,1,0.5,0.3,0.3,0.4\n"
	// tpNextHdr adds next_state and next_target_prob_k; tpNext0 and
	// tpNext1 are good rows, the last one with a next state.
	tpNextHdr = "episode,t,state,action,reward,behavior_prob,target_prob_0,target_prob_1,target_prob_2," +
		"next_state,next_target_prob_0,next_target_prob_1,next_target_prob_2\n"
	tpNext0 = "a,0,0,1,1,0.5,0.2,0.8,0,,,,\n"
	tpNext1 = "a,1,1,0,1,0.5,0.3,0.3,0.4,2,1,0,0\n"
	// tpScalarHdr gives target_prob as well.
	tpScalarHdr = "episode,t,state,action,reward,behavior_prob,target_prob,target_prob_0,target_prob_1,target_prob_2\n"
)

// TestTargetProbsMalformed refuses every bad use of the target_prob_k and
// next_target_prob_k columns, in CSV and in Parquet, naming the row and
// the column.
func TestTargetProbsMalformed(t *testing.T) {
	for i, c := range []struct {
		name, in string
		row      int // CSV row; the Parquet row is row - 1
		col, msg string
	}{
		// Values.
		{"above 1", tpHdr + "a,0,0,1,1,0.5,0.2,1.5,0\n", 2, "target_prob_1", "1.5 is outside [0, 1]"},
		{"negative", tpHdr + tpRow0 + "a,1,1,0,1,0.5,0.3,0.8,-0.1\n", 3, "target_prob_2", "-0.1 is outside [0, 1]"},
		{"NaN", tpHdr + "a,0,0,1,1,0.5,NaN,0.8,0\n", 2, "target_prob_0", "NaN is not allowed"},
		{"Inf", tpHdr + "a,0,0,1,1,0.5,Inf,0.8,0\n", 2, "target_prob_0", "+Inf is not allowed"},
		{"missing on one row", tpHdr + tpRow0 + "a,1,1,0,1,0.5,0.3,,0.4\n", 3, "target_prob_1", "empty value"},
		{"sum below 1", tpHdr + "a,0,0,1,1,0.5,0.2,0.7,0\n", 2, "target_prob_0", "target_prob_0 ... target_prob_2 sum to 0.9"},
		{"sum above 1 beyond 1e-6", tpHdr + tpRow0 + "a,1,1,0,1,0.5,0.3,0.3,0.4000011\n", 3, "target_prob_0", "sum to 1.0000011"},
		{"action beyond K", tpHdr + tpRow0 + "a,1,1,3,1,0.5,0.3,0.3,0.4\n", 3, "action",
			"action 3 has no target probability: the log gives target_prob_0 ... target_prob_2 (K = 3)"},
		{"target_prob disagrees", tpScalarHdr + "a,0,0,1,1,0.5,0.7999,0.2,0.8,0\n", 2, "target_prob",
			"target_prob 0.7999 disagrees with target_prob_1 = 0.8, the target probability of the logged action 1"},
		{"target_prob 0 disagrees", tpScalarHdr + "a,0,0,2,1,0.5,0,0.2,0.7,0.1\n", 2, "target_prob",
			"target_prob 0 disagrees with target_prob_2 = 0.1"},
		{"target_logprob disagrees", strings.Replace(tpScalarHdr, "target_prob,", "target_logprob,", 1) + "a,0,0,1,1,0.5,-Inf,0.2,0.8,0\n", 2,
			"target_logprob", "target_logprob -Inf (probability 0) disagrees with target_prob_1 = 0.8"},

		// Columns.
		{"no target column", "episode,t,state,action,reward,behavior_prob\n", 1, "target_prob", "required column is missing"},
		{"vector actions", "episode,t,state,action_0,reward,behavior_prob,target_prob,target_prob_0,target_prob_1\n", 1, "target_prob_0",
			"the actions are vectors (action_0)"},
		{"next_target_prob with vector actions", "episode,t,state,action_0,action_1,reward,behavior_prob,target_prob,next_state,next_target_prob_0\n", 1,
			"next_target_prob_0", "the actions are vectors (action_0 ... action_1)"},
		{"gap", "episode,t,state,action,reward,behavior_prob,target_prob_0,target_prob_2\n", 1, "target_prob_1", "target_prob_2 is present"},
		{"next_target_prob without target_prob_k", "episode,t,state,action,reward,behavior_prob,target_prob,next_state,next_target_prob_0\n", 1,
			"next_target_prob_0", "needs the target_prob_k columns"},
		{"too few next_target_prob", strings.TrimSuffix(tpHdr, "\n") + ",next_state,next_target_prob_0,next_target_prob_1\n", 1,
			"next_target_prob_2", "column is missing: there are 3 target_prob_k columns"},
		{"too many next_target_prob", strings.TrimSuffix(tpNextHdr, "\n") + ",next_target_prob_3\n", 1,
			"next_target_prob_3", "there are only 3 target_prob_k columns"},
		{"next_target_prob without next_state", strings.TrimSuffix(tpHdr, "\n") + ",next_target_prob_0,next_target_prob_1,next_target_prob_2\n", 1,
			"next_target_prob_0", "needs the next_state column"},

		// next_target_prob_k rows.
		{"next_target_prob on an inner row", tpNextHdr + "a,0,0,1,1,0.5,0.2,0.8,0,1,0.3,0.3,0.4\n" + tpNext1, 2, "next_target_prob_0",
			`given on a row that is not the last of episode "a" (t = 1 follows on row `},
		{"next_target_prob on an inner row, shuffled", tpNextHdr + tpNext1 + "a,0,0,1,1,0.5,0.2,0.8,0,1,1,0,0\n", 3, "next_target_prob_0",
			`not the last of episode "a" (t = 1 follows on row `},
		{"next_target_prob partial", tpNextHdr + tpNext0 + "a,1,1,0,1,0.5,0.3,0.3,0.4,2,1,,0\n", 3, "next_target_prob_1", "give all or none"},
		{"next_target_prob without a next state", tpNextHdr + tpNext0 + "a,1,1,0,1,0.5,0.3,0.3,0.4,,1,0,0\n", 3, "next_target_prob_0",
			"given, but the row gives no next state"},
		{"next_target_prob sum", tpNextHdr + tpNext0 + "a,1,1,0,1,0.5,0.3,0.3,0.4,2,0.5,0,0\n", 3, "next_target_prob_0",
			"next_target_prob_0 ... next_target_prob_2 sum to 0.5"},
		{"next_target_prob above 1", tpNextHdr + tpNext0 + "a,1,1,0,1,0.5,0.3,0.3,0.4,2,1.5,-0.5,0\n", 3, "next_target_prob_0", "1.5 is outside [0, 1]"},
		{"next_target_prob NaN", tpNextHdr + tpNext0 + "a,1,1,0,1,0.5,0.3,0.3,0.4,2,1,0,NaN\n", 3, "next_target_prob_2", "NaN is not allowed"},
	} {
		_, _, csvErr, pqErr := readBoth(t, c.in)
		for _, r := range []struct {
			err  error
			file string
			row  int
		}{{csvErr, "test.csv", c.row}, {pqErr, "test.parquet", c.row - 1}} {
			var fe *logio.FormatError
			if !errors.As(r.err, &fe) {
				t.Errorf("%d %s (%s): error %v, want a *FormatError", i, c.name, r.file, r.err)
				continue
			}
			if fe.File != r.file || fe.Row != r.row || fe.Column != c.col || !strings.Contains(fe.Msg, c.msg) {
				t.Errorf("%d %s: got %#v\nwant row %d, column %q, message with %q", i, c.name, *fe, r.row, c.col, c.msg)
			}
		}
	}
}

// TestReadTargetProbs reads logs with the target's whole distribution,
// as CSV and as Parquet, against datasets built in code.
func TestReadTargetProbs(t *testing.T) {
	inf := math.Inf(-1)
	for i, c := range []struct {
		name, in string
		want     *dataset.Dataset
	}{
		{
			// No target_prob column: LogTarget is log target_prob_{a_t}
			// (-Inf for 0). K = 4 exceeds 1 + the largest action id (2):
			// NumActions = 4. next_target_prob_k on the last row of "a",
			// which has a next state; "b" has neither.
			"discrete states",
			"episode,t,state,action,reward,behavior_prob,target_prob_0,target_prob_1,target_prob_2,target_prob_3," +
				"next_state,next_target_prob_0,next_target_prob_1,next_target_prob_2,next_target_prob_3\n" +
				"a,0,0,2,1,0.5,0.1,0.2,0.7,0,,,,,\n" +
				"b,0,2,1,0,1,1,0,0,0,,,,,\n" +
				"a,1,1,0,-1,0.25,0,0.5,0.5,0,3,0.25,0.25,0.25,0.25\n",
			mustNew(t, 4, 4, []dataset.Episode{
				{ID: "a", Steps: []dataset.Step{
					{State: 0, Action: 2, Reward: 1, HasNext: true, NextState: 1, LogBehavior: math.Log(0.5), LogTarget: math.Log(0.7),
						TargetProbs: []float64{0.1, 0.2, 0.7, 0}},
					{State: 1, Action: 0, Reward: -1, HasNext: true, NextState: 3, LogBehavior: math.Log(0.25), LogTarget: inf,
						TargetProbs: []float64{0, 0.5, 0.5, 0}, NextTargetProbs: []float64{0.25, 0.25, 0.25, 0.25}},
				}},
				{ID: "b", Steps: []dataset.Step{
					{State: 2, Action: 1, Reward: 0, NextState: -1, LogBehavior: 0, LogTarget: inf, TargetProbs: []float64{1, 0, 0, 0}},
				}},
			}),
		},
		{
			// Real states, discrete actions; target_prob within 1e-6 of
			// target_prob_{a_t} is kept as LogTarget (the log's value
			// wins); a final state without next_target_prob_k.
			"vector states",
			"episode,t,state_0,state_1,action,reward,behavior_prob,target_prob,target_prob_0,target_prob_1," +
				"next_state_0,next_state_1,next_target_prob_0,next_target_prob_1\n" +
				"e,0,0.5,-1,1,2,0.5,0.7000005,0.3,0.7,,,,\n" +
				"e,1,1.5,2,0,3,0.5,0.3,0.3,0.7,4,5,0.5,0.5\n" +
				"f,0,0,0,0,1,1,0.9999995,1,0,1,1,,\n",
			mustNew(t, 0, 2, []dataset.Episode{
				{ID: "e", Steps: []dataset.Step{
					{State: -1, Obs: []float64{0.5, -1}, Action: 1, Reward: 2, HasNext: true, NextState: -1, NextObs: []float64{1.5, 2},
						LogBehavior: math.Log(0.5), LogTarget: math.Log(0.7000005), TargetProbs: []float64{0.3, 0.7}},
					{State: -1, Obs: []float64{1.5, 2}, Action: 0, Reward: 3, HasNext: true, NextState: -1, NextObs: []float64{4, 5},
						LogBehavior: math.Log(0.5), LogTarget: math.Log(0.3), TargetProbs: []float64{0.3, 0.7}, NextTargetProbs: []float64{0.5, 0.5}},
				}},
				{ID: "f", Steps: []dataset.Step{
					{State: -1, Obs: []float64{0, 0}, Action: 0, Reward: 1, HasNext: true, NextState: -1, NextObs: []float64{1, 1},
						LogBehavior: 0, LogTarget: math.Log(0.9999995), TargetProbs: []float64{1, 0}},
				}},
			}),
		},
	} {
		fromCSV, fromParquet, csvErr, pqErr := readBoth(t, c.in)
		if csvErr != nil || pqErr != nil {
			t.Errorf("%d %s: %v; %v", i, c.name, csvErr, pqErr)
			continue
		}
		if !reflect.DeepEqual(fromCSV, c.want) {
			t.Errorf("%d %s: CSV:\n got %+v\nwant %+v", i, c.name, fromCSV, c.want)
		}
		if !reflect.DeepEqual(fromParquet, c.want) {
			t.Errorf("%d %s: Parquet:\n got %+v\nwant %+v", i, c.name, fromParquet, c.want)
		}
	}
}

// withTargetProbs returns datasets that carry the target's whole
// distribution: sampled discrete logs filled by SetTargetPolicy (every
// final known), and real states with discrete actions built in code (K =
// 4 for actions 0..2, some finals unknown, some known without
// next_target_prob).
func withTargetProbs(t testing.TB) map[string]*dataset.Dataset {
	t.Helper()
	disc := sampled(t, 20, 15)
	p, err := policy.NewTabular(tinyTarget)
	if err != nil {
		t.Fatal(err)
	}
	if err := disc.SetTargetPolicy(p); err != nil {
		t.Fatal(err)
	}
	rows := [][]float64{{0.25, 0.25, 0.5, 0}, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0}, {0, 0.1, 0.9, 0}, {0.1 + 0.2, 0.7, 0, 0}}
	var eps []dataset.Episode
	for e := range 6 {
		ep := dataset.Episode{ID: "ep" + strconv.Itoa(e)}
		T := 2 + e
		for s := range T {
			row := rows[(e+s)%len(rows)]
			a := (e * s) % 3
			st := dataset.Step{State: -1, Obs: []float64{float64(s), 1.0 / float64(e+1)}, Action: a, Reward: float64(e - s),
				HasNext: s < T-1 || e%3 != 0, NextState: -1, NextObs: []float64{float64(s + 1), 1.0 / float64(e+1)},
				LogBehavior: -1, LogTarget: math.Log(row[a]), TargetProbs: row}
			if s == T-1 && e%3 == 1 {
				st.NextTargetProbs = rows[(e+s+1)%len(rows)]
			}
			if !st.HasNext {
				st.NextObs = nil
			}
			ep.Steps = append(ep.Steps, st)
		}
		eps = append(eps, ep)
	}
	vec := mustNew(t, 0, 4, eps)
	mixed := slices.Index(vec.HasFinalTarget, true) >= 0 && slices.Index(vec.HasFinalTarget, false) >= 0
	if !mixed {
		t.Fatalf("HasFinalTarget %v: want some of each", vec.HasFinalTarget)
	}
	return map[string]*dataset.Dataset{"discrete": disc, "vector states": vec}
}

func TestTargetProbsRoundTrip(t *testing.T) {
	for name, d := range withTargetProbs(t) {
		if err := d.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := readCSV(t, writeCSV(t, d)); !reflect.DeepEqual(got, d) {
			t.Errorf("%s: CSV round trip differs:\n got %+v\nwant %+v", name, got.Episode(0), d.Episode(0))
		}
		if got := readParquet(t, writeParquet(t, d)); !reflect.DeepEqual(got, d) {
			t.Errorf("%s: Parquet round trip differs:\n got %+v\nwant %+v", name, got.Episode(0), d.Episode(0))
		}
		// Row form and back (Episodes sets NextTargetProbs on every step
		// whose next row is known; the Builder checks them).
		if got := mustNew(t, d.NumStates, d.NumActions, d.Episodes()); !reflect.DeepEqual(got, d) {
			t.Errorf("%s: row-form round trip differs", name)
		}
	}
	// The header the writers use.
	d := withTargetProbs(t)["vector states"]
	header, _, _ := strings.Cut(string(writeCSV(t, d)), "\n")
	want := "episode,t,state_0,state_1,action,reward,behavior_logprob,target_logprob,target_prob_0,target_prob_1,target_prob_2,target_prob_3," +
		"next_state_0,next_state_1,next_target_prob_0,next_target_prob_1,next_target_prob_2,next_target_prob_3"
	if header != want {
		t.Errorf("header\n%s\nwant\n%s", header, want)
	}
}

// policyChain returns a one-episode discrete log "run" through the states
// 0, ..., 5 (action j mod 2, as chain) with the target pi(.|s) =
// (s+1)/10, 1 - (s+1)/10 filled by SetTargetPolicy; the state after its
// last step is 6 if final is set.
func policyChain(t *testing.T, final bool) *dataset.Dataset {
	t.Helper()
	table := make([][]float64, 7)
	for s := range table {
		q := float64(s+1) / 10
		table[s] = []float64{q, 1 - q}
	}
	p, err := policy.NewTabular(table)
	if err != nil {
		t.Fatal(err)
	}
	ep := dataset.Episode{ID: "run"}
	for j := range 6 {
		ep.Steps = append(ep.Steps, dataset.Step{State: j, Action: j % 2, Reward: float64(j),
			HasNext: j < 5 || final, NextState: j + 1, LogBehavior: math.Log(0.5), LogTarget: math.Log(p.Prob(j, j%2))})
	}
	if !final {
		ep.Steps[5].NextState = -1
	}
	d := mustNew(t, 7, 2, []dataset.Episode{ep})
	if err := d.SetTargetPolicy(p); err != nil {
		t.Fatal(err)
	}
	return d
}

// piOf returns pi(.|s) of policyChain.
func piOf(s int) []float64 {
	q := float64(s+1) / 10
	return []float64{q, 1 - q}
}

// TestTargetProbsDerived checks that Head, Subset and Blocks carry the
// target's distribution with the steps, and their final rows.
func TestTargetProbsDerived(t *testing.T) {
	// rowsFollowStates checks TargetProbsAt against the states, and
	// NextTargetProbs against NextState, of every step of d.
	rowsFollowStates := func(name string, d *dataset.Dataset, blockEnds map[int]bool) {
		t.Helper()
		if err := d.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for e := range d.NumEpisodes() {
			lo, hi := d.Span(e)
			for j := lo; j < hi; j++ {
				if got, want := d.TargetProbsAt(j), piOf(int(d.State[j])); !slices.Equal(got, want) {
					t.Errorf("%s: step %d in state %d: TargetProbsAt %v, want %v", name, j, d.State[j], got, want)
				}
				got, ok := d.NextTargetProbs(e, j)
				ns, known := d.NextState(e, j)
				wantOK := known && !blockEnds[j]
				if j == hi-1 {
					wantOK = d.HasFinalTarget[e]
				}
				if ok != wantOK || (ok && !slices.Equal(got, piOf(ns))) {
					t.Errorf("%s: step %d: NextTargetProbs %v (%v), want pi at state %d (%v)", name, j, got, ok, ns, wantOK)
				}
				st := d.Step(e, j)
				if !slices.Equal(st.TargetProbs, d.TargetProbsAt(j)) || !slices.Equal(st.NextTargetProbs, got) {
					t.Errorf("%s: step %d: row form %v, %v", name, j, st.TargetProbs, st.NextTargetProbs)
				}
			}
		}
	}
	d := policyChain(t, true)
	open := policyChain(t, false)
	orig := d.Clone()
	if !reflect.DeepEqual(orig.TargetProbs, d.TargetProbs) || &orig.TargetProbs[0] == &d.TargetProbs[0] {
		t.Fatal("Clone does not copy TargetProbs")
	}
	rowsFollowStates("chain", d, nil)
	if !d.HasFinalTarget[0] || open.HasFinalTarget[0] {
		t.Fatalf("HasFinalTarget %v (final known), %v (unknown)", d.HasFinalTarget, open.HasFinalTarget)
	}

	// Head: a cut episode's final row is the row of its step T.
	h := d.Head(1, 3)
	rowsFollowStates("Head(1, 3)", h, nil)
	if f, ok := h.NextTargetProbs(0, 2); !ok || !slices.Equal(f, piOf(3)) || !slices.Equal(h.FinalTargetProbs, piOf(3)) {
		t.Errorf("Head(1, 3): final row %v (%v), want %v", f, ok, piOf(3))
	}
	// An episode kept whole keeps its own final row, or none.
	if h := open.Head(1, 10); h.HasFinalTarget[0] || !slices.Equal(h.FinalTargetProbs, []float64{0, 0}) {
		t.Errorf("Head of an open episode: %v, %v", h.HasFinalTarget, h.FinalTargetProbs)
	}
	if h := d.Head(1, 10); !reflect.DeepEqual(h, d) {
		t.Errorf("Head(1, 10) is not the whole log")
	}

	// Subset: episodes with their rows, repeated.
	two := d.Subset([]int{0, 0})
	two.IDs[1] = "again" // Validate wants unique ids
	rowsFollowStates("Subset", two, nil)
	if !slices.Equal(two.HasFinalTarget, []bool{true, true}) || len(two.TargetProbs) != 2*len(d.TargetProbs) {
		t.Errorf("Subset: HasFinalTarget %v, %d target probabilities", two.HasFinalTarget, len(two.TargetProbs))
	}
	if s := d.Subset(nil); !s.HasTargetProbs() || s.NumSteps() != 0 || s.Validate() != nil {
		t.Errorf("empty Subset: %+v", s)
	}

	// Blocks: block ends have no next row; the final row is that of the
	// last block's logged next state.
	for i, c := range []struct {
		starts, lens []int
		ends         map[int]bool // block ends among the result's steps
		final        []float64
	}{
		{[]int{3, 0, 4}, []int{2, 2, 2}, map[int]bool{1: true, 3: true}, piOf(6)},
		{[]int{4, 0}, []int{2, 1}, map[int]bool{1: true}, piOf(1)},
	} {
		b := d.Blocks(c.starts, c.lens)
		rowsFollowStates("Blocks "+strconv.Itoa(i), b, c.ends)
		if !b.HasFinalTarget[0] || !slices.Equal(b.FinalTargetProbs, c.final) {
			t.Errorf("Blocks %d: final row %v (%v), want %v", i, b.FinalTargetProbs, b.HasFinalTarget[0], c.final)
		}
	}
	if b := open.Blocks([]int{2}, []int{4}); b.HasFinalTarget[0] {
		t.Errorf("Blocks ending where the log has no final state: HasFinalTarget")
	}
	if !reflect.DeepEqual(d, orig) {
		t.Error("deriving datasets changed d")
	}
}

// TestValidateTargetProbs breaks the target's distribution of a good
// dataset one way at a time; the writers refuse it likewise.
func TestValidateTargetProbs(t *testing.T) {
	for i, c := range []struct {
		name   string
		break_ func(d *dataset.Dataset)
		msg    string
	}{
		{"short TargetProbs", func(d *dataset.Dataset) { d.TargetProbs = d.TargetProbs[:11] }, "column TargetProbs has 11 entries, want 12"},
		{"short HasFinalTarget", func(d *dataset.Dataset) { d.HasFinalTarget = nil }, "column HasFinalTarget has 0 entries, want 1"},
		{"finals without TargetProbs", func(d *dataset.Dataset) { d.TargetProbs = nil }, "column FinalTargetProbs (without TargetProbs) has 2 entries, want 0"},
		{"above 1", func(d *dataset.Dataset) { d.TargetProbs[3] = 1.5 }, `episode "run", step 1: TargetProbs: probability of action 1: 1.5 is outside [0, 1]`},
		{"NaN", func(d *dataset.Dataset) { d.TargetProbs[0] = math.NaN() }, "probability of action 0: NaN is not allowed"},
		{"sum", func(d *dataset.Dataset) { d.TargetProbs[4] += 0.01; d.LogTarget[2] = math.Log(d.TargetProbs[4]) }, "step 2: TargetProbs: probabilities sum to"},
		{"disagrees with LogTarget", func(d *dataset.Dataset) { d.LogTarget[5] = math.Inf(-1) }, "step 5: LogTarget -Inf (probability 0) disagrees with TargetProbs[1] = 0.4"},
		{"final without next state", func(d *dataset.Dataset) { d.HasFinal[0] = false }, "HasFinalTarget is set but the next state is unknown"},
		{"final sum", func(d *dataset.Dataset) { d.FinalTargetProbs[0] = 0.5 }, "FinalTargetProbs: probabilities sum to 0.8"},
		{"unknown final not zero", func(d *dataset.Dataset) { d.HasFinalTarget[0] = false }, "FinalTargetProbs[0] is 0.7 but HasFinalTarget is false"},
	} {
		d := policyChain(t, true)
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
	v := continuous(t)
	v.TargetProbs = []float64{}
	if err := v.Validate(); err == nil || !strings.Contains(err.Error(), "TargetProbs is set but the actions are vectors") {
		t.Errorf("TargetProbs with vector actions: %v", err)
	}
}

// TestBuilderTargetProbs refuses steps in row form that carry the
// target's distribution on some steps only or disagree with themselves.
func TestBuilderTargetProbs(t *testing.T) {
	good := func() []dataset.Episode {
		return []dataset.Episode{
			{ID: "a", Steps: []dataset.Step{
				{State: 0, Action: 1, HasNext: true, NextState: 2, LogTarget: math.Log(0.75), TargetProbs: []float64{0.25, 0.75}},
				{State: 2, Action: 0, HasNext: true, NextState: 1, LogTarget: math.Log(0.5), TargetProbs: []float64{0.5, 0.5},
					NextTargetProbs: []float64{1, 0}},
			}},
			{ID: "b", Steps: []dataset.Step{
				{State: 1, Action: 0, NextState: -1, LogTarget: 0, TargetProbs: []float64{1, 0}},
			}},
		}
	}
	d := mustNew(t, 3, 2, good())
	if !slices.Equal(d.TargetProbs, []float64{0.25, 0.75, 0.5, 0.5, 1, 0}) || !slices.Equal(d.HasFinalTarget, []bool{true, false}) ||
		!slices.Equal(d.FinalTargetProbs, []float64{1, 0, 0, 0}) {
		t.Fatalf("built %v, %v, %v", d.TargetProbs, d.HasFinalTarget, d.FinalTargetProbs)
	}
	if d := mustNew(t, 3, 2, nil); d.TargetProbs != nil || d.HasFinalTarget != nil || d.FinalTargetProbs != nil {
		t.Errorf("no steps: %+v", d)
	}
	for i, c := range []struct {
		name   string
		break_ func(eps []dataset.Episode)
		msg    string
	}{
		{"missing on one step", func(eps []dataset.Episode) { eps[1].Steps[0].TargetProbs = nil },
			"episode 1, step 0: no TargetProbs, but earlier steps have them"},
		{"missing on the first step", func(eps []dataset.Episode) { eps[0].Steps[0].TargetProbs = nil },
			"episode 0, step 1: TargetProbs given, but earlier steps have none"},
		{"wrong length", func(eps []dataset.Episode) { eps[0].Steps[1].TargetProbs = []float64{0.5, 0.5, 0} },
			"episode 0, step 1: TargetProbs of length 3, want NumActions = 2"},
		{"inner NextTargetProbs disagree", func(eps []dataset.Episode) { eps[0].Steps[0].NextTargetProbs = []float64{0.5, 0.25} },
			"episode 0, step 0: NextTargetProbs[1] is 0.25 but the TargetProbs of step 1 have 0.5"},
		{"NextTargetProbs without a next state", func(eps []dataset.Episode) {
			eps[1].Steps[0].NextTargetProbs = []float64{1, 0}
		}, "episode 1, step 0: NextTargetProbs given, but HasNext is false"},
		{"NextTargetProbs without TargetProbs", func(eps []dataset.Episode) {
			for _, ep := range eps {
				for k := range ep.Steps {
					ep.Steps[k].TargetProbs = nil
				}
			}
		}, "episode 0, step 1: NextTargetProbs given without TargetProbs"},
		{"final row sum", func(eps []dataset.Episode) { eps[0].Steps[1].NextTargetProbs = []float64{1, 1} },
			`episode "a", step 1: FinalTargetProbs: probabilities sum to 2`},
		{"LogTarget disagrees", func(eps []dataset.Episode) { eps[0].Steps[0].LogTarget = math.Log(0.25) },
			`episode "a", step 0: LogTarget -1.38`},
	} {
		eps := good()
		c.break_(eps)
		if d, err := dataset.New(3, 2, eps); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%d %s: %v (dataset %v), want an error with %q", i, c.name, err, d != nil, c.msg)
		}
	}
}

// TestBuilderTargetProbsVectorActions refuses TargetProbs with real
// actions.
func TestBuilderTargetProbsVectorActions(t *testing.T) {
	eps := continuous(t).Episodes()
	for _, ep := range eps {
		for k := range ep.Steps {
			ep.Steps[k].TargetProbs = []float64{}
		}
	}
	if _, err := dataset.New(0, 0, eps); err == nil || !strings.Contains(err.Error(), "episode 0, step 0: TargetProbs given, but the actions are vectors") {
		t.Errorf("got %v", err)
	}
}

// probTable is a policy given by rows, which need not sum to 1.
type probTable [][]float64

func (p probTable) NumStates() int        { return len(p) }
func (p probTable) NumActions() int       { return len(p[0]) }
func (p probTable) Prob(s, a int) float64 { return p[s][a] }

func TestSetTargetPolicy(t *testing.T) {
	// Fills pi(.|s_j) and pi(.|s') and keeps LogTarget (sampled logged it
	// from the same policy).
	d := sampled(t, 20, 15)
	before := d.Clone()
	p, err := policy.NewTabular(tinyTarget)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetTargetPolicy(p); err != nil {
		t.Fatal(err)
	}
	if d.NumActions != 3 || !slices.Equal(d.LogTarget, before.LogTarget) || !slices.Equal(d.HasFinalTarget, d.HasFinal) {
		t.Errorf("NumActions %d, LogTarget kept %v, HasFinalTarget %v", d.NumActions, slices.Equal(d.LogTarget, before.LogTarget), d.HasFinalTarget)
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if !slices.Equal(d.TargetProbsAt(j), tinyTarget[d.State[j]]) {
				t.Fatalf("step %d: %v, want %v", j, d.TargetProbsAt(j), tinyTarget[d.State[j]])
			}
		}
		if f, ok := d.NextTargetProbs(e, hi-1); !ok || !slices.Equal(f, tinyTarget[d.FinalState[e]]) {
			t.Fatalf("episode %d: final row %v (%v)", e, f, ok)
		}
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}

	// Replaces the log's target_prob_k; NumActions becomes the larger of
	// the log's and the policy's, actions the policy lacks get 0.
	in := tpNextHdr + tpNext0 + tpNext1
	logged := readCSV(t, []byte(in))
	wide := probTable{{0.1, 0.8, 0, 0.1}, {0.3, 0.3, 0.2, 0.2}, {0, 0, 0, 1}}
	narrow := probTable{{0.2, 0.8}, {0.3, 0.7}, {0.5, 0.5}}
	w := logged.Clone()
	if err := w.SetTargetPolicy(wide); err != nil {
		t.Fatal(err)
	}
	if w.NumActions != 4 || !slices.Equal(w.TargetProbsAt(1), wide[1]) || !slices.Equal(w.FinalTargetProbs, wide[2]) || w.Validate() != nil {
		t.Errorf("wider policy: %d actions, %v, final %v, %v", w.NumActions, w.TargetProbs, w.FinalTargetProbs, w.Validate())
	}
	n := logged.Clone()
	if err := n.SetTargetPolicy(narrow); err != nil {
		t.Fatal(err)
	}
	if n.NumActions != 3 || !slices.Equal(n.TargetProbs, []float64{0.2, 0.8, 0, 0.3, 0.7, 0}) || !slices.Equal(n.FinalTargetProbs, []float64{0.5, 0.5, 0}) {
		t.Errorf("narrower policy: %d actions, %v, final %v", n.NumActions, n.TargetProbs, n.FinalTargetProbs)
	}
	if got := readCSV(t, writeCSV(t, n)); !reflect.DeepEqual(got, n) {
		t.Error("CSV round trip after SetTargetPolicy differs")
	}

	// Refusals leave d unchanged.
	for i, c := range []struct {
		name string
		d    *dataset.Dataset
		p    probTable
		msg  string
	}{
		{"disagrees", logged, probTable{{0.2, 0.7, 0.1}, {0.3, 0.3, 0.4}, {1, 0, 0}},
			`dataset: episode "a", t = 0: the target policy file says pi(1|0) = 0.7 but the log's target_prob says 0.8 (they must agree within 1e-6)`},
		{"uncovered state", logged, probTable{{0.2, 0.8, 0}, {0.3, 0.3, 0.4}},
			`dataset: the target policy has 2 states (ids 0 ... 1) but the log has state id 2 (the next state of episode "a", t = 1)`},
		{"uncovered inner state", sampled(t, 2, 3), probTable{{1, 0, 0}},
			"the target policy has 1 states (ids 0 ... 0) but the log has state id 3 (episode"},
		{"uncovered action", sampled(t, 20, 15), probTable{{0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}},
			`the target policy has 2 actions (ids 0 ... 1) but the log has action id 2`},
		{"not a distribution", logged, probTable{{0.2, 0.8, 0}, {0.3, 0.3, 0.3}, {1, 0, 0}},
			"dataset: the target policy at state 1: probabilities sum to 0.9"},
		{"vector states", continuous(t), probTable{{1}}, "SetTargetPolicy needs discrete states and actions"},
	} {
		d := c.d.Clone()
		err := d.SetTargetPolicy(c.p)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%d %s: %v, want an error with %q", i, c.name, err, c.msg)
		}
		if !reflect.DeepEqual(d, c.d) {
			t.Errorf("%d %s: the refused call changed the dataset", i, c.name)
		}
		// CheckTargetPolicy refuses the same, in the same words.
		if err2 := d.CheckTargetPolicy(c.p); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%d %s: CheckTargetPolicy %v, SetTargetPolicy %v", i, c.name, err2, err)
		}
	}
	// and accepts what SetTargetPolicy accepts, changing nothing.
	c := logged.Clone()
	if err := c.CheckTargetPolicy(wide); err != nil || !reflect.DeepEqual(c, logged) {
		t.Errorf("CheckTargetPolicy of an agreeing policy: %v, dataset changed %v", err, !reflect.DeepEqual(c, logged))
	}
}

// A log without target columns, read with ReadOptions.Target, has the
// policy's probabilities: those of the same log with a target_prob
// column that agrees, after SetTargetPolicy. Without Target it is
// refused; a state the policy does not cover is named.
func TestReadTargetFromPolicy(t *testing.T) {
	p := probTable{{0.2, 0.8}, {0.7, 0.3}, {0.5, 0.5}}
	bare := "episode,t,state,action,reward,behavior_prob\na,0,0,1,1,0.5\na,1,2,0,0,0.5\nb,0,1,0,2,0.4\nb,1,1,1,1,0.6\n"
	with := "episode,t,state,action,reward,behavior_prob,target_prob\na,0,0,1,1,0.5,0.8\na,1,2,0,0,0.5,0.5\nb,0,1,0,2,0.4,0.7\nb,1,1,1,1,0.6,0.3\n"
	got, _, err := logio.Read(strings.NewReader(bare), "bare.csv", logio.ReadOptions{Format: logio.CSV, Target: p})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := logio.Read(strings.NewReader(with), "with.csv", logio.ReadOptions{Format: logio.CSV})
	if err != nil {
		t.Fatal(err)
	}
	if err := want.SetTargetPolicy(p); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.LogTarget, want.LogTarget) || !reflect.DeepEqual(got.TargetProbs, want.TargetProbs) {
		t.Errorf("LogTarget %v, TargetProbs %v; want %v, %v", got.LogTarget, got.TargetProbs, want.LogTarget, want.TargetProbs)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
	// The file's own column wins over Target (checked later by SetTargetPolicy).
	own, _, err := logio.Read(strings.NewReader(with), "with.csv", logio.ReadOptions{Format: logio.CSV, Target: probTable{{1, 0}, {1, 0}, {1, 0}}})
	if err != nil || own.TargetProbs != nil || !reflect.DeepEqual(own.LogTarget, want.LogTarget) {
		t.Errorf("a file with target_prob read with Target: %v, TargetProbs %v", err, own.TargetProbs)
	}
	if _, _, err := logio.Read(strings.NewReader(bare), "bare.csv", logio.ReadOptions{Format: logio.CSV}); err == nil || !strings.Contains(err.Error(), `column "target_prob": required column is missing`) {
		t.Errorf("without Target: %v", err)
	}
	small := probTable{{0.2, 0.8}, {0.7, 0.3}}
	if _, _, err := logio.Read(strings.NewReader(bare), "bare.csv", logio.ReadOptions{Format: logio.CSV, Target: small}); err == nil ||
		!strings.Contains(err.Error(), "bare.csv") || !strings.Contains(err.Error(), `state id 2 (episode "a", t = 1)`) {
		t.Errorf("a state beyond the policy: %v", err)
	}
}
