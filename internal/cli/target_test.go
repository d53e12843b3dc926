package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// The target's whole action distribution reaches the value-based and
// doubly robust estimators either way — as target_prob_k columns written
// by sample --target-probs, or as a --target-policy file beside logs that
// carry only the logged action's probability — and both give exactly the
// estimates demo computes in memory from the policy itself.
func TestTargetDistributionRoundTrip(t *testing.T) {
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
		if r.Estimate != nil {
			want[r.Estimator] = *r.Estimate
		}
	}
	for _, name := range []string{"model-based", "fqe", "mis", "dr"} {
		if _, ok := want[name]; !ok {
			t.Fatalf("demo has no %s row", name)
		}
	}
	policyFile := filepath.Join(dir, "pi19.csv")
	if err := os.WriteFile(policyFile, mustPolicyCSV(t, "pi19"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, ext string
		sample    []string
		estimate  []string
	}{
		{"columns", "csv", []string{"--target-probs"}, nil},
		{"columns", "parquet", []string{"--target-probs"}, nil},
		{"policy file", "csv", nil, []string{"--target-policy", policyFile}},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+"."+c.ext)
		if _, errOut, code := run(t, append(append([]string{"sample", "--out", path}, common...), c.sample...)...); code != ExitOK {
			t.Fatalf("%s %s: sample: %s", c.name, c.ext, errOut)
		}
		args := append([]string{"estimate", "--data", path, "--json", "--bootstrap", "0", "--estimand", "horizon",
			"--estimators", "model-based,fqe,mis,dr,bch-tabular"}, c.estimate...)
		out, errOut, code := run(t, args...)
		if code != ExitOK {
			t.Fatalf("%s %s: estimate: %s", c.name, c.ext, errOut)
		}
		var rep evaluate.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		got := map[string]evaluate.Row{}
		for _, r := range rep.Estimates {
			got[r.Estimator] = r
		}
		for _, name := range []string{"model-based", "fqe", "mis", "dr", "bch-tabular"} {
			r, ok := got[name]
			if !ok || r.Estimate == nil {
				t.Errorf("%s %s: %s missing or failed: %+v", c.name, c.ext, name, r)
				continue
			}
			if *r.Estimate != want[name] {
				t.Errorf("%s %s: %s = %.17g, demo %.17g", c.name, c.ext, name, *r.Estimate, want[name])
			}
		}
		if r := got["fqe"]; r.Model != "tabular" || r.Estimand != "horizon" {
			t.Errorf("%s: fqe row model %q estimand %q", c.name, r.Model, r.Estimand)
		}
		if r := got["dr"]; r.Model != "marginal/tabular" || r.SE == nil || r.WaldLow == nil || !(*r.WaldLow < *r.Estimate && *r.Estimate < *r.WaldHigh) {
			t.Errorf("%s: dr row %+v", c.name, r)
		}
		if r := got["bch-tabular"]; r.Estimand != "long-run" || r.Note == "" {
			t.Errorf("%s: bch-tabular under horizon must say it targets the long-run value: %+v", c.name, r)
		}
		if rep.Data.Estimand != "horizon" {
			t.Errorf("%s: data estimand %q", c.name, rep.Data.Estimand)
		}
	}
}

// Without the target's whole distribution the value-based estimators are
// left out of the default set, and asked for by name they get a row
// saying what is missing.
func TestValueEstimatorsNeedTheTargetDistribution(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "--out", path, "-n", "10", "-T", "20"); code != ExitOK {
		t.Fatal(errOut)
	}
	out, errOut, code := run(t, "estimate", "--data", path, "--json", "--bootstrap", "0")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var rep evaluate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Estimates {
		switch r.Estimator {
		case "model-based", "fqe", "dr":
			t.Errorf("%s ran without the target's distribution", r.Estimator)
		}
	}
	out, errOut, code = run(t, "estimate", "--data", path, "--json", "--bootstrap", "0", "--estimators", "fqe,naive")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	rep = evaluate.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Estimates) != 2 || rep.Estimates[0].Estimate != nil || !strings.Contains(rep.Estimates[0].Error, "target_prob_0") || rep.Estimates[1].Estimate == nil {
		t.Errorf("fqe asked for without the distribution: %+v", rep.Estimates)
	}
}

// Bad target distributions are refused with the file, row and column, or
// the episode and step for a policy file that disagrees with the logs.
func TestTargetDistributionBadInput(t *testing.T) {
	dir := t.TempDir()
	header := "episode,t,state,action,reward,behavior_prob,target_prob_0,target_prob_1\n"
	for i, c := range []struct {
		body, want string
	}{
		{"a,0,0,1,1,0.5,0.5,0.6\n", `row 2, column "target_prob_0"`},
		{"a,0,0,1,1,0.5,0.5,\n", `row 2, column "target_prob_1"`},
		{"a,0,0,1,1,0.5,1.5,-0.5\n", `row 2, column "target_prob_`},
	} {
		path := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(path, []byte(header+c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := run(t, "estimate", "--data", path, "--bootstrap", "0")
		if code != ExitError || !strings.Contains(errOut, c.want) {
			t.Errorf("%d: exit %d, stderr %q; want %q", i, code, errOut, c.want)
		}
	}
	// A policy file that disagrees with the logged target probabilities.
	logs := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "--out", logs, "-n", "5", "-T", "10"); code != ExitOK {
		t.Fatal(errOut)
	}
	other := filepath.Join(dir, "pi14.csv")
	if err := os.WriteFile(other, mustPolicyCSV(t, "pi14"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "estimate", "--data", logs, "--target-policy", other, "--bootstrap", "0")
	if code != ExitError || !strings.Contains(errOut, "t = ") || !strings.Contains(errOut, "pi14.csv") {
		t.Errorf("disagreeing policy file: exit %d, stderr %q", code, errOut)
	}
}

// mustPolicyCSV returns one of the paper's Taxi policies as a policy file.
func mustPolicyCSV(t *testing.T, name string) []byte {
	t.Helper()
	p, err := taxi.Policy(name)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
