package cli

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// namedPolicyLog writes the log at path with the target columns of each
// named Taxi policy (target_logprob@NAME, target_prob_k@NAME,
// next_target_prob_k@NAME) in place of its own, as one CSV, and returns
// its path.
func namedPolicyLog(t *testing.T, path string, names ...string) string {
	t.Helper()
	d, err := logio.ReadFile(path)
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
		if err := logio.WriteCSV(&buf, v); err != nil {
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

// A log without target columns (behavior-only logs, the usual OPE set-up)
// is read with the --target-policy file's probabilities: one policy, two
// policies and shards give the estimates of the same log with the file's
// target_prob column, to the bit. Without a policy file it is refused.
func TestEstimateTargetPolicyWithoutColumn(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "-n", "40", "-T", "100", "--out", logs); code != ExitOK {
		t.Fatal(errOut)
	}
	raw, err := os.ReadFile(logs)
	if err != nil {
		t.Fatal(err)
	}
	table, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var keep []int
	for c, name := range table[0] {
		if !strings.HasPrefix(name, "target_") {
			keep = append(keep, c)
		}
	}
	if len(keep) != len(table[0])-1 {
		t.Fatalf("header %v: want one target column", table[0])
	}
	write := func(name string, rows [][]string) string {
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		for _, row := range rows {
			var out []string
			for _, c := range keep {
				out = append(out, row[c])
			}
			if err := w.Write(out); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	bare := write("bare.csv", table)
	files := writePolicies(t, dir, "pi19", "pi18")
	common := []string{"--bootstrap", "20", "--seed", "3", "--estimators", "naive,wis-stepwise,bch-tabular,fqe,dr,mwl"}
	same := func(a, b *float64) bool { return a != nil && b != nil && *a == *b }
	for _, policies := range [][]string{files[:1], files} {
		var args []string
		for _, f := range policies {
			args = append(args, "--target-policy", f)
		}
		want := estimateJSON(t, append(append([]string{"--data", logs}, args...), common...)...)
		got := estimateJSON(t, append(append([]string{"--data", bare}, args...), common...)...)
		if len(got.Estimates) != 6*len(policies) || len(want.Estimates) != len(got.Estimates) {
			t.Fatalf("%d policies: %d and %d rows", len(policies), len(got.Estimates), len(want.Estimates))
		}
		for i, w := range want.Estimates {
			if g := got.Estimates[i]; g.Policy != w.Policy || !same(g.Estimate, w.Estimate) || !same(g.CILow, w.CILow) || !same(g.CIHigh, w.CIHigh) {
				t.Errorf("%d policies, row %d: without the column %s %s %v, with it %s %s %v", len(policies), i, g.Policy, g.Estimator, g.Estimate, w.Policy, w.Estimator, w.Estimate)
			}
		}
	}

	// Shards without the column, streamed with one policy file.
	shards := filepath.Join(dir, "shards")
	if err := os.Mkdir(shards, 0o755); err != nil {
		t.Fatal(err)
	}
	half := 1 + (len(table)-1)/2
	for half < len(table) && table[half][0] == table[half-1][0] {
		half++ // cut between episodes
	}
	write("shards/a.csv", table[:half])
	write("shards/b.csv", append([][]string{table[0]}, table[half:]...))
	streamArgs := []string{"--target-policy", files[0], "--bootstrap", "0", "--estimators", "wis-stepwise,bch-tabular,fqe"}
	want := estimateJSON(t, append([]string{"--data", logs}, streamArgs...)...)
	got := estimateJSON(t, append([]string{"--data", filepath.Join(shards, "*.csv")}, streamArgs...)...)
	if len(want.Estimates) != 3 || len(got.Estimates) != 3 {
		t.Fatalf("%d and %d rows, want 3", len(got.Estimates), len(want.Estimates))
	}
	for i, w := range want.Estimates {
		if g := got.Estimates[i]; g.Estimate == nil || w.Estimate == nil || !(math.Abs(*g.Estimate-*w.Estimate) <= 1e-12) {
			t.Errorf("%s streamed without the column: %v, want %v", w.Estimator, g.Estimate, w.Estimate)
		}
	}

	// No policy file: the column is missing, and the message says how to give it.
	_, errOut, code := run(t, "estimate", "--data", bare)
	if code == ExitOK || !strings.Contains(errOut, `column "target_prob": required column is missing`) || !strings.Contains(errOut, "--target-policy") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// withLoggedTarget is d with the target's logged probabilities those of p.
func withLoggedTarget(d *dataset.Dataset, p *policy.Tabular) *dataset.Dataset {
	out := *d
	out.LogTarget = slices.Clone(d.LogTarget)
	for j := range out.LogTarget {
		out.LogTarget[j] = math.Log(p.Prob(int(d.State[j]), int(d.Action[j])))
	}
	return &out
}
