package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaxMemory: a run whose tables or expanded target would exceed
// --max-memory is refused before it allocates them, with what each would
// take; a smaller run, or the same under a higher limit, goes through.
func TestMaxMemory(t *testing.T) {
	dir := t.TempDir()
	// 40 steps, a target policy over 1,000 actions: 40 x 1000 x 17 B =
	// 664 KB expanded.
	var log, pol strings.Builder
	log.WriteString("episode,t,state,action,reward,behavior_prob\n")
	for e := range 20 {
		for t := range 2 {
			fmt.Fprintf(&log, "e%d,%d,%d,%d,1,0.001\n", e, t, t, (7*e+t)%1000)
		}
	}
	pol.WriteString("state")
	for a := range 1000 {
		fmt.Fprintf(&pol, ",p%d", a)
	}
	for s := range 2 {
		fmt.Fprintf(&pol, "\n%d%s", s, strings.Repeat(",0.001", 1000))
	}
	logs, policy := filepath.Join(dir, "log.csv"), filepath.Join(dir, "pi.csv")
	if err := os.WriteFile(logs, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte(pol.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string // in stderr; "" for a run that succeeds
	}{
		{"target expanded", []string{"--data", logs, "--target-policy", policy, "--estimators", "naive", "--max-memory", "500KB"},
			"this run would need at least 664 KB beyond the log (the target policy pi's distribution at every step (40 steps x 1000 actions x 17 B): 664 KB), more than the 500 KB allowed (--max-memory)"},
		{"target expanded, allowed", []string{"--data", logs, "--target-policy", policy, "--estimators", "naive", "--max-memory", "1MB"}, ""},
		// 10^6 states x 2 actions x 8 B = 15.3 MB a table.
		{"tables", []string{"--data", "testdata/state-999999.csv", "--estimators", "naive,fqe,dr", "--max-memory", "20MB"},
			"at least one table of 1000000 states x 2 actions x 8 B for each of fqe, dr: 30.5 MB"},
		{"no tables", []string{"--data", "testdata/state-999999.csv", "--estimators", "naive,wis-trajectory", "--max-memory", "1MB"}, ""},
		{"bad size", []string{"--data", logs, "--max-memory", "lots"}, "--max-memory lots: want a size such as 512MB or 8GB"},
	} {
		_, errOut, code := run(t, append([]string{"estimate", "--bootstrap", "0"}, c.args...)...)
		switch {
		case c.want == "" && code != 0:
			t.Errorf("%s: exit %d: %s", c.name, code, errOut)
		case c.want != "" && (code == 0 || !strings.Contains(errOut, c.want)):
			t.Errorf("%s: exit %d, stderr %q; want %q", c.name, code, errOut, c.want)
		}
	}
}
