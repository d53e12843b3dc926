package cli

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// run calls the CLI as main does and returns stdout, stderr and the code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestDemoDefaults(t *testing.T) {
	out, errOut, code := run(t, "demo", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep demoReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// The check value: pi19, T = 400, gamma = 1.
	if got := rep.Truth; got < -0.1411805 || got > -0.1411795 {
		t.Errorf("truth %.7f, want -0.141180", got)
	}
	want := []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "model-based", "fqe", "mis", "bch-tabular", "dr", "mwl", "mql", "dualdice", "on-policy"}
	if len(rep.Rows) != len(want) {
		t.Fatalf("%d estimators, want %d", len(rep.Rows), len(want))
	}
	for i, row := range rep.Rows {
		if row.Estimator != want[i] {
			t.Errorf("row %d: %s, want %s", i, row.Estimator, want[i])
		}
	}
	// bch-tabular on the default data is within 5% of the truth, and
	// closer than every IS-type estimator and naive (the paper's claim,
	// on this seed).
	errOf := map[string]float64{}
	for _, r := range rep.Rows {
		errOf[r.Estimator] = abs(*r.SignedError)
	}
	if errOf["bch-tabular"] > 0.05*abs(rep.Truth) {
		t.Errorf("bch-tabular error %.4f", errOf["bch-tabular"])
	}
	for _, n := range []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise"} {
		if errOf[n] <= errOf["bch-tabular"] {
			t.Errorf("%s error %.4f is not above bch-tabular's %.4f", n, errOf[n], errOf["bch-tabular"])
		}
	}
}

func TestDemoTable(t *testing.T) {
	out, errOut, code := run(t, "demo", "-n", "20", "-T", "50", "--env", "ring", "--rho", "0.3")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Ring truth: the target picks R with 0.7, so the value is 0.7.
	if !regexp.MustCompile(`truth \(exact\)\s+0\.700000`).MatchString(out) {
		t.Errorf("no ring truth 0.7 in:\n%s", out)
	}
}

func TestUsageErrors(t *testing.T) {
	for i, args := range [][]string{
		{"demo", "--gamma", "0"},
		{"demo", "--mix", "2"},
		{"demo", "--env", "maze"},
		{"demo", "--policy", "pi99"},
		{"demo", "-n", "0"},
		{"nosuchverb"},
		{"estimate"},
		{"estimate", "--data", "x.csv", "--estimators", "magic"},
	} {
		_, errOut, code := run(t, args...)
		if code != ExitUsage {
			t.Errorf("%d %v: exit %d, want %d (%s)", i, args, code, ExitUsage, errOut)
		}
		if !strings.Contains(errOut, "ihope:") {
			t.Errorf("%d %v: no message: %q", i, args, errOut)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// A trained policy file is usable as a demo policy.
func TestTrainTaxiThenDemo(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := run(t, "train", "taxi", "--iterations", "3", "--out-dir", dir, "--seed", "5")
	if code != ExitOK {
		t.Fatalf("train: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "pi-3.csv") {
		t.Fatalf("train output: %s", out)
	}
	_, errOut, code = run(t, "demo", "-n", "5", "-T", "20", "--behavior", dir+"/pi-3.csv")
	if code != ExitOK {
		t.Fatalf("demo with trained policy: exit %d: %s", code, errOut)
	}
}

// TestVersion checks that --version prints one line naming ihope and the
// Go version it was built with, and exits 0.
func TestVersion(t *testing.T) {
	out, errOut, code := run(t, "--version")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !regexp.MustCompile(`^ihope \S+.*, go1\.\d+`).MatchString(out) || strings.Count(out, "\n") != 1 {
		t.Errorf("--version printed %q", out)
	}
}

// TestCommandTreeSame: the tree of one command that Run parses a command's
// args with gives the help, the version and the parse errors that the
// whole tree gives, for every command of app.
func TestCommandTreeSame(t *testing.T) {
	typ := reflect.TypeFor[app]()
	var names []string
	for i := range typ.NumField() {
		if _, cmd := typ.Field(i).Tag.Lookup("cmd"); cmd {
			names = append(names, strings.ToLower(typ.Field(i).Name))
		}
	}
	if len(names) < 7 {
		t.Fatalf("commands %v", names)
	}
	for _, name := range names {
		if _, whole := commandTree([]string{name}).(*app); whole {
			t.Errorf("%s: commandTree gives the whole tree", name)
		}
		for _, args := range [][]string{
			{name, "--help"},
			{name, "-h"},
			{name, "--version"},
			{name, "--no-such-flag"},
			{name, "--gama", "0.9"}, // a near miss: kong suggests --gamma where there is one
			{name, "--n", "x"},
			{name, "unexpected", "--help"},
			{name, "taxi", "--help"},
			{name, "taxi", "--no-such-flag"},
		} {
			var out1, err1, out2, err2 bytes.Buffer
			code1 := runTree(new(app), args, &out1, &err1)
			code2 := Run(args, &out2, &err2)
			if code1 != code2 || out1.String() != out2.String() || err1.String() != err2.String() {
				t.Errorf("%v: the whole tree gives exit %d,\n%s%s\nthe command's tree exit %d,\n%s%s",
					args, code1, out1.String(), err1.String(), code2, out2.String(), err2.String())
			}
		}
	}
	for _, args := range [][]string{nil, {"--help"}, {"--version"}, {"estimat"}, {"-n", "3", "demo"}} {
		if _, whole := commandTree(args).(*app); !whole {
			t.Errorf("%v: commandTree does not give the whole tree", args)
		}
	}
}
