package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unloggedCSV without its target_prob_k columns, the target given by
// --target-policy instead: the shards warn as the one file does.
func TestEstimateStreamUnloggedTargetPolicy(t *testing.T) {
	dir := t.TempDir()
	var rows []string
	for i, l := range strings.Split(strings.TrimSpace(unloggedCSV), "\n") {
		f := strings.Split(l, ",")
		// episode,t,state,action,reward,behavior_prob,tp0,tp1,tp2,next_state
		tp := "target_prob"
		if i > 0 {
			st := f[2]
			if st == "0" {
				tp = "0.9"
			} else {
				tp = "0.5"
			}
			if st == "0" && f[3] == "0" || st == "0" && f[3] == "1" {
				tp = "0.05"
			}
		}
		rows = append(rows, strings.Join(append(append(f[:6:6], tp), f[9]), ","))
	}
	whole := filepath.Join(dir, "whole.csv")
	os.WriteFile(whole, []byte(strings.Join(rows, "\n")+"\n"), 0o644)
	shards := filepath.Join(dir, "shards")
	os.Mkdir(shards, 0o755)
	for i, part := range [][]string{rows[1:6], rows[6:]} {
		os.WriteFile(filepath.Join(shards, fmt.Sprintf("part-%d.csv", i)), []byte(rows[0]+"\n"+strings.Join(part, "\n")+"\n"), 0o644)
	}
	pol := filepath.Join(dir, "pi.csv")
	os.WriteFile(pol, []byte("state,p0,p1,p2\n0,0.05,0.05,0.9\n1,0.5,0.5,0\n"), 0o644)
	support := func(rep *estimateReport) []string {
		var out []string
		for _, w := range rep.Warnings {
			if strings.HasPrefix(w, "support: the target puts") {
				out = append(out, w)
			}
		}
		return out
	}
	want := support(estimateJSON(t, "--data", whole, "--bootstrap", "0", "--estimators", "wis-stepwise", "--target-policy", pol))
	got := support(estimateJSON(t, "--data", filepath.Join(shards, "*.csv"), "--bootstrap", "0", "--estimators", "wis-stepwise", "--target-policy", pol))
	if len(want) != 1 || !slices.Equal(got, want) {
		t.Errorf("support warnings: shards %q, one file %q (want one, alike)", got, want)
	}
}
