package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
)

// onPolicyRing writes n episodes of T steps on the 5-state ring logged by
// the target itself (--mix 0), whose reward is 1 for action R, taken with
// probability 0.7: the horizon value is exactly 0.7.
func onPolicyRing(t *testing.T, n, T int, seed string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ring.csv")
	if _, errOut, code := run(t, "sample", "--env", "ring", "--mix", "0", "-n", itoa(n), "-T", itoa(T), "--seed", seed, "--target-probs", "--out", path); code != ExitOK {
		t.Fatalf("sample: %s", errOut)
	}
	return path
}

func itoa(n int) string { return strconv.Itoa(n) }

type boundsJSON struct {
	Estimates []struct {
		Estimator   string   `json:"estimator"`
		Policy      string   `json:"policy"`
		Estimand    string   `json:"estimand"`
		BoundLow    *float64 `json:"bound_low"`
		BoundHigh   *float64 `json:"bound_high"`
		BoundMethod *string  `json:"bound_method"`
		BoundGuar   bool     `json:"bound_guaranteed"`
		BoundLevel  float64  `json:"bound_level"`
		BoundNote   string   `json:"bound_note"`
	} `json:"estimates"`
	Verdicts []evaluate.Verdict `json:"verdicts"`
}

func estimateBounds(t *testing.T, args ...string) boundsJSON {
	t.Helper()
	out, errOut, code := run(t, append([]string{"estimate", "--json", "--bootstrap", "0"}, args...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep boundsJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// On-policy logs with a known value: the HCOPE row holds 0.7, and the
// verdict against a baseline below, above and at the value is better,
// worse and not shown.
func TestEstimateBoundsVerdict(t *testing.T) {
	data := onPolicyRing(t, 2000, 6, "3")
	for _, c := range []struct {
		baseline, want string
	}{{"0.5", "better"}, {"0.9", "worse"}, {"0.7", "not shown"}} {
		rep := estimateBounds(t, "--data", data, "--estimators", "wis-trajectory,naive", "--bounds", "--reward-range", "0,1", "--baseline", c.baseline)
		row := rep.Estimates[0]
		if row.Estimator != "wis-trajectory" || row.BoundMethod == nil || *row.BoundMethod != "hcope" || !row.BoundGuar || row.BoundLevel != 0.95 {
			t.Fatalf("row %+v", row)
		}
		if !(*row.BoundLow <= 0.7 && 0.7 <= *row.BoundHigh) || *row.BoundHigh-*row.BoundLow > 0.15 {
			t.Errorf("bound [%v, %v] of the value 0.7", *row.BoundLow, *row.BoundHigh)
		}
		if rep.Estimates[1].BoundMethod != nil {
			t.Errorf("naive has no bound: %+v", rep.Estimates[1])
		}
		if len(rep.Verdicts) != 1 || rep.Verdicts[0].Verdict != c.want || rep.Verdicts[0].Baseline != c.baseline {
			t.Errorf("baseline %s: verdicts %+v, want %s", c.baseline, rep.Verdicts, c.want)
		}
		if c.want != "not shown" && rep.Verdicts[0].Method != "hcope" {
			t.Errorf("baseline %s: decided by %q", c.baseline, rep.Verdicts[0].Method)
		}
	}
}

// With two bounds consulted (hcope on the horizon value, kernel-bellman
// on the discounted long-run one) the verdict's level is 90%, not the
// deciding bound's 95%: either bound could be the one that fails.
func TestEstimateBoundsVerdictLevel(t *testing.T) {
	data := onPolicyRing(t, 200, 20, "2")
	for _, c := range []struct {
		estimators string
		bounds     int
	}{{"wis-trajectory", 1}, {"fqe,wis-trajectory", 2}} {
		rep := estimateBounds(t, "--data", data, "--estimators", c.estimators, "--gamma", "0.9", "--estimand", "long-run",
			"--bounds", "--reward-range", "0,1", "--bound-calibration", "sign-flip", "--baseline", "0.2")
		n := 0
		for _, row := range rep.Estimates {
			if row.BoundMethod != nil && row.BoundLow != nil {
				n++
			}
		}
		if n != c.bounds || len(rep.Verdicts) != 1 {
			t.Fatalf("%s: %d bounds and verdicts %+v, want %d bounds and one verdict", c.estimators, n, rep.Verdicts, c.bounds)
		}
		v := rep.Verdicts[0]
		if want := 1 - 0.05*float64(c.bounds); v.Verdict != "better" || math.Abs(v.Level-want) > 1e-12 {
			t.Errorf("%s: verdict %s at %v, want better at %v", c.estimators, v.Verdict, v.Level, want)
		}
	}
}

// A policy against itself (two names, one file) is never better or
// worse, over 20 logs.
func TestEstimateBoundsSelf(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.csv")
	var b strings.Builder
	b.WriteString("state,p0,p1\n")
	for s := range 5 {
		b.WriteString(itoa(s) + ",0.4,0.6\n")
	}
	if err := os.WriteFile(pol, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for seed := range 20 {
		data := onPolicyRing(t, 300, 6, itoa(seed+1))
		rep := estimateBounds(t, "--data", data, "--estimators", "wis-trajectory", "--target-policy", "A="+pol, "--target-policy", "B="+pol,
			"--bounds", "--reward-range", "0,1", "--baseline", "B")
		if len(rep.Verdicts) != 1 || rep.Verdicts[0].Policy != "A" || rep.Verdicts[0].Verdict != "not shown" {
			t.Fatalf("seed %d: verdicts %+v", seed, rep.Verdicts)
		}
	}
}

// Without --reward-range the row says why it has no bound; the flags
// that need --bounds are refused without it, and a range that is not one
// is refused.
func TestEstimateBoundsNeedRange(t *testing.T) {
	data := onPolicyRing(t, 50, 6, "1")
	rep := estimateBounds(t, "--data", data, "--estimators", "wis-trajectory", "--bounds")
	row := rep.Estimates[0]
	if row.BoundLow != nil || row.BoundHigh != nil || !strings.Contains(row.BoundNote, "--reward-range") {
		t.Errorf("row %+v: want no bound and a note naming --reward-range", row)
	}
	for _, args := range [][]string{
		{"--reward-range", "0,1"},
		{"--bounds", "--reward-range", "1,0"},
		{"--bounds", "--reward-range", "x"},
		{"--bounds", "--reward-range", "0,1", "--baseline", "nobody"},
	} {
		_, errOut, code := run(t, append([]string{"estimate", "--data", data, "--estimators", "wis-trajectory", "--bootstrap", "0"}, args...)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d (%s), want a usage error", args, code, errOut)
		}
	}
}

// The report shows each row's bound beside its interval and the verdict
// above the policy's table.
func TestEstimateBoundsReport(t *testing.T) {
	data := onPolicyRing(t, 2000, 6, "3")
	html := filepath.Join(t.TempDir(), "r.html")
	if _, errOut, code := run(t, "estimate", "--data", data, "--estimators", "wis-trajectory", "--bootstrap", "0", "--bounds", "--reward-range", "0,1",
		"--baseline", "0.5", "--report", html); code != ExitOK {
		t.Fatal(errOut)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"95% bound</th>", "hcope, guaranteed", "<strong>Verdict.</strong> Against 0.5: better"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// fqe's rows carry the kernel Bellman interval on the long-run value,
// in both calibrations; it holds the exact 0.7.
func TestEstimateBoundsKernelBellman(t *testing.T) {
	data := onPolicyRing(t, 200, 20, "2")
	for _, cal := range []string{"finite-sample", "sign-flip"} {
		rep := estimateBounds(t, "--data", data, "--estimators", "fqe,wis-trajectory", "--gamma", "0.9", "--estimand", "long-run",
			"--bounds", "--reward-range", "0,1", "--bound-calibration", cal)
		row := rep.Estimates[0]
		if row.Estimator != "fqe" || row.BoundMethod == nil || *row.BoundMethod != "kernel-bellman" || row.BoundGuar != (cal == "finite-sample") {
			t.Fatalf("%s: row %+v", cal, row)
		}
		if !(*row.BoundLow <= 0.7 && 0.7 <= *row.BoundHigh) {
			t.Errorf("%s: [%v, %v] misses 0.7", cal, *row.BoundLow, *row.BoundHigh)
		}
		// wis-trajectory targets the horizon value: its HCOPE bound is
		// on that estimand, and it stays.
		if w := rep.Estimates[1]; w.BoundMethod == nil || *w.BoundMethod != "hcope" || w.Estimand != "horizon" {
			t.Errorf("%s: wis-trajectory %+v", cal, w)
		}
	}
}
