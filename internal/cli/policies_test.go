package cli

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// writePolicies writes the named Taxi policies as policy files in dir and
// returns their paths.
func writePolicies(t *testing.T, dir string, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		path := filepath.Join(dir, n+".csv")
		if err := os.WriteFile(path, mustPolicyCSV(t, n), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, path)
	}
	return out
}

// Two target policies on the demo's Taxi logs (n = 200 episodes of
// T = 400 steps under pi18): pi19 is the better one (exact 400-step
// values -0.141180 and -0.265906), and bch-tabular, fqe and dr rank it
// first; with the exact values as references their rank correlation is
// 1 and their regret 0, while naive, which ignores the target, ties the
// two and is charged the worse one.
func TestEstimateTwoPoliciesTaxi(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "--out", logs); code != ExitOK {
		t.Fatal(errOut)
	}
	files := writePolicies(t, dir, "pi19", "pi18")
	m := taxi.New()
	truth := map[string]float64{}
	for _, n := range []string{"pi19", "pi18"} {
		p, err := taxi.Policy(n)
		if err != nil {
			t.Fatal(err)
		}
		truth[n] = mdp.Value(m, p, nil, 400, 1)
	}
	if !(truth["pi19"] > truth["pi18"]) {
		t.Fatalf("exact values %v: pi19 is not the better policy", truth)
	}
	args := []string{"--data", logs, "--bootstrap", "0", "--estimators", "naive,bch-tabular,fqe,dr",
		"--target-policy", files[1], "--target-policy", files[0], // the worse one first
		"--reference", "pi19=" + ftoa(truth["pi19"]), "--reference", "pi18=" + ftoa(truth["pi18"])}
	rep := estimateJSON(t, args...)
	if rep.Ranking == nil {
		t.Fatal("no ranking")
	}
	if got := strings.Join(rep.Ranking.Policies, ","); got != "pi18,pi19" {
		t.Errorf("policies %s, want pi18,pi19 (the order given)", got)
	}
	if got := strings.Join(rep.Ranking.ReferenceOrder, ","); got != "pi19,pi18" {
		t.Errorf("reference order %s", got)
	}
	if len(rep.Estimates) != 8 {
		t.Errorf("%d rows, want 4 estimators x 2 policies", len(rep.Estimates))
	}
	// Each policy's rows are that policy's estimates: pi18 is the
	// behavior, whose value the estimators get within a few percent.
	for _, row := range rep.Estimates {
		if row.Estimate == nil || row.Estimator == "naive" {
			continue
		}
		if e := math.Abs(*row.Estimate - truth[row.Policy]); e > 0.03 {
			t.Errorf("%s on %s: %.4f, exact %.4f", row.Estimator, row.Policy, *row.Estimate, truth[row.Policy])
		}
	}
	for _, er := range rep.Ranking.Estimators {
		switch er.Estimator {
		case "naive":
			if er.Spearman != nil || er.RegretAt1 == nil || *er.RegretAt1 != 1 {
				t.Errorf("naive: %+v; want no correlation and regret 1 (its estimates tie)", er)
			}
		default:
			if got := strings.Join(er.Order, ","); got != "pi19,pi18" {
				t.Errorf("%s ranks %s, want pi19 first", er.Estimator, got)
			}
			if er.Compared != 2 || er.Spearman == nil || *er.Spearman != 1 || er.RegretAt1 == nil || *er.RegretAt1 != 0 {
				t.Errorf("%s: %+v; want spearman 1, regret 0 over 2", er.Estimator, er)
			}
		}
	}
	// The text output shows the same ranking.
	out, errOut, code := run(t, append([]string{"estimate"}, args...)...)
	if code != ExitOK {
		t.Fatal(errOut)
	}
	for _, want := range []string{"target policy pi18 (", "target policy pi19 (", "ranking of the 2 target policies",
		"pi18 = pi19"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if line := lineOf(out, "\nreference "); !strings.Contains(line, "pi19 > pi18") {
		t.Errorf("reference line %q", line)
	}
	for _, name := range []string{"bch-tabular", "fqe", "dr"} {
		line := lineOf(out, "\n"+name+" ")
		if !strings.Contains(line, "pi19 > pi18") || !strings.Contains(line, "1.000") || !strings.Contains(line, "0.000") {
			t.Errorf("ranking line of %s: %q", name, line)
		}
	}
}

// lineOf returns the last line of s containing sub (sub may start with
// the newline before it).
func lineOf(s, sub string) string {
	i := strings.LastIndex(s, sub)
	if i < 0 {
		return ""
	}
	rest := strings.TrimPrefix(s[i:], "\n")
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

// Flags of several policies that cannot work are refused as usage errors
// before the logs are read, but for a reference to a policy no file
// names, which may be one of the log's columns.
func TestTargetPoliciesUsage(t *testing.T) {
	dir := t.TempDir()
	files := writePolicies(t, dir, "pi19", "pi18")
	logs := filepath.Join(dir, "logs.csv")
	if _, errOut, code := run(t, "sample", "--out", logs, "-n", "5", "-T", "20"); code != ExitOK {
		t.Fatal(errOut)
	}
	for i, c := range []struct {
		data string
		args []string
		want string
	}{
		{"missing.csv", []string{"--target-policy", files[0], "--target-policy", files[0]}, `two policies named "pi19"`},
		{"missing.csv", []string{"--target-policy", files[0], "--target-policy", files[1], "--reference=-0.1"}, "say which: NAME=VALUE"},
		{logs, []string{"--target-policy", files[0], "--reference", "pi14=-0.1"}, `no target policy "pi14"`},
		{logs, []string{"--reference", "pi14=-0.1"}, `no --target-policy is given and the log names none`},
		{"missing.csv", []string{"--target-policy", files[0], "--reference", "pi19=x"}, "not a finite number"},
		{"missing.csv", []string{"--target-policy", files[0], "--reference", "pi19=1", "--reference=-2"}, "two values"},
	} {
		_, errOut, code := run(t, append([]string{"estimate", "--data", c.data}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("case %d: exit %d, stderr %q; want usage error %q", i, code, errOut, c.want)
		}
	}
	// NAME=FILE names a policy; the same file twice under two names runs.
	rep := estimateJSON(t, "--data", logs, "--bootstrap", "0", "--estimators", "wis-stepwise",
		"--target-policy", "a="+files[0], "--target-policy", "b="+files[0])
	var names []string
	for _, p := range rep.Policies {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"a", "b"}) || *rep.Estimates[0].Estimate != *rep.Estimates[1].Estimate {
		t.Errorf("policies %v, rows %+v", names, rep.Estimates)
	}
}
