package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
)

// TestEstimateJSONNonFinite: logs whose sums overflow (a reward of 1e308,
// a behavior probability of 1e-300) give valid JSON, with every number
// that is not finite written as null and named in its row's error. Before,
// the command printed nothing and failed with "json: unsupported value:
// NaN".
func TestEstimateJSONNonFinite(t *testing.T) {
	for _, tc := range []struct {
		file string
		// row, the fields it must have nulled, and its exact estimate
		// (0: null)
		row      string
		nulled   []string
		estimate float64
	}{
		// naive is the mean reward: (11 + 1e308) / 12; two copies of
		// the 1e308 step in a resample overflow to +Inf - +Inf = NaN.
		{"reward-1e308.csv", "naive", []string{"ci_low (NaN)", "ci_high (NaN)"}, (11 + 1e308) / 12},
		// mis's weight at the 1e-300 step is 0.5/1e-300; its squares
		// overflow the ESS.
		{"behavior-1e-300.csv", "mis", []string{"ci_low (-Inf)", "ci_high (+Inf)", "ess (NaN)"}, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, errOut, code := run(t, "estimate", "--data", "testdata/"+tc.file, "--bootstrap", "20", "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var rep struct {
				Estimates []map[string]any `json:"estimates"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("invalid JSON: %v\n%s", err, out)
			}
			found := false
			for _, r := range rep.Estimates {
				if r["estimator"] != tc.row {
					continue
				}
				found = true
				msg, _ := r["error"].(string)
				for _, f := range tc.nulled {
					name, _, _ := strings.Cut(f, " ")
					if r[name] != nil {
						t.Errorf("%s: %s = %v, want null", tc.row, name, r[name])
					}
					if !strings.Contains(msg, f) {
						t.Errorf("%s: error %q does not name %s", tc.row, msg, f)
					}
				}
				if tc.estimate != 0 {
					if got, _ := r["estimate"].(float64); got != tc.estimate {
						t.Errorf("%s: estimate %v, want %v", tc.row, got, tc.estimate)
					}
				}
			}
			if !found {
				t.Fatalf("no %s row in %s", tc.row, out)
			}
		})
	}
}

// TestRowMarshalNonFinite checks the row's own encoding: finite numbers
// kept, the others null and listed in the error after the row's own.
func TestRowMarshalNonFinite(t *testing.T) {
	nan, inf, one := math.NaN(), math.Inf(1), 1.5
	row := evaluate.Row{Estimator: "x", Estimate: &inf, CILow: &one, CIHigh: &nan, ESS: nan,
		RestartEstimates: []float64{2, math.Inf(-1)}, Error: "earlier"}
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["estimate"] != nil || got["ci_high"] != nil || got["ess"] != nil || got["ci_low"] != 1.5 {
		t.Errorf("numbers: %s", b)
	}
	if re := got["restart_estimates"].([]any); re[0] != 2.0 || re[1] != nil {
		t.Errorf("restart_estimates: %v", re)
	}
	want := "earlier; not a finite number, written as null: estimate (+Inf), ci_high (NaN), ess (NaN), restart_estimates[1] (-Inf)"
	if msg := got["error"].(string); !strings.HasPrefix(msg, want) {
		t.Errorf("error %q, want prefix %q", msg, want)
	}
}

// TestReportPathRefused: --report never overwrites an input. Before,
// --data v.csv --report v.csv replaced the log with HTML and exited 0.
func TestReportPathRefused(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "v.csv")
	data, err := os.ReadFile("testdata/reward-1e308.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logs, data, 0o644); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "pi.html") // an input named .html: refused by os.SameFile
	if err := os.WriteFile(pol, []byte("state,p0,p1\n0,0.5,0.5\n1,0.5,0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(pol, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"--report", logs}, "name it FILE.html"},
		{[]string{"--report", filepath.Join(dir, "out.txt")}, "name it FILE.html"},
		{[]string{"--target-policy", pol, "--report", pol}, "is the input " + pol},
		{[]string{"--target-policy", "A=" + pol, "--report", link}, "is the input " + pol},
	} {
		args := append([]string{"estimate", "--data", logs, "--bootstrap", "0"}, tc.args...)
		_, errOut, code := run(t, args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if got, err := os.ReadFile(logs); err != nil || string(got) != string(data) {
		t.Errorf("the log changed: %v", err)
	}
	// A new .html file is written.
	page := filepath.Join(dir, "report.HTML")
	if _, errOut, code := run(t, "estimate", "--data", logs, "--bootstrap", "0", "--report", page); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if st, err := os.Stat(page); err != nil || st.Size() == 0 {
		t.Errorf("no report: %v", err)
	}
}
