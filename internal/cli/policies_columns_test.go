package cli

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env/taxi"
)

// namedPolicyLog writes the log at path with the target columns of each
// named Taxi policy (target_logprob@NAME, target_prob_k@NAME,
// next_target_prob_k@NAME) in place of its own, as one CSV, and returns
// its path.
func namedPolicyLog(t *testing.T, path string, names ...string) string {
	t.Helper()
	d, err := dataset.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for i, name := range names {
		p, err := taxi.Policy(name)
		if err != nil {
			t.Fatal(err)
		}
		v := withLoggedTarget(d, p)
		if err := v.SetTargetPolicy(p); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := dataset.WriteCSV(&buf, v); err != nil {
			t.Fatal(err)
		}
		table, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for r, row := range table {
			for c, cell := range row {
				target := strings.Contains(table[0][c], "target_")
				if r == 0 && target {
					cell += "@" + name
				}
				switch {
				case i == 0 && c == 0:
					rows = append(rows, []string{cell})
				case i == 0 || target:
					rows[r] = append(rows[r], cell)
				}
			}
		}
	}
	out := filepath.Join(filepath.Dir(path), "named.csv")
	var buf bytes.Buffer
	if err := csv.NewWriter(&buf).WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// Two target policies given as columns of the log (target_logprob@pi18,
// target_prob_k@pi19, ...) give the estimates, the ranking and the
// references of the same policies given as --target-policy files, to the
// bit: the policies' columns are read with the reader's own checks and
// the same estimators run on them. Standard input reads the same.
func TestEstimatePolicyColumns(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "-n", "40", "-T", "100", "--out", logs); code != ExitOK {
		t.Fatal(errOut)
	}
	named := namedPolicyLog(t, logs, "pi18", "pi19")
	files := writePolicies(t, dir, "pi18", "pi19")
	common := []string{"--bootstrap", "20", "--seed", "3", "--estimators", "naive,wis-stepwise,bch-tabular,fqe,dr,mwl",
		"--reference", "pi19=-0.14", "--reference", "pi18=-0.27"}
	want := estimateJSON(t, append([]string{"--data", logs, "--target-policy", files[0], "--target-policy", files[1]}, common...)...)
	got := estimateJSON(t, append([]string{"--data", named}, common...)...)
	if len(got.Estimates) != 12 || len(want.Estimates) != 12 {
		t.Fatalf("%d and %d rows, want 6 estimators x 2 policies", len(got.Estimates), len(want.Estimates))
	}
	for i, w := range want.Estimates {
		g := got.Estimates[i]
		same := func(a, b *float64) bool { return a != nil && b != nil && *a == *b }
		if g.Policy != w.Policy || g.Estimator != w.Estimator || !same(g.Estimate, w.Estimate) ||
			!same(g.CILow, w.CILow) || !same(g.CIHigh, w.CIHigh) {
			t.Errorf("row %d: columns give %s %s %v [%v, %v], files %s %s %v [%v, %v]", i, g.Policy, g.Estimator, g.Estimate, g.CILow, g.CIHigh,
				w.Policy, w.Estimator, w.Estimate, w.CILow, w.CIHigh)
		}
	}
	if got.Ranking == nil || strings.Join(got.Ranking.Policies, ",") != "pi18,pi19" || strings.Join(got.Ranking.ReferenceOrder, ",") != "pi19,pi18" {
		t.Errorf("ranking %+v", got.Ranking)
	}
	for i, er := range want.Ranking.Estimators {
		ge := got.Ranking.Estimators[i]
		if strings.Join(ge.Order, ",") != strings.Join(er.Order, ",") {
			t.Errorf("%s ranks %v from columns, %v from files", er.Estimator, ge.Order, er.Order)
		}
	}

	// From standard input, read once and again for the second policy.
	raw, err := os.ReadFile(named)
	if err != nil {
		t.Fatal(err)
	}
	prev := stdin
	stdin = bytes.NewReader(raw)
	defer func() { stdin = prev }()
	piped := estimateJSON(t, append([]string{"--data", "-", "--format", "csv"}, common...)...)
	for i, w := range got.Estimates {
		if g := piped.Estimates[i]; g.Estimate == nil || *g.Estimate != *w.Estimate {
			t.Errorf("row %d from standard input: %v, want %v", i, g.Estimate, w.Estimate)
		}
	}

	// A policy named twice, in the columns and by a file, is refused.
	_, errOut, code := run(t, append([]string{"estimate", "--data", named, "--target-policy", files[1]}, common...)...)
	if code != ExitUsage || !strings.Contains(errOut, `two policies named "pi19"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// With --fit-behavior each target policy weighs by the fitted behavior
// calibrated to itself (behavior.Calibrate is the target's own), so a
// policy's estimates do not depend on the order of the log's target
// columns. Before, every policy reused the first's calibration.
func TestEstimatePolicyColumnsFitBehavior(t *testing.T) {
	rows := map[string]map[string]float64{} // order -> policy/estimator -> estimate
	for _, order := range [][]string{{"pi19", "pi17"}, {"pi17", "pi19"}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "logs.csv")
		sampleLogs(t, path, "-n", "40", "-T", "100", "--target-probs")
		named := namedPolicyLog(t, path, order...)
		rep := estimateJSON(t, "--data", named, "--bootstrap", "0", "--fit-behavior", "--estimators", "mis,wis-stepwise,bch-tabular")
		key := strings.Join(order, ",")
		rows[key] = map[string]float64{}
		for _, r := range rep.Estimates {
			if r.Estimate == nil {
				t.Fatalf("%s %s: %s", r.Policy, r.Estimator, r.Error)
			}
			rows[key][r.Policy+"/"+r.Estimator] = *r.Estimate
		}
	}
	a, b := rows["pi19,pi17"], rows["pi17,pi19"]
	if len(a) != 6 {
		t.Fatalf("rows %v", a)
	}
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %v with pi19's columns first, %v with pi17's", k, v, b[k])
		}
	}
}
