package logio

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readHeader returns the names of a CSV file's header.
func readHeader(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.Split(line, ",")
}

// Other tools' exports (testdata/shapes, issue 33) read with exactly the
// flags their header's error proposes (and --bandit for the contextual
// bandit's log): the episodes, their ends and the behavior
// probabilities as the file says.
func TestOtherToolsShapes(t *testing.T) {
	for _, tc := range []struct {
		file     string
		oneStep  bool
		ids      []string
		start    []int
		terminal []bool
		policies []string
		lb0      float64 // the first row's behavior probability
	}{
		// Episodes from terminals and timeouts: a terminal one, a cut-off
		// one, and the last, which no flag ends (cut off).
		{"d3rlpy.csv", false, []string{"0", "1", "2"}, []int{0, 3, 5, 7}, []bool{true, false, false}, nil, 0.5},
		// One step each, ended in a terminal state.
		{"obp.csv", true, []string{"0", "1", "2", "3"}, []int{0, 1, 2, 3, 4}, []bool{true, true, true, true}, nil, 0.2},
		// done ends an episode, SCOPE-RL's terminal marks its maximum
		// steps: the second episode is cut off.
		{"scope_rl.csv", false, []string{"0", "1"}, []int{0, 2, 5}, []bool{true, false}, []string{"A", "B"}, 0.5},
		// terminateds and truncateds beside eps_id and t; action_prob
		// beside a target column is the logging policy's.
		{"rllib.csv", false, []string{"a1", "b2"}, []int{0, 2, 4}, []bool{true, false}, nil, 0.6},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "shapes", tc.file)
			o := ReadOptions{OneStep: tc.oneStep}
			if _, _, err := ReadFileWith(path, o); err == nil {
				t.Fatal("read without flags")
			}
			flags, err := hintAccepted(readHeader(t, path), o)
			if err != nil {
				t.Fatal(err)
			}
			if o, err = follow(o, flags); err != nil {
				t.Fatal(err)
			}
			d, _, err := ReadFileWith(path, o)
			if err != nil {
				t.Fatalf("with %q: %v", flags, err)
			}
			if !reflect.DeepEqual(d.IDs, tc.ids) || !reflect.DeepEqual(d.Start, tc.start) || !reflect.DeepEqual(d.Terminal, tc.terminal) {
				t.Errorf("ids %q start %v terminal %v, want %q %v %v", d.IDs, d.Start, d.Terminal, tc.ids, tc.start, tc.terminal)
			}
			if !reflect.DeepEqual(d.Policies, tc.policies) {
				t.Errorf("policies %q, want %q", d.Policies, tc.policies)
			}
			if got := math.Exp(d.LogBehavior[0]); math.Abs(got-tc.lb0) > 1e-15 {
				t.Errorf("behavior probability of row 1: %v, want %v", got, tc.lb0)
			}
		})
	}
}

// Episodes read from the flags (no episode and no t column) and one-step
// episodes: where each ends and how, and the errors.
func TestDerivedEpisodes(t *testing.T) {
	const head = "state,action,reward,target_prob"
	for _, tc := range []struct {
		name, extra string // extra columns' names, and their values row by row
		rows        []string
		oneStep     bool
		start       []int
		terminal    []bool
		err         string
	}{
		{"terminal only, last episode open", "terminal", []string{"0", "1", "0", "0", "1", "0"}, false,
			[]int{0, 2, 5, 6}, []bool{true, true, false}, ""},
		{"truncated only", "truncated", []string{"1", "0", "1"}, false, []int{0, 1, 3}, []bool{false, false}, ""},
		// Both on one row: cut off (old gym's done with TimeLimit.truncated).
		{"terminal and truncated", "terminal,truncated", []string{"1,1", "0,0", "1,0"}, false,
			[]int{0, 1, 3}, []bool{false, true}, ""},
		{"bandit", "", []string{"", "", ""}, true, []int{0, 1, 2, 3}, []bool{true, true, true}, ""},
		{"bandit with an episode column", "episode", []string{"a", "b"}, true, nil, nil,
			`column "episode": is the episode column, but --bandit reads every row as an episode of one step`},
		{"no flags and no episode", "", []string{"", ""}, false, nil, nil, `column "episode": required column is missing (without episode and t columns`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(head)
			if tc.extra != "" {
				b.WriteString("," + tc.extra)
			}
			b.WriteString("\n")
			for i, r := range tc.rows {
				b.WriteString(strings.Join([]string{string(rune('0' + i%3)), "1", "1", "0.5"}, ","))
				if tc.extra != "" {
					b.WriteString("," + r)
				}
				b.WriteString("\n")
			}
			d, _, err := Read(strings.NewReader(b.String()), "log.csv", ReadOptions{Format: CSV, OneStep: tc.oneStep})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Start, tc.start) || !reflect.DeepEqual(d.Terminal, tc.terminal) {
				t.Errorf("start %v terminal %v, want %v %v", d.Start, d.Terminal, tc.start, tc.terminal)
			}
			if d.NumSteps() != len(tc.rows) {
				t.Errorf("%d steps, want every row: %d", d.NumSteps(), len(tc.rows))
			}
		})
	}
}

// A truncated flag on a row that is not its episode's last is refused
// at that row, in order and out of order.
func TestTruncatedNotLast(t *testing.T) {
	for _, in := range []string{
		"episode,t,state,action,reward,target_prob,truncated\na,0,0,0,1,0.5,1\na,1,0,0,1,0.5,0\n",
		"episode,t,state,action,reward,target_prob,truncated\nb,0,0,0,1,0.5,0\na,0,0,0,1,0.5,1\nb,1,0,0,1,0.5,0\na,1,0,0,1,0.5,0\n",
	} {
		_, _, err := Read(strings.NewReader(in), "log.csv", ReadOptions{Format: CSV})
		if err == nil || !strings.Contains(err.Error(), `column "truncated": is 1 on a row that is not the last of episode "a"`) {
			t.Errorf("error %v", err)
		}
	}
}
