package cli

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
)

// Pendulum logs (real actions) with the target's draws written by sample
// --target-draws: estimate runs fqe and dr on them, with the estimates of
// the library given the same draws (one per state, so one sample), and
// refuses draws that miss a logged state, naming it, and discrete logs.
func TestEstimateTargetDraws(t *testing.T) {
	dir := t.TempDir()
	logs, drawsFile := filepath.Join(dir, "p.csv"), filepath.Join(dir, "draws.csv.gz")
	if _, errOut, code := run(t, "sample", "--env", "pendulum", "-n", "12", "-T", "60", "--seed", "2", "--out", logs, "--target-draws", drawsFile); code != ExitOK {
		t.Fatal(errOut)
	}
	rep := estimateJSON(t, "--data", logs, "--target-draws", drawsFile, "--gamma", "0.95", "--bootstrap", "0", "--estimators", "fqe,dr")
	d, err := logio.ReadFile(logs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(drawsFile)
	if err != nil {
		t.Fatal(err)
	}
	draws, err := policy.ReadDraws(f, logio.CSVGzip, drawsFile)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if draws.MaxPerState() != 1 {
		t.Fatalf("%d draws at a state, want 1", draws.MaxPerState())
	}
	for i, name := range []string{"fqe", "dr"} {
		en, _ := ope.Lookup(name)
		res, err := en.New(ope.Options{TargetContinuous: draws, Samples: 1, Seed: 1, Estimand: ope.Horizon}).Estimate(d, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if row := rep.Estimates[i]; row.Estimator != name || row.Estimate == nil || *row.Estimate != res.Value {
			t.Errorf("%s: estimate gives %v, the library %v", name, row.Estimate, res.Value)
		}
	}

	// A draws file without its last draw, at the state after episode 11's
	// last step.
	zf, err := os.Open(drawsFile)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(zf)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	zf.Close()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	shortFile := filepath.Join(dir, "short.csv")
	if err := os.WriteFile(shortFile, []byte(strings.Join(lines[:len(lines)-1], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "estimate", "--data", logs, "--target-draws", shortFile, "--estimators", "fqe")
	want := `short.csv: no target draw at the next state after the last step of episode "11" (1 state of the log without one`
	if code != ExitError || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s, want %q", code, errOut, want)
	}

	// Draws at no logged state: the states were rounded, say.
	none := filepath.Join(dir, "none.csv")
	if err := os.WriteFile(none, []byte("state_0,state_1,state_2,action_0\n0.5,0.5,0.5,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "estimate", "--data", logs, "--target-draws", none, "--estimators", "fqe"); code != ExitError || !strings.Contains(errOut, "none of the log's 732 states has a target draw: were the states rounded or reformatted?") {
		t.Errorf("exit %d: %s", code, errOut)
	}

	// The same draws as TSV, plain and compressed, read the same; other
	// names are refused by both commands.
	for _, name := range []string{"draws.tsv", "draws.TSV.gz"} {
		path := filepath.Join(dir, name)
		if _, errOut, code := run(t, "sample", "--env", "pendulum", "-n", "12", "-T", "60", "--seed", "2", "--out", filepath.Join(dir, "again.csv"), "--target-draws", path); code != ExitOK {
			t.Fatal(errOut)
		}
		again := estimateJSON(t, "--data", logs, "--target-draws", path, "--gamma", "0.95", "--bootstrap", "0", "--estimators", "fqe,dr")
		if len(again.Estimates) != 2 {
			t.Fatalf("%s: %d rows, want fqe and dr", name, len(again.Estimates))
		}
		for i, row := range again.Estimates {
			if row.Estimate == nil || rep.Estimates[i].Estimate == nil || *row.Estimate != *rep.Estimates[i].Estimate {
				t.Errorf("%s: %s %v, from the CSV %v", name, row.Estimator, row.Estimate, rep.Estimates[i].Estimate)
			}
		}
	}
	for _, args := range [][]string{
		{"sample", "--env", "pendulum", "-n", "2", "-T", "5", "--out", filepath.Join(dir, "x.csv"), "--target-draws", filepath.Join(dir, "d.parquet")},
		{"sample", "--env", "pendulum", "-n", "2", "-T", "5", "--out", filepath.Join(dir, "x.csv"), "--target-draws", "-"},
		{"estimate", "--data", logs, "--target-draws", filepath.Join(dir, "d.parquet")},
	} {
		if _, errOut, code := run(t, args...); code != ExitUsage || !strings.Contains(errOut, "want a file name ending in .csv, .tsv, .csv.gz or .tsv.gz") {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}

	// Discrete actions: a usage error.
	taxi := filepath.Join(dir, "taxi.csv")
	if _, errOut, code := run(t, "sample", "-n", "3", "-T", "5", "--out", taxi); code != ExitOK {
		t.Fatal(errOut)
	}
	if _, errOut, code := run(t, "estimate", "--data", taxi, "--target-draws", drawsFile); code != ExitUsage || !strings.Contains(errOut, "for logs of real-valued actions") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
