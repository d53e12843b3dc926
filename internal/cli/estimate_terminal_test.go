package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
)

// quitCSV is the population log of ope's quitMDP (terminal_test.go): 8
// episodes from state 0, seven of them ending in a terminal state, the
// target's whole distribution on every row.
const quitCSV = `episode,t,state,action,reward,behavior_prob,target_prob_0,target_prob_1,next_state,terminal
q0,0,0,1,2,0.5,0.75,0.25,,1
q1,0,0,1,2,0.5,0.75,0.25,,1
q2,0,0,1,2,0.5,0.75,0.25,,1
q3,0,0,1,2,0.5,0.75,0.25,,1
b0,0,0,0,1,0.5,0.75,0.25,,0
b0,1,1,1,3,0.5,0.25,0.75,,1
b1,0,0,0,1,0.5,0.75,0.25,,0
b1,1,1,1,3,0.5,0.25,0.75,,1
a0,0,0,0,1,0.5,0.75,0.25,,0
a0,1,1,0,0,0.5,0.25,0.75,,0
a0,2,0,1,2,0.5,0.75,0.25,,1
c0,0,0,0,1,0.5,0.75,0.25,,0
c0,1,1,0,0,0.5,0.25,0.75,,0
c0,2,0,0,1,0.5,0.75,0.25,1,0
`

// ihope estimate on a log with terminal episodes counts them in its data
// summary (text and JSON) and returns the hand value of ope's
// TestTerminalByHand (203/192 over the horizon at gamma = 1).
func TestEstimateTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quit.csv")
	if err := os.WriteFile(path, []byte(quitCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "estimate", "--data", path, "--bootstrap", "0", "--estimators", "wis-stepwise,fqe")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "; 7 of 8 episodes ended in a terminal state") {
		t.Errorf("no terminal count in the summary:\n%s", out)
	}
	out, errOut, code = run(t, "estimate", "--data", path, "--bootstrap", "0", "--estimators", "wis-stepwise,fqe,mql", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep evaluate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Data.Terminal != 7 || rep.Data.OpenEndings != 0 || rep.Data.Estimand != "horizon" {
		t.Errorf("terminal_episodes %d, episodes_without_next_state %d, estimand %s; want 7, 0, horizon",
			rep.Data.Terminal, rep.Data.OpenEndings, rep.Data.Estimand)
	}
	for _, row := range rep.Estimates {
		switch row.Estimator {
		case "mql": // long-run at gamma = 1: refused, its row saying what it targets
			if row.Estimate != nil || row.Estimand != "long-run" {
				t.Errorf("mql: %v, estimand %q; want no estimate, long-run", row.Estimate, row.Estimand)
			}
		default:
			if row.Estimate == nil || math.Abs(*row.Estimate-203.0/192) > 1e-9 {
				t.Errorf("%s: %v, want 203/192", row.Estimator, row.Estimate)
			}
		}
	}
	// mql was asked for the horizon value, which it does not estimate: its
	// refusal names the estimators that do (not "--estimand horizon").
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "mql estimates the long-run value only") ||
		!strings.Contains(w, "for the horizon value use fqe") || strings.Contains(w, "--estimand horizon") {
		t.Errorf("warnings %q", w)
	}
	// The default set under the horizon estimand runs the horizon
	// estimators only, and says so in one line.
	out, errOut, code = run(t, "estimate", "--data", path, "--bootstrap", "0")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	const left = "bch-tabular, mwl, mql, dualdice estimate the long-run value, not the horizon value asked for: not run"
	if !strings.Contains(out, left) || strings.Contains(out, "failed") {
		t.Errorf("default set at gamma = 1:\n%s", out)
	}
	// The long run asked for at gamma = 1: nothing can estimate it, so
	// the run fails (exit 1) after its report, which says why and names
	// the estimand the others would give.
	out, errOut, code = run(t, "estimate", "--data", path, "--bootstrap", "0", "--estimand", "long-run", "--json")
	if code != ExitError || !strings.Contains(errOut, "no estimate of the long-run value asked for") {
		t.Errorf("long run at gamma = 1: exit %d, stderr %q; want %d and no estimate", code, errOut, ExitError)
	}
	rep = evaluate.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("long run at gamma = 1: no report: %v", err)
	}
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "model-based, fqe, bch-tabular, dr, mwl, mql, dualdice: not run: they would estimate the long-run value") || len(rep.Estimates) != 0 ||
		!strings.Contains(w, "or ask for the horizon value (--estimand horizon)") {
		t.Errorf("long run at gamma = 1: warnings %q", w)
	}
	out, errOut, code = run(t, "estimate", "--data", path, "--bootstrap", "0", "--gamma", "0.5", "--estimand", "long-run", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep = evaluate.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range rep.Estimates {
		if row.Estimand != "long-run" || row.Estimator == "bch-tabular" {
			continue // the horizon rows; bch-tabular is not exact on a 3-step log
		}
		n++
		if row.Estimate == nil || math.Abs(*row.Estimate-67.0/61) > 1e-9 {
			t.Errorf("long run, gamma 0.5: %s gives %v, want 67/61", row.Estimator, row.Estimate)
		}
	}
	if n != 6 { // model-based, fqe, dr, mwl, mql, dualdice
		t.Errorf("%d long-run estimates, want 6", n)
	}
}

// unloggedCSV's target puts 0.9 on action 2 in state 0, where it is
// never logged (unlogged share 0.9 x 5 of 8 steps = 56.25%, printed 56.2%, in 1 state).
const unloggedCSV = `episode,t,state,action,reward,behavior_prob,target_prob_0,target_prob_1,target_prob_2,next_state
a,0,0,0,1,0.5,0.05,0.05,0.9,1
a,1,1,0,0,0.5,0.5,0.5,0,0
b,0,0,1,2,0.5,0.05,0.05,0.9,1
b,1,1,1,1,0.5,0.5,0.5,0,0
b,2,0,0,1,0.5,0.05,0.05,0.9,1
c,0,0,0,1,0.5,0.05,0.05,0.9,1
d,0,1,0,0,0.5,0.5,0.5,0,0
d,1,0,1,1,0.5,0.05,0.05,0.9,1
`

// The target's mass on unlogged actions is warned about alike for one
// file and for its shards: the stream sums what the warning needs in its
// one pass (dataset.Summarizer). With the target given by --target-policy
// instead of the target_prob_k columns, the file fills each shard's
// columns as it fills one file's.
func TestEstimateStreamUnloggedWarning(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "pi.csv")
	if err := os.WriteFile(policy, []byte("state,p0,p1,p2\n0,0.05,0.05,0.9\n1,0.5,0.5,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(unloggedCSV), "\n")
	for _, c := range []struct {
		name  string
		lines []string
		flags []string
	}{
		{"columns", lines, nil},
		{"policy", withoutTargetColumns(lines), []string{"--target-policy", policy}},
	} {
		whole, glob := wholeAndShards(t, filepath.Join(dir, c.name), c.lines, 5) // episodes a, b | c, d
		args := append([]string{"--bootstrap", "0", "--estimators", "wis-stepwise"}, c.flags...)
		const support = "support: the target puts"
		want := warningsWith(estimateJSON(t, append([]string{"--data", whole}, args...)...), support)
		got := warningsWith(estimateJSON(t, append([]string{"--data", glob}, args...)...), support)
		if len(want) != 1 || !strings.Contains(want[0], "56.2% of its probability") || !strings.Contains(want[0], "(in 1 state)") {
			t.Errorf("%s, one file: support warnings %q, want 56.2%% unlogged in 1 state", c.name, want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s, shards: support warnings %q\none file %q", c.name, got, want)
		}
	}
}

// withoutTargetColumns turns unloggedCSV's lines into a log that gives
// only the logged action's target probability (target_prob), the rest
// of the target left to --target-policy.
func withoutTargetColumns(lines []string) []string {
	out := []string{"episode,t,state,action,reward,behavior_prob,target_prob,next_state"}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		a, _ := strconv.Atoi(f[3])
		out = append(out, strings.Join([]string{f[0], f[1], f[2], f[3], f[4], f[5], f[6+a], f[9]}, ","))
	}
	return out
}

// wholeAndShards writes a CSV log (header first) under dir as one file and
// as two shards, the first holding data rows [0, cut), and returns the
// file and the shards' glob.
func wholeAndShards(t *testing.T, dir string, lines []string, cut int) (whole, glob string) {
	t.Helper()
	shards := filepath.Join(dir, "shards")
	if err := os.MkdirAll(shards, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path string, rows []string) {
		if err := os.WriteFile(path, []byte(lines[0]+"\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	whole = filepath.Join(dir, "whole.csv")
	write(whole, lines[1:])
	write(filepath.Join(shards, "part-0.csv"), lines[1:1+cut])
	write(filepath.Join(shards, "part-1.csv"), lines[1+cut:])
	return whole, filepath.Join(shards, "*.csv")
}

// warningsWith returns rep's warnings that contain s.
func warningsWith(rep *evaluate.Report, s string) []string {
	var out []string
	for _, w := range rep.Warnings {
		if strings.Contains(w, s) {
			out = append(out, w)
		}
	}
	return out
}
