package cli

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
)

// Logs sampled from Taxi, written as CSV and as Parquet, read back and
// estimated, give exactly the estimates of the in-memory path (demo on
// the same seed).
func TestSampleEstimateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	common := []string{"-n", "30", "-T", "60", "--seed", "3", "--mix", "0.5"}
	out, errOut, code := run(t, append([]string{"demo", "--json"}, common...)...)
	if code != ExitOK {
		t.Fatalf("demo: %s", errOut)
	}
	var demo demoReport
	if err := json.Unmarshal([]byte(out), &demo); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, r := range demo.Rows {
		want[r.Estimator] = *r.Estimate
	}
	for _, ext := range []string{"csv", "parquet"} {
		path := filepath.Join(dir, "logs."+ext)
		if _, errOut, code := run(t, append([]string{"sample", "--out", path}, common...)...); code != ExitOK {
			t.Fatalf("sample %s: %s", ext, errOut)
		}
		out, errOut, code := run(t, "estimate", "--data", path, "--json", "--bootstrap", "0")
		if code != ExitOK {
			t.Fatalf("estimate %s: %s", ext, errOut)
		}
		var rep evaluate.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: not one JSON object: %v\n%s", ext, err, out)
		}
		// naive, the two weighted IS estimators and mis: the logs carry
		// only the logged action's target probability, so the value-based
		// estimators are left out, plain IS is not in the default set, and
		// bch-tabular estimates the long-run value, not the horizon one.
		if len(rep.Estimates) != 4 || rep.Data.NotRun == "" {
			t.Errorf("%s: %d estimators, want 4; not run %q", ext, len(rep.Estimates), rep.Data.NotRun)
		}
		for _, r := range rep.Estimates {
			if w, ok := want[r.Estimator]; !ok || r.Estimate == nil || w != *r.Estimate {
				t.Errorf("%s: %s = %v, demo %.17g", ext, r.Estimator, r.Estimate, w)
			}
			if r.CILow != nil {
				t.Errorf("%s: interval with --bootstrap 0", ext)
			}
		}
		if rep.Data.Episodes != 30 || rep.Data.Steps != 1800 || rep.Data.StateKind != "discrete" {
			t.Errorf("%s: data summary %+v", ext, rep.Data)
		}
	}
}

// The JSON field names are a contract for scripts.
func TestEstimateJSONContract(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "-n", "20", "-T", "30", "--out", path); code != ExitOK {
		t.Fatal(errOut)
	}
	out, errOut, code := run(t, "estimate", "--data", path, "--json", "--bootstrap", "30", "--alpha", "0.1", "--estimators", "naive,bch-tabular")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"estimates", "data", "warnings"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("no %q in %s", k, out)
		}
	}
	ests := raw["estimates"].([]any)
	if len(ests) != 2 {
		t.Fatalf("%d estimates, want the 2 asked for", len(ests))
	}
	for _, e := range ests {
		m := e.(map[string]any)
		for _, k := range []string{"estimator", "estimate", "ci_low", "ci_high", "ess"} {
			if _, ok := m[k]; !ok {
				t.Errorf("estimate without %q: %v", k, m)
			}
		}
		if !(m["ci_low"].(float64) <= m["estimate"].(float64)+0.05 && m["ci_low"].(float64) < m["ci_high"].(float64)) {
			t.Errorf("odd interval: %v", m)
		}
	}
	data := raw["data"].(map[string]any)
	for _, k := range []string{"episodes", "steps", "states_seen", "actions_seen"} {
		if _, ok := data[k]; !ok {
			t.Errorf("data without %q", k)
		}
	}
}

// One long episode gets a block bootstrap, and the block length is stated.
func TestEstimateSingleEpisode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.parquet")
	if _, errOut, code := run(t, "sample", "-n", "1", "-T", "3375", "--out", path); code != ExitOK {
		t.Fatal(errOut)
	}
	out, errOut, code := run(t, "estimate", "--data", path, "--bootstrap", "20")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	if !strings.Contains(out, "resamples over blocks of 15 steps") {
		t.Errorf("no block length in:\n%s", out)
	}
}

// Bad input: one line naming file, row and column, exit 1, nothing on
// stdout.
func TestEstimateBadInput(t *testing.T) {
	dir := t.TempDir()
	header := "episode,t,state,action,reward,behavior_prob,target_prob\n"
	for i, c := range []struct{ body, want string }{
		{header + "a,0,1,0,1,0.5,0.5\na,1,2,1,0,0,0.5\n", `row 3, column "behavior_prob"`},
		{header + "a,0,1,0,1,0.5,0.5\na,2,2,1,0,0.5,0.5\n", `row 3, column "t"`},
		{header + "a,0,x,0,1,0.5,0.5\n", `row 2, column "state"`},
		{"episode,t,state,action,reward,behavior_prob\n", `column "target_prob"`},
		{"", "empty"},
	} {
		path := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := run(t, "estimate", "--data", path)
		if code != ExitError {
			t.Errorf("%d: exit %d, want %d", i, code, ExitError)
		}
		if out != "" {
			t.Errorf("%d: stdout %q, want nothing", i, out)
		}
		if !strings.Contains(errOut, "bad.csv") || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%d: message %q, want one line naming the file and %q", i, errOut, c.want)
		}
	}
}

// Data that passes validation but defeats some estimators still gets a
// report: the failing estimators have an error and no estimate, the others
// their numbers, and the JSON stays valid.
func TestEstimatePartialFailures(t *testing.T) {
	dir := t.TempDir()
	header := "episode,t,state,action,reward,behavior_prob,target_prob\n"
	for i, c := range []struct {
		body   string
		args   []string
		failed []string
		warn   string
	}{
		// One step: no transition for bch-tabular; one episode for the
		// importance-sampling family (and mis).
		{header + "e,0,0,0,1,0.5,0.5\n", nil, []string{"is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "mis", "bch-tabular"}, "no estimate"},
		// The target never takes a logged action: only naive survives.
		{header + "a,0,0,0,1,0.5,0\na,1,1,0,1,0.5,0\nb,0,1,1,0,0.5,0\nb,1,0,1,0,0.5,0\n", nil,
			[]string{"wis-trajectory", "wis-stepwise", "bch-tabular"}, "no estimate"},
		// One episode with gamma < 1: estimates, but no block intervals
		// (and no importance sampling or mis, which need several episodes).
		{header + "a,0,0,0,1,0.5,0.5\na,1,1,1,0,0.5,0.5\na,2,0,0,1,0.5,0.5\na,3,1,1,0,0.5,0.5\n",
			[]string{"--gamma", "0.9", "--bootstrap", "10"}, []string{"is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "mis"}, "no intervals"},
	} {
		path := filepath.Join(dir, "d.csv")
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := run(t, append([]string{"estimate", "--data", path, "--json"}, c.args...)...)
		if code != ExitOK {
			t.Fatalf("%d: exit %d: %s", i, code, errOut)
		}
		var rep evaluate.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%d: %v\n%s", i, err, out)
		}
		for _, r := range rep.Estimates {
			shouldFail := false
			for _, f := range c.failed {
				shouldFail = shouldFail || f == r.Estimator
			}
			if shouldFail != (r.Estimate == nil) || shouldFail != (r.Error != "") {
				t.Errorf("%d: %s: estimate %v error %q, want failure %v", i, r.Estimator, r.Estimate, r.Error, shouldFail)
			}
			if r.CILow != nil && rep.Bootstrap == nil {
				t.Errorf("%d: %s has an interval without bootstrap", i, r.Estimator)
			}
		}
		if !strings.Contains(strings.Join(rep.Warnings, "\n"), c.warn) {
			t.Errorf("%d: warnings %q, want %q", i, rep.Warnings, c.warn)
		}
	}
}

// A flag mistake prints usage on stderr, never on stdout.
func TestUsageOnStderr(t *testing.T) {
	out, errOut, code := run(t, "estimate", "--data", "x.csv", "--json", "--bootstrap", "abc")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "Usage") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// Real states: Pendulum logs with log-densities run bch-neural beside the
// IS-type estimators, with its own (smaller) number of resamples. (A log
// of 5 episodes of 60 steps and ensembles of 2 networks: what is checked
// is the plumbing, and a log of 10 x 100 with 4 networks cost 58 s of the
// package's 96.)
func TestEstimateContinuous(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks")
	}
	path := filepath.Join(t.TempDir(), "pend.parquet")
	if _, errOut, code := run(t, "sample", "--env", "pendulum", "-n", "5", "-T", "60", "--out", path); code != ExitOK {
		t.Fatal(errOut)
	}
	out, errOut, code := run(t, "estimate", "--data", path, "--json", "--bootstrap", "6", "--bootstrap-refit", "2", "--restarts", "2",
		"--estimators", "naive,wis-stepwise,bch-kernel,bch-neural")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var rep evaluate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Data.StateKind != "real" || rep.Data.StateDim != 3 {
		t.Errorf("data %+v", rep.Data)
	}
	found := false
	for _, r := range rep.Estimates {
		if r.Estimator == "bch-tabular" {
			t.Error("bch-tabular ran on real states")
		}
		if r.Estimator == "bch-neural" { // its trained networks kept
			found = true
			if r.Estimate == nil || r.CILow == nil || r.Resamples != 6 || r.Resampling != "fitted" {
				t.Errorf("%s row %+v", r.Estimator, r)
			}
		} else if r.Resamples != 6 || r.Resampling != "sums" { // bch-kernel too: its sums' Poisson copies
			t.Errorf("%s: %d resamples by %q, want 6 by sums", r.Estimator, r.Resamples, r.Resampling)
		}
	}
	if !found {
		t.Error("no bch-neural")
	}

	// --neural-batch and --restarts reach the learner: the default batch
	// (2048) and 64 give different networks on the same data and seed, and
	// so do one and two networks; 1 and 0 are refused.
	neural := func(args ...string) (float64, evaluate.Row) {
		t.Helper()
		out, errOut, code := run(t, append([]string{"estimate", "--data", path, "--json", "--bootstrap", "0", "--estimators", "bch-neural"}, args...)...)
		if code != ExitOK {
			t.Fatal(errOut)
		}
		var rep evaluate.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return *rep.Estimates[0].Estimate, rep.Estimates[0]
	}
	def, _ := neural("--restarts", "1")
	explicit, _ := neural("--restarts", "1", "--neural-batch", "2048")
	small, one := neural("--restarts", "1", "--neural-batch", "64")
	if def != explicit || def == small {
		t.Errorf("bch-neural: %v by default, %v with --neural-batch 2048, %v with 64", def, explicit, small)
	}
	two, row := neural("--restarts", "2", "--neural-batch", "64")
	if two == small || row.Restarts != 2 || len(row.RestartEstimates) != 2 || row.RestartSD == nil ||
		row.RestartEstimates[0] != small || one.Restarts != 1 || one.RestartSD != nil {
		t.Errorf("--restarts 2: %v (%+v); --restarts 1: %v (%+v)", two, row, small, one)
	}
	if out, errOut, code := run(t, "estimate", "--data", path, "--restarts", "0"); code != ExitUsage || out != "" || !strings.Contains(errOut, "--restarts 0") {
		t.Errorf("--restarts 0: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, errOut, code := run(t, "estimate", "--data", path, "--neural-batch", "1"); code != ExitUsage || out != "" || !strings.Contains(errOut, "--neural-batch 1") {
		t.Errorf("--neural-batch 1: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, _, code := run(t, "demo", "--env", "pendulum"); code != ExitUsage {
		t.Errorf("demo --env pendulum: exit %d, want usage error", code)
	}
}

// The text table says how its intervals were formed: percentiles from
// ope.PercentileMin resamples or more ("boot"), the mean ± Student t × sd
// from fewer ("t"), as each row's "interval" field in --json does.
func TestEstimateIntervalWords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.csv")
	sampleLogs(t, path, "-n", "20", "-T", "30")
	for _, c := range []struct {
		B          string
		line, cell string
	}{
		{"50", "intervals: 95% bootstrap, 50 resamples over episodes (Poisson), as mean ± Student t × sd (too few for percentiles)", "] t "},
		{"100", "intervals: 95% percentile bootstrap, 100 resamples over episodes (Poisson), seed 1", "] boot "},
	} {
		out, errOut, code := run(t, "estimate", "--data", path, "--estimators", "wis-stepwise", "--bootstrap", c.B)
		if code != ExitOK {
			t.Fatal(errOut)
		}
		if !strings.Contains(out, c.line) || !strings.Contains(out, c.cell) {
			t.Errorf("--bootstrap %s: want %q and %q in\n%s", c.B, c.line, c.cell, out)
		}
	}
}

// Rows may come in any order: a log with its rows shuffled gives the
// estimates of the log, to the bit, dr's cross-fitting and
// --fit-behavior's folds included (the episodes are read in the order of
// their ids).
func TestEstimateShuffledRows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.csv")
	sampleLogs(t, path, "-n", "30", "-T", "40", "--target-probs")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	rows := lines[1 : len(lines)-1]
	rand.New(rand.NewPCG(7, 0)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	shuffled := filepath.Join(dir, "shuffled.csv")
	if err := os.WriteFile(shuffled, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--fit-behavior"}} {
		var est [2]map[string]float64
		for k, p := range []string{path, shuffled} {
			rep := estimateJSON(t, append([]string{"--data", p, "--bootstrap", "0",
				"--estimators", "wis-stepwise,bch-tabular,dr,fqe"}, extra...)...)
			est[k] = map[string]float64{}
			for _, r := range rep.Estimates {
				if r.Estimate == nil {
					t.Fatalf("%v: %s: %s", extra, r.Estimator, r.Error)
				}
				est[k][r.Estimator] = *r.Estimate
			}
		}
		if !reflect.DeepEqual(est[0], est[1]) {
			t.Errorf("%v: the log gives %v, its shuffled rows %v", extra, est[0], est[1])
		}
	}
}

// Without intervals the transient warning weighs the gap between the
// episodes' halves against its own standard error (Taxi from a reset:
// many SEs; the ring, stationary from its start: none).
func TestEstimateTransientWithoutBootstrap(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		env  string
		warn bool
	}{{"taxi", true}, {"ring", false}} {
		path := filepath.Join(dir, c.env+".parquet")
		sampleLogs(t, path, "--env", c.env, "-n", "800", "-T", "400")
		rep := estimateJSON(t, "--data", path, "--bootstrap", "0", "--estimators", "bch-tabular")
		warned := strings.Contains(strings.Join(rep.Warnings, "\n"), "standard errors of the gap")
		if r := rep.Estimates[0]; warned != c.warn || r.TransientSE == nil {
			t.Errorf("%s: transient %v, SE %v, warned %v, want %v: %q", c.env, r.Transient, r.TransientSE, warned, c.warn, rep.Warnings)
		}
	}
}

// A row of an estimator that weighs nothing (fqe; naive, whose weights
// are all equal) has weight_units 0, an empty weight_unit and a null
// largest share (the fields keep their fixed names); a weighting one has
// them all.
func TestEstimateWeightFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.csv")
	sampleLogs(t, path, "-n", "20", "-T", "30", "--target-probs")
	out, errOut, code := run(t, "estimate", "--data", path, "--json", "--bootstrap", "0", "--estimators", "fqe,naive,wis-stepwise")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var rep struct {
		Estimates []map[string]any `json:"estimates"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Estimates {
		_, hasESS := row["ess"]
		units, hasUnits := row["weight_units"]
		share, hasShare := row["max_weight_share"]
		weighs := row["estimator"] == "wis-stepwise"
		if !hasESS || !hasUnits || !hasShare || (units != 0.0) != weighs || (share != nil) != weighs {
			t.Errorf("%v: ess %v, weight_units %v, max_weight_share %v", row["estimator"], row["ess"], units, share)
		}
	}
}
