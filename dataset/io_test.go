package dataset_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// mustNew builds a dataset from episodes in row form (dataset.New).
func mustNew(t testing.TB, numStates, numActions int, episodes []dataset.Episode) *dataset.Dataset {
	t.Helper()
	d, err := dataset.New(numStates, numActions, episodes)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// tiny is a 4-state, 3-action MDP: action a moves s to (s+a) mod 4 with
// probability 0.7 and to (s+1) mod 4 otherwise.
type tiny struct{ out [4][3][]mdp.Outcome }

func newTiny() *tiny {
	m := &tiny{}
	for s := range 4 {
		for a := range 3 {
			m.out[s][a] = []mdp.Outcome{
				{Next: (s + a) % 4, Prob: 0.7, Reward: 0.5*float64(s) - 0.25*float64(a) + 0.1},
				{Next: (s + 1) % 4, Prob: 0.3, Reward: -1.3},
			}
		}
	}
	return m
}

func (m *tiny) NumStates() int                  { return 4 }
func (m *tiny) NumActions() int                 { return 3 }
func (m *tiny) Initial() []float64              { return []float64{0.25, 0.25, 0.25, 0.25} }
func (m *tiny) Outcomes(s, a int) []mdp.Outcome { return m.out[s][a] }

// tinyTarget is the target policy of sampled, one row per state of tiny.
var tinyTarget = [][]float64{{0.5, 0.5, 0}, {0.1, 0.2, 0.7}, {0, 0, 1}, {0.4, 0.4, 0.2}}

// sampled returns 20 episodes of 15 steps from tiny. The target policy
// gives probability 0 to some logged actions (LogTarget = -Inf).
func sampled(t testing.TB, n, T int) *dataset.Dataset {
	t.Helper()
	b, err := policy.NewTabular([][]float64{{0.2, 0.3, 0.5}, {1.0 / 3, 1.0 / 3, 1.0 / 3}, {0.6, 0.3, 0.1}, {0.25, 0.25, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.NewTabular(tinyTarget)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(newTiny()), b, p, n, T)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// continuous returns a dataset with 3-dimensional states and 2-dimensional
// actions (densities above 1 included); the last step of every other
// episode has no next state.
func continuous(t testing.TB) *dataset.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(2, 0))
	var eps []dataset.Episode
	special := []float64{0, 1e-300, -2.5e300, 0.1 + 0.2, 1.0 / 3, math.SmallestNonzeroFloat64, -7}
	for e := range 5 {
		T := 3 + e
		obs := make([][]float64, T+1)
		for t := range obs {
			obs[t] = []float64{rng.NormFloat64(), special[(e+t)%len(special)], float64(t)}
		}
		ep := dataset.Episode{ID: []string{"a", "b,c", `say "hi"`, "line\nbreak", "  spaced "}[e]}
		for t := range T {
			ep.Steps = append(ep.Steps, dataset.Step{
				State: -1, Obs: obs[t], Action: -1,
				ActionVec:   []float64{rng.NormFloat64(), rng.Float64()},
				Reward:      rng.NormFloat64() * 10,
				HasNext:     t < T-1 || e%2 == 0,
				NextState:   -1,
				NextObs:     obs[t+1],
				LogBehavior: rng.NormFloat64() + 1, // a density may exceed 1
				LogTarget:   rng.NormFloat64(),
			})
		}
		if e%2 == 1 {
			ep.Steps[T-1].NextObs = nil
		}
		ep.Steps[0].LogTarget = math.Inf(-1)
		eps = append(eps, ep)
	}
	return mustNew(t, 0, 0, eps)
}

func writeCSV(t testing.TB, d *dataset.Dataset) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := logio.WriteCSV(&buf, d); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeParquet(t testing.TB, d *dataset.Dataset) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := logio.WriteParquet(&buf, d); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readCSV(t testing.TB, b []byte) *dataset.Dataset {
	t.Helper()
	d, err := logio.ReadCSV(bytes.NewReader(b), "test.csv")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readParquet(t testing.TB, b []byte) *dataset.Dataset {
	t.Helper()
	d, err := logio.ReadParquet(bytes.NewReader(b), int64(len(b)), "test.parquet")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRoundTrip(t *testing.T) {
	disc := sampled(t, 20, 15)
	if disc.NumStates != 4 || disc.NumActions != 3 {
		t.Fatalf("sampled: %d states, %d actions", disc.NumStates, disc.NumActions)
	}
	neginf := 0
	for _, lt := range disc.LogTarget {
		if math.IsInf(lt, -1) {
			neginf++
		}
	}
	if neginf == 0 {
		t.Fatal("sampled data has no step with target probability 0")
	}
	cont := continuous(t)
	for _, c := range []struct {
		name string
		d    *dataset.Dataset
	}{{"discrete", disc}, {"continuous", cont}} {
		if err := c.d.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := readCSV(t, writeCSV(t, c.d)); !reflect.DeepEqual(got, c.d) {
			t.Errorf("%s: CSV round trip differs:\n got %+v\nwant %+v", c.name, got.Episode(0), c.d.Episode(0))
		}
		if got := readParquet(t, writeParquet(t, c.d)); !reflect.DeepEqual(got, c.d) {
			t.Errorf("%s: Parquet round trip differs:\n got %+v\nwant %+v", c.name, got.Episode(0), c.d.Episode(0))
		}
	}
}

func TestWriteCSVFormat(t *testing.T) {
	d := mustNew(t, 3, 2, []dataset.Episode{
		{ID: "x,y", Steps: []dataset.Step{
			{State: 0, Action: 1, Reward: 0.1, HasNext: true, NextState: 2, LogBehavior: math.Log(0.5), LogTarget: math.Inf(-1)},
			{State: 2, Action: 0, Reward: -3, HasNext: true, NextState: 1, LogBehavior: 0, LogTarget: -1e-20},
		}},
		{ID: "e2", Steps: []dataset.Step{
			{State: 1, Action: 0, Reward: 1e300, NextState: -1, LogBehavior: -2, LogTarget: -3},
		}},
	})
	want := "episode,t,state,action,reward,behavior_logprob,target_logprob,next_state\n" +
		"\"x,y\",0,0,1,0.1,-0.6931471805599453,-Inf,\n" +
		"\"x,y\",1,2,0,-3,0,-1e-20,1\n" +
		"e2,0,1,0,1e+300,-2,-3,\n"
	if got := string(writeCSV(t, d)); got != want {
		t.Errorf("WriteCSV:\n%s\nwant\n%s", got, want)
	}
	if got := readCSV(t, []byte(want)); !reflect.DeepEqual(got, d) {
		t.Errorf("read back %+v, want %+v", got, d)
	}
}

func TestShuffledRows(t *testing.T) {
	d := sampled(t, 10, 8)
	lines := strings.SplitAfter(string(writeCSV(t, d)), "\n")
	lines = lines[:len(lines)-1] // the empty string after the last '\n'
	rows := lines[1:]
	rand.New(rand.NewPCG(3, 0)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	got := readCSV(t, []byte(strings.Join(lines, "")))
	// Episodes come in order of first appearance in the shuffled file.
	byID := map[string]dataset.Episode{}
	for _, ep := range got.Episodes() {
		byID[ep.ID] = ep
	}
	if len(byID) != d.NumEpisodes() || got.NumStates != d.NumStates || got.NumActions != d.NumActions {
		t.Fatalf("got %d episodes, %d states, %d actions", len(byID), got.NumStates, got.NumActions)
	}
	for _, ep := range d.Episodes() {
		if !reflect.DeepEqual(byID[ep.ID], ep) {
			t.Errorf("episode %s differs after shuffling", ep.ID)
		}
	}
	// The episodes come in the natural order of their ids, which is the
	// order ihope wrote them in: the shuffled log reads back as the log.
	if !reflect.DeepEqual(got, d) {
		t.Errorf("the shuffled log reads back with its episodes in the order %q, want %q", got.IDs, d.IDs)
	}
}

func TestReadWriteFile(t *testing.T) {
	d := sampled(t, 3, 4)
	dir := t.TempDir()
	for _, name := range []string{"log.csv", "log.parquet", "LOG.CSV"} {
		path := filepath.Join(dir, name)
		if err := logio.WriteFile(path, d); err != nil {
			t.Fatal(err)
		}
		got, err := logio.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Errorf("%s: read back differs", name)
		}
	}
	path := filepath.Join(dir, "log.json")
	if err := logio.WriteFile(path, d); err == nil {
		t.Error("WriteFile .json: no error")
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := logio.ReadFile(path); err == nil || !strings.Contains(err.Error(), ".json") {
		t.Errorf("ReadFile .json: %v", err)
	}
	if _, err := logio.ReadFile(filepath.Join(dir, "missing.csv")); err == nil {
		t.Error("ReadFile of a missing file: no error")
	}
}

// TestManyRows reads more rows than one storage chunk (65,536), with
// vector states and actions, in order and shuffled.
func TestManyRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 0))
	var eps []dataset.Episode
	for e := range 300 {
		ep := dataset.Episode{ID: "ep" + strconv.Itoa(e)}
		T := 200 + e%100
		obs := make([]float64, 2*(T+1))
		for k := range obs {
			obs[k] = float64(rng.IntN(1000)) / 8
		}
		for t := range T {
			ep.Steps = append(ep.Steps, dataset.Step{
				State: -1, Obs: obs[2*t : 2*t+2 : 2*t+2], Action: -1, ActionVec: []float64{float64(t) / 4},
				Reward: float64(e), HasNext: t < T-1 || e%3 > 0, NextState: -1, NextObs: obs[2*t+2 : 2*t+4 : 2*t+4],
				LogBehavior: -1, LogTarget: -0.5,
			})
		}
		if e%3 == 0 {
			ep.Steps[T-1].NextObs = nil
		}
		eps = append(eps, ep)
	}
	d := mustNew(t, 0, 0, eps)
	if n := d.NumSteps(); n < 1<<16 {
		t.Fatalf("only %d steps", n)
	}
	if got := readParquet(t, writeParquet(t, d)); !reflect.DeepEqual(got, d) {
		t.Error("Parquet round trip differs")
	}
	in := writeCSV(t, d)
	if got := readCSV(t, in); !reflect.DeepEqual(got, d) {
		t.Error("CSV round trip differs")
	}
	lines := strings.SplitAfter(string(in), "\n")
	rows := lines[1 : len(lines)-1]
	// Reverse the rows: the episodes still come in the order of their
	// ids, so the log reads back as it was.
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	got := readCSV(t, []byte(strings.Join(lines, "")))
	if !reflect.DeepEqual(got, d) {
		t.Fatalf("reversed rows: %d episodes, %.40q..., want the log (%d episodes)", got.NumEpisodes(), got.IDs, d.NumEpisodes())
	}
}

// TestReadSizesColumns: a text file of known size is read into columns
// sized once from the mean length of its first lines (a few percent to
// spare, where doubling would leave up to half the room unused), and what
// is read is the log written, also when the lines get longer or shorter
// along the file (episode ids of 2 or 60 characters), so that the first
// estimate is off.
func TestReadSizesColumns(t *testing.T) {
	base := sampled(t, 400, 100) // 40,000 rows, about 2 MB of CSV
	renamed := func(long func(e int) bool) *dataset.Dataset {
		eps := base.Episodes()
		for e := range eps {
			eps[e].ID = strconv.Itoa(e)
			if long(e) {
				eps[e].ID = strings.Repeat("x", 60) + eps[e].ID
			}
		}
		return mustNew(t, base.NumStates, base.NumActions, eps)
	}
	cases := []struct {
		name  string
		d     *dataset.Dataset
		tight bool // the first estimate holds
	}{
		{"even", base, true},
		{"shorter later", renamed(func(e int) bool { return e < 100 }), false},
		{"longer later", renamed(func(e int) bool { return e >= 300 }), false},
	}
	for _, c := range cases {
		for _, ext := range []string{".csv", ".tsv"} {
			path := filepath.Join(t.TempDir(), "log"+ext)
			if err := logio.WriteFile(path, c.d); err != nil {
				t.Fatal(err)
			}
			got, err := logio.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.d) {
				t.Errorf("%s %s: the log read differs from the log written", c.name, ext)
			}
			n, room := got.NumSteps(), cap(got.Reward)
			if room < n || c.tight && room > n+n/16 {
				t.Errorf("%s %s: room for %d rows, %d read", c.name, ext, room, n)
			}
		}
	}
}
