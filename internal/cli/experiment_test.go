package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/research/experiment"
)

func TestExperimentList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"experiment", "list"}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"ring ", "taxi-average ", "taxi-discounted ", "n,behavior,T,scatter,tv"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out.String())
		}
	}
}

func TestExperimentAndPlot(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := Run([]string{"experiment", "ring", "--quick", "--parallel-cells", "2", "--out-dir", dir}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	results := filepath.Join(dir, "ring.quick.jsonl")
	figs := []string{"ring.quick-variance.png", "ring.quick-variance.svg", "ring.quick-T.png", "ring.quick-T.svg"}
	for _, f := range append([]string{"ring.quick.jsonl"}, figs...) {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, want := range []string{"ring: 8 cells, 2 seeds", "[variance] mean over seeds", "[T] log10 MSE over seeds", "bch-tabular"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	before, _ := os.ReadFile(results)

	// Plot redraws the figures from the results alone.
	for _, f := range figs {
		os.Remove(filepath.Join(dir, f))
	}
	out.Reset()
	errb.Reset()
	if code := Run([]string{"plot", dir}, &out, &errb); code != ExitOK {
		t.Fatalf("plot: exit %d: %s", code, errb.String())
	}
	for _, f := range figs {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("plot did not redraw %s: %v", f, err)
		}
	}
	if after, _ := os.ReadFile(results); !bytes.Equal(before, after) {
		t.Error("plot changed the results file")
	}

	// A rerun finds every cell and computes none.
	errb.Reset()
	if code := Run([]string{"experiment", "ring", "--quick", "--out-dir", dir}, &out, &errb); code != ExitOK {
		t.Fatalf("rerun: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "8 cells (0 computed now, 8 found)") {
		t.Errorf("rerun said %q", errb.String())
	}
}

// --seeds K on a directory whose results file holds more seeds reports
// and draws K of them; the file keeps the others.
func TestExperimentFewerSeeds(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"3", "2"} {
		var out, errb bytes.Buffer
		if code := Run([]string{"experiment", "ring", "--quick", "--seeds", k, "--out-dir", dir}, &out, &errb); code != ExitOK {
			t.Fatalf("--seeds %s: exit %d: %s", k, code, errb.String())
		}
		if want := "ring: " + map[string]string{"3": "12", "2": "8"}[k] + " cells, " + k + " seeds"; !strings.Contains(out.String(), want) {
			t.Errorf("--seeds %s: output lacks %q:\n%s", k, want, out.String())
		}
		svg, err := os.ReadFile(filepath.Join(dir, "ring.quick-T.svg"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "over " + k + " seeds"; !bytes.Contains(svg, []byte(want)) {
			t.Errorf("--seeds %s: the figure does not say %q", k, want)
		}
	}
}

func TestExperimentErrors(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"experiment", "nope"}, ExitUsage, `unknown experiment "nope": choose from ` + strings.Join(experiment.Names(), ", ") + ` (or list)`},
		{[]string{"experiment", "ring", "--seeds=-1"}, ExitUsage, "--seeds and --parallel-cells must not be negative"},
		{[]string{"experiment"}, ExitUsage, "expected \"<name>\""},
		{[]string{"plot", empty}, ExitError, "no results files (*.jsonl) in " + empty},
	}
	for i, c := range cases {
		var out, errb bytes.Buffer
		code := Run(c.args, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("case %d: %v: exit %d, stderr %q; want %d and %q", i, c.args, code, errb.String(), c.code, c.want)
		}
	}
}

func TestExperimentInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	exp, _ := experiment.Lookup("ring")
	var out, errb bytes.Buffer
	err := runExperiment(ctx, &runEnv{stdout: &out, stderr: &errb}, exp, &experimentCmd{Name: "ring", Quick: true, gridFlags: gridFlags{OutDir: dir}})
	want := "interrupted: 0 cells saved in " + filepath.Join(dir, "ring.quick.jsonl") + "; run the same command again to finish the rest"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
