package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/figure/results"
)

// Every renamed flag works under its new name silently and under its old
// name with a warning that names the new one, with the same output and
// the same files; both names at once are refused, and --help shows only
// the new name.
func TestRenamedFlags(t *testing.T) {
	tmp := t.TempDir()
	pend := filepath.Join(tmp, "pend.csv")
	if _, errOut, code := run(t, "sample", "--env", "pendulum", "-n", "6", "-T", "50", "--out", pend); code != ExitOK {
		t.Fatal(errOut)
	}
	cases := []struct {
		args     []string // the command, without the renamed flags
		old, new []string // the renamed flags, old and new names; "DIR" is replaced by a fresh directory
		file     string   // a file the command writes in DIR, the same under both names
	}{
		{[]string{"estimate", "--data", pend, "--json", "--bootstrap", "4", "--estimators", "naive,bch-kernel"},
			[]string{"--bootstrap-neural", "2"}, []string{"--bootstrap-refit", "2"}, ""},
		{[]string{"experiment", "ring", "--quick"},
			[]string{"--workers", "1", "--out", "DIR"}, []string{"--parallel-cells", "1", "--out-dir", "DIR"}, "ring.quick.jsonl"},
		{[]string{"benchmark", "--quick", "--suite", "dice"},
			[]string{"--workers", "1", "--out", "DIR"}, []string{"--parallel-cells", "1", "--out-dir", "DIR"}, "leaderboard-dice.quick.md"},
		{[]string{"train", "taxi", "--iterations", "3", "--seed", "5"},
			[]string{"--out", "DIR"}, []string{"--out-dir", "DIR"}, "pi-3.csv"},
	}
	for _, c := range cases {
		verb := c.args[0]
		t.Run(verb, func(t *testing.T) {
			// runWith runs the command with the renamed flags given by
			// flags; the directory's name is replaced by DIR in stdout.
			runWith := func(flags []string) (stdout, stderr, dir string) {
				t.Helper()
				dir = t.TempDir()
				var args []string
				for _, f := range flags {
					args = append(args, strings.ReplaceAll(f, "DIR", dir))
				}
				out, errOut, code := run(t, append(append([]string(nil), c.args...), args...)...)
				if code != ExitOK {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
				out = wallTime.ReplaceAllString(strings.ReplaceAll(out, dir, "DIR"), "Wall time T")
				return out, errOut, dir
			}
			newOut, newErr, newDir := runWith(c.new)
			oldOut, oldErr, oldDir := runWith(c.old)
			if strings.Contains(newErr, "deprecated") {
				t.Errorf("new names %v warn: %s", c.new, newErr)
			}
			for i := 0; i < len(c.old); i += 2 {
				want := "ihope: warning: " + c.old[i] + " is deprecated: use " + c.new[i]
				if !strings.Contains(oldErr, want) {
					t.Errorf("old name %s: stderr %q lacks %q", c.old[i], oldErr, want)
				}
			}
			if oldOut != newOut {
				t.Errorf("old names print\n%s\nnew names\n%s", oldOut, newOut)
			}
			if c.file != "" {
				// The leaderboard states its wall time, which no two runs share.
				a, errA := os.ReadFile(filepath.Join(newDir, c.file))
				b, errB := os.ReadFile(filepath.Join(oldDir, c.file))
				a = wallTime.ReplaceAll(a, []byte("Wall time T"))
				b = wallTime.ReplaceAll(b, []byte("Wall time T"))
				if errA != nil || errB != nil || len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("%s: new names wrote %d bytes (%v), old names %d (%v), or they differ", c.file, len(a), errA, len(b), errB)
				}
			}
			both := append(append([]string(nil), c.args...), c.new[0], c.new[1], c.old[0], c.old[1])
			if _, errOut, code := run(t, both...); code != ExitUsage || !strings.Contains(errOut, c.old[0]+" is the old name of "+c.new[0]+": give "+c.new[0]+" only") {
				t.Errorf("%s and %s: exit %d, stderr %q", c.new[0], c.old[0], code, errOut)
			}
			helpArgs := []string{verb, "--help"}
			if verb == "train" {
				helpArgs = []string{"train", "taxi", "--help"}
			}
			help, _, _ := run(t, helpArgs...)
			for i := 0; i < len(c.old); i += 2 {
				if !strings.Contains(help, c.new[i]+"=") || strings.Contains(help, c.old[i]+"=") {
					t.Errorf("%s --help shows %s or hides %s:\n%s", verb, c.old[i], c.new[i], help)
				}
			}
		})
	}
}

// The estimate's JSON counts the refitting estimators' resamples under
// resamples_refit and, for one release, under its old name (bch-neural
// refits under --refit).
func TestResamplesRefitField(t *testing.T) {
	pend := filepath.Join(t.TempDir(), "pend.csv")
	if _, errOut, code := run(t, "sample", "--env", "pendulum", "-n", "6", "-T", "50", "--out", pend); code != ExitOK {
		t.Fatal(errOut)
	}
	out, errOut, code := run(t, "estimate", "--data", pend, "--json", "--bootstrap", "4", "--bootstrap-refit", "3", "--restarts", "1", "--estimators", "naive,bch-neural", "--refit")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var rep struct {
		Bootstrap map[string]any `json:"bootstrap"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Bootstrap["resamples_refit"] != 3.0 || rep.Bootstrap["resamples_bch_neural"] != 3.0 || rep.Bootstrap["resamples"] != 4.0 {
		t.Errorf("bootstrap %v: want resamples 4, resamples_refit and resamples_bch_neural 3", rep.Bootstrap)
	}
}

// demo --json gives each estimate's signed error as signed_error and, for
// one release, as error: both the estimate minus the truth, exactly.
func TestDemoSignedError(t *testing.T) {
	out, errOut, code := run(t, "demo", "--json", "-n", "10", "-T", "20", "--env", "ring")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var rep struct {
		Truth float64 `json:"truth"`
		Rows  []struct {
			Estimator   string   `json:"estimator"`
			Estimate    *float64 `json:"estimate"`
			SignedError *float64 `json:"signed_error"`
			Error       *float64 `json:"error"`
		} `json:"estimates"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) < 10 {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.Estimate == nil || r.SignedError == nil || r.Error == nil {
			t.Errorf("%s: estimate %v, signed_error %v, error %v", r.Estimator, r.Estimate, r.SignedError, r.Error)
			continue
		}
		if want := *r.Estimate - rep.Truth; *r.SignedError != want || *r.Error != want {
			t.Errorf("%s: signed_error %v, error %v, want estimate - truth = %v", r.Estimator, *r.SignedError, *r.Error, want)
		}
	}
}

// The summary of an MSE panel prints "exact" where the MSE is 0 up to
// rounding (an MSE of exactly 0 once printed as a log10 of -Inf), and the
// log10 elsewhere.
func TestSummaryExactMSE(t *testing.T) {
	p := results.Panel{Name: "T", XName: "T", Kind: results.KindMSE,
		Settings: []results.Setting{{ID: "T=10", X: 10}, {ID: "T=100", X: 100}}}
	// Each estimator's error at T=10 and T=100, the same for both seeds:
	// model-based is exact, fqe exact up to rounding (an MSE of 1e-32),
	// naive 0.1 and 0.01 off (log10 MSE -2 and -4).
	errs := map[string][2]float64{"model-based": {0, 0}, "fqe": {1e-16, -1e-16}, "naive": {0.1, 0.01}}
	var lines []results.Line
	for seed := range 2 {
		for i, s := range p.Settings {
			l := results.Line{Panel: "T", Setting: s.ID, X: results.Float(s.X), Seed: seed, Truth: 0.5}
			for _, name := range []string{"model-based", "fqe", "naive"} {
				e := errs[name][i]
				l.Records = append(l.Records, results.Record{Estimator: name, Estimate: results.Float(0.5 + e), SqError: results.Float(e * e)})
			}
			lines = append(lines, l)
		}
	}
	var out bytes.Buffer
	printSummary(&out, "toy", []results.Panel{p}, lines)
	got := out.String()
	for _, want := range []string{
		"model-based  exact  exact",
		"fqe  exact  exact",
		"naive  -2.00  -4.00",
		"exact: MSE 0 up to rounding (at most 1e-20)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "  -Inf") || strings.Contains(got, "-3") {
		t.Errorf("summary prints a log10 of an exact MSE:\n%s", got)
	}
}

// wallTime matches the leaderboard's wall time, which differs between two
// runs of the same command.
var wallTime = regexp.MustCompile(`Wall time [0-9.]+ ?[a-zµ]*s`)
