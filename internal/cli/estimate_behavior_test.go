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

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"
)

// estimateJSON runs estimate with --json and decodes its report.
func estimateJSON(t *testing.T, args ...string) *evaluate.Report {
	t.Helper()
	out, errOut, code := run(t, append([]string{"estimate", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("estimate %q: exit %d: %s", args, code, errOut)
	}
	var rep evaluate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	return &rep
}

// rowsByName returns the report's rows by estimator.
func rowsByName(rep *evaluate.Report) map[string]evaluate.Row {
	out := map[string]evaluate.Row{}
	for _, r := range rep.Estimates {
		out[r.Estimator] = r
	}
	return out
}

// A Taxi log whose behavior column was removed goes through estimate end
// to end, as CSV and as Parquet: by default only the estimators that do
// not weigh by pi/pi0 run and a warning names the others; asked for by
// name, those get the contract's error; with --fit-behavior they run on
// fitted probabilities and their rows say so.
func TestEstimateWithoutBehavior(t *testing.T) {
	dir := t.TempDir()
	logged := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "-n", "30", "-T", "60", "--seed", "3", "--out", logged); code != ExitOK {
		t.Fatal(errOut)
	}
	d, err := logio.ReadFile(logged)
	if err != nil {
		t.Fatal(err)
	}
	d.LogBehavior = nil
	weighing := []string{"wis-trajectory", "wis-stepwise", "mis"} // the default set's under the horizon value (plain IS only by name; bch-tabular under the long-run value)
	for _, ext := range []string{"csv", "parquet"} {
		path := filepath.Join(dir, "nobehavior."+ext)
		if err := logio.WriteFile(path, d); err != nil {
			t.Fatal(err)
		}
		rep := estimateJSON(t, "--data", path, "--bootstrap", "0")
		if len(rep.Estimates) != 1 || rep.Estimates[0].Estimator != "naive" || rep.Estimates[0].Behavior != "" || rep.Data.Behavior != "none" {
			t.Errorf("%s: rows %+v, data behavior %q; want naive alone, behavior none", ext, rep.Estimates, rep.Data.Behavior)
		}
		if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, strings.Join(weighing, ", ")+", which weigh by pi/pi0, did not run") {
			t.Errorf("%s: warnings %q do not name the estimators left out", ext, rep.Warnings)
		}

		rep = estimateJSON(t, "--data", path, "--bootstrap", "0", "--estimators", "naive,bch-tabular")
		if rows := rowsByName(rep); rows["bch-tabular"].Error != "needs behavior probabilities (or --fit-behavior)" || rows["bch-tabular"].Estimate != nil {
			t.Errorf("%s: bch-tabular asked for by name: %+v", ext, rows["bch-tabular"])
		}

		rep = estimateJSON(t, "--data", path, "--bootstrap", "10", "--fit-behavior")
		rows := rowsByName(rep)
		var ran []string
		for _, r := range rep.Estimates {
			ran = append(ran, r.Estimator)
		}
		if want := append([]string{"naive"}, weighing...); !slices.Equal(ran, want) {
			t.Errorf("%s: --fit-behavior ran %q, want %q", ext, ran, want)
		}
		for _, name := range weighing {
			if r := rows[name]; r.Behavior != "fitted" || r.Estimate == nil || r.CILow == nil {
				t.Errorf("%s: %s row %+v, want an estimate and an interval on fitted probabilities", ext, name, r)
			}
		}
		f := rep.Data.BehaviorFit
		if rows["naive"].Behavior != "" || rep.Data.Behavior != "fitted" || f == nil || f.Model != "counts" || f.Folds != 5 || !f.Calibrated || f.KL != nil {
			t.Errorf("%s: naive %+v, data %+v, fit %+v", ext, rows["naive"], rep.Data, f)
		}
		// bch-tabular, of the long-run value, runs on the fitted
		// probabilities when that value is asked for.
		rep = estimateJSON(t, "--data", path, "--bootstrap", "0", "--fit-behavior", "--estimand", "long-run")
		if r := rowsByName(rep)["bch-tabular"]; r.Behavior != "fitted" || r.Estimate == nil {
			t.Errorf("%s: bch-tabular under the long-run value: %+v", ext, r)
		}
	}
}

// On a log with behavior probabilities, rows say "logged"; with
// --fit-behavior they say "fitted" and the data summary says how far the
// fitted probabilities are from the logged ones.
func TestEstimateFitBehaviorAgainstLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs.parquet")
	if _, errOut, code := run(t, "sample", "-n", "30", "-T", "60", "--out", path); code != ExitOK {
		t.Fatal(errOut)
	}
	for _, c := range []struct {
		fit  bool
		want string
	}{{false, "logged"}, {true, "fitted"}} {
		args := []string{"--data", path, "--bootstrap", "0", "--estimators", "naive,wis-stepwise,bch-tabular"}
		if c.fit {
			args = append(args, "--fit-behavior")
		}
		rep := estimateJSON(t, args...)
		rows := rowsByName(rep)
		if rep.Data.Behavior != c.want || rows["wis-stepwise"].Behavior != c.want || rows["bch-tabular"].Behavior != c.want || rows["naive"].Behavior != "" {
			t.Errorf("fit %v: data %q, rows %+v", c.fit, rep.Data.Behavior, rep.Estimates)
		}
		if f := rep.Data.BehaviorFit; c.fit && (f == nil || f.KL == nil || !(*f.MeanAbsLogRatio > 0 && *f.MeanAbsLogRatio < 1 && *f.MaxAbsLogRatio >= *f.MeanAbsLogRatio)) {
			t.Errorf("no distance to the logged probabilities: %+v", f)
		}
	}
	out, errOut, code := run(t, "estimate", "--data", path, "--bootstrap", "0", "--fit-behavior")
	if code != ExitOK || !strings.Contains(out, "behavior probabilities: fitted (counts, smoothing 0.5, cross-fitted over 5 folds, calibrated per state); against the logged ones: mean |log ratio|") {
		t.Errorf("exit %d %s\n%s", code, errOut, out)
	}
	if strings.Contains(out, "less likely than the fitted ones") {
		t.Errorf("the true logged probabilities were called less likely:\n%s", out)
	}

	// The same log with every behavior probability claimed 1/6 (Taxi's
	// six actions; the behavior pi18 is far from uniform): less likely
	// than the fitted ones, which says so.
	d, err := logio.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for j := range d.LogBehavior {
		d.LogBehavior[j] = math.Log(1.0 / 6)
	}
	uniform := filepath.Join(t.TempDir(), "uniform.parquet")
	if err := logio.WriteFile(uniform, d); err != nil {
		t.Fatal(err)
	}
	rep := estimateJSON(t, "--data", uniform, "--bootstrap", "0", "--fit-behavior", "--estimators", "naive")
	if kl := rep.Data.BehaviorFit.KL; kl == nil || !(*kl < -0.01) || !slices.ContainsFunc(rep.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "the logged behavior probabilities are less likely than the fitted ones")
	}) {
		t.Errorf("kl %v, warnings %q", kl, rep.Warnings)
	}
}

// The same (state, action) logged with two behavior probabilities: one
// warning naming the first two steps that disagree.
func TestEstimateBehaviorConflict(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs.csv")
	body := "episode,t,state,action,reward,behavior_prob,target_prob\n" +
		"a,0,0,1,1,0.5,0.5\na,1,1,0,0,0.5,0.5\nb,0,0,1,1,0.5,0.5\nb,1,1,0,0,0.25,0.5\nb,2,1,0,0,0.75,0.5\nc,0,0,1,1,0.4,0.5\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := estimateJSON(t, "--data", path, "--bootstrap", "0")
	var got []string
	for _, w := range rep.Warnings {
		if strings.HasPrefix(w, "behavior_prob:") {
			got = append(got, w)
		}
	}
	want := `behavior_prob: state 1, action 0 is logged with probability 0.5 (episode "a", t = 1) and 0.25 (episode "b", t = 1) (and 1 more (state, action) pairs disagree): either the logging policy depended on something the state column does not hold`
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("warnings %q, want one starting %q", rep.Warnings, want)
	}
}

// Real states with discrete actions are fitted by logistic regression;
// real actions are refused with a clear line.
func TestEstimateFitBehaviorReal(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("episode,t,state_0,state_1,action,reward,target_prob\n")
	for e := range 12 {
		for s := range 15 {
			x0, x1 := float64((e*7+s*3)%11)/5-1, float64((e*5+s*2)%7)/3-1
			a := 0
			if x0+x1 > 0 {
				a = 1
			}
			if (e+s)%4 == 0 {
				a = 1 - a
			}
			b.WriteString(strings.Join([]string{strconv.Itoa(e), strconv.Itoa(s), ftoa(x0), ftoa(x1), strconv.Itoa(a), ftoa(x0), "0.5"}, ",") + "\n")
		}
	}
	path := filepath.Join(dir, "real.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := estimateJSON(t, "--data", path, "--bootstrap", "0", "--fit-behavior", "--estimators", "wis-stepwise,bch-kernel")
	if f := rep.Data.BehaviorFit; f == nil || f.Model != "logistic" || f.Calibrated {
		t.Errorf("fit %+v", f)
	}
	for _, r := range rep.Estimates {
		if r.Estimate == nil || r.Behavior != "fitted" {
			t.Errorf("row %+v", r)
		}
	}

	pend := filepath.Join(dir, "pend.csv")
	if _, errOut, code := run(t, "sample", "--env", "pendulum", "-n", "2", "-T", "5", "--out", pend); code != ExitOK {
		t.Fatal(errOut)
	}
	out, errOut, code := run(t, "estimate", "--data", pend, "--fit-behavior")
	if code != ExitError || out != "" || !strings.Contains(errOut, "--fit-behavior") || !strings.Contains(errOut, "discrete actions") {
		t.Errorf("real actions: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Only the rows that ran say where their behavior probabilities came
// from: bch-kernel, which refuses discrete states, has no "behavior".
func TestEstimateBehaviorLabelRan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs.csv")
	sampleLogs(t, path, "-n", "20", "-T", "50")
	rows := rowsByName(estimateJSON(t, "--data", path, "--bootstrap", "0", "--fit-behavior", "--estimators", "bch-kernel,wis-stepwise"))
	if k, w := rows["bch-kernel"], rows["wis-stepwise"]; k.Estimate != nil || k.Behavior != "" || w.Behavior != "fitted" {
		t.Errorf("bch-kernel %v %q (error %q), wis-stepwise %q", k.Estimate, k.Behavior, k.Error, w.Behavior)
	}
}
