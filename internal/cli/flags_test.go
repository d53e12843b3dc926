package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demo's and sample's behavior mixture is --mix; the old --alpha still
// works there, with a warning, and gives the same data. In estimate
// --alpha is the intervals' level only.
func TestMixFlag(t *testing.T) {
	args := []string{"demo", "--json", "-n", "10", "-T", "20", "--env", "ring"}
	mix, errMix, code := run(t, append(args, "--mix", "0.5")...)
	if code != ExitOK || errMix != "" {
		t.Fatalf("--mix: exit %d, stderr %q", code, errMix)
	}
	old, errOld, code := run(t, append(args, "--alpha", "0.5")...)
	if code != ExitOK || !strings.Contains(errOld, "--alpha is now --mix") {
		t.Fatalf("--alpha: exit %d, stderr %q; want a warning", code, errOld)
	}
	var rep, repOld demoReport
	if err := json.Unmarshal([]byte(mix), &rep); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(old), &repOld); err != nil {
		t.Fatal(err)
	}
	for i, row := range rep.Rows {
		if o := repOld.Rows[i]; row.Estimate == nil || o.Estimate == nil || *row.Estimate != *o.Estimate {
			t.Errorf("%s: --mix 0.5 gives %v, --alpha 0.5 %v", row.Estimator, row.Estimate, o.Estimate)
		}
	}
	if !strings.Contains(rep.World, "with mix = 0.5") {
		t.Errorf("world %q does not name the mixture", rep.World)
	}
	if _, errOut, code := run(t, append(args, "--mix", "0.5", "--alpha", "0.5")...); code != ExitUsage || !strings.Contains(errOut, "give --mix only") {
		t.Errorf("both: exit %d, stderr %q", code, errOut)
	}
	// demo's help names --mix and hides the old name.
	help, _, _ := run(t, "demo", "--help")
	if !strings.Contains(help, "--mix") || strings.Contains(help, "--alpha") {
		t.Errorf("demo --help:\n%s", help)
	}
}

// Rough edges of estimate's output: an estimator named twice runs once;
// a log of one episode says "1 episode"; nothing prints as "-0".
func TestEstimateOutputEdges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "one.csv")
	// One episode whose rewards are all zero, so that the estimates are
	// exactly zero (the sign of a zero sum can be negative).
	log := "episode,t,state,action,reward,behavior_prob,target_prob\n" +
		"a,0,0,0,-0,0.5,0.5\na,1,1,1,0,0.5,0.5\na,2,0,1,-0,0.5,1\na,3,1,0,0,0.5,0.5\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "estimate", "--data", path, "--bootstrap", "0", "--estimators", "naive,naive,wis-stepwise")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "naive" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("naive appears in %d rows:\n%s", n, out)
	}
	if !strings.Contains(out, ": 1 episode, 4 steps") {
		t.Errorf("no '1 episode' in:\n%s", out)
	}
	if strings.Contains(out, "-0 ") || strings.Contains(out, "-0\n") {
		t.Errorf("a -0 in:\n%s", out)
	}
	js, _, _ := run(t, "estimate", "--data", path, "--bootstrap", "0", "--estimators", "naive", "--json")
	if bytes.Contains([]byte(js), []byte(`"estimate":-0`)) {
		t.Errorf("JSON has -0: %s", js)
	}
}
