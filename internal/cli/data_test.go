package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"
)

// withStdin runs f with stdin reading b.
func withStdin(t *testing.T, b []byte, f func()) {
	t.Helper()
	old := stdin
	stdin = bytes.NewReader(b)
	defer func() { stdin = old }()
	f()
}

// sampleLogs writes Taxi logs to path with sample's flags args and reads
// them back.
func sampleLogs(t *testing.T, path string, args ...string) *dataset.Dataset {
	t.Helper()
	if _, errOut, code := run(t, append([]string{"sample", "--out", path}, args...)...); code != ExitOK {
		t.Fatal(errOut)
	}
	d, err := logio.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// estimates runs estimate with args and returns its rows as JSON without
// their timings: the numbers an estimate prints, to compare byte for byte.
func estimates(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, append([]string{"estimate", "--json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("estimate %q: exit %d: %s", args, code, errOut)
	}
	var rep evaluate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for i := range rep.Estimates {
		rep.Estimates[i].Seconds = 0
	}
	rows, err := json.Marshal(rep.Estimates)
	if err != nil {
		t.Fatal(err)
	}
	return string(rows)
}

// A log in other OPE tools' names (pscore, trajectory_id, step) with an
// extra user_id column: refused with every flag it needs at once, and
// read with them it gives byte for byte the estimates of the same data in
// contract form.
func TestEstimateMappedColumns(t *testing.T) {
	dir := t.TempDir()
	d := sampleLogs(t, filepath.Join(dir, "logs.csv"), "-n", "30", "-T", "40", "--seed", "5")
	var obp, contract strings.Builder
	obp.WriteString("trajectory_id,user_id,step,state,action,reward,pscore,target_prob,next_state\n")
	contract.WriteString("episode,t,state,action,reward,behavior_prob,target_prob,next_state\n")
	g := func(v float64) string { return strconv.FormatFloat(math.Exp(v), 'g', -1, 64) }
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			next := ""
			if j == hi-1 && d.HasFinal[e] {
				next = strconv.Itoa(int(d.FinalState[e]))
			}
			rest := fmt.Sprintf("%d,%d,%v,%s,%s,%s", d.State[j], d.Action[j], d.Reward[j], g(d.LogBehavior[j]), g(d.LogTarget[j]), next)
			fmt.Fprintf(&obp, "traj-%s,%d,%d,%s\n", d.IDs[e], 1000+e%7, j-lo, rest)
			fmt.Fprintf(&contract, "traj-%s,%d,%s\n", d.IDs[e], j-lo, rest)
		}
	}
	obpPath, contractPath := filepath.Join(dir, "obp.csv"), filepath.Join(dir, "contract.csv")
	for path, s := range map[string]string{obpPath: obp.String(), contractPath: contract.String()} {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out, errOut, code := run(t, "estimate", "--data", obpPath)
	if code != ExitError || out != "" {
		t.Fatalf("unmapped: exit %d, stdout %q", code, out)
	}
	const flags = "--column episode=trajectory_id --ignore user_id --column t=step --column behavior_prob=pscore"
	if !strings.Contains(errOut, "4 problems with the header") || !strings.Contains(errOut, "to read the file as it is, add: "+flags+"\n") {
		t.Errorf("unmapped: stderr\n%s", errOut)
	}

	common := []string{"--bootstrap", "20", "--estimators", "naive,wis-stepwise,mis,bch-tabular"}
	want := estimates(t, append([]string{"--data", contractPath}, common...)...)
	got := estimates(t, append(append([]string{"--data", obpPath}, common...), strings.Fields(flags)...)...)
	if got != want {
		t.Errorf("mapped estimates differ:\n got %s\nwant %s", got, want)
	}
	// --ignore takes a list, and the flags may come in any order.
	got = estimates(t, append(append([]string{"--data", obpPath}, common...),
		"--column", "behavior_prob=pscore", "--ignore", "user_id", "--column", "t=step", "--column", "episode=trajectory_id")...)
	if got != want {
		t.Error("mapped estimates differ with the flags reordered")
	}
}

// Every file form round-trips through sample and estimate, standard input
// and standard output included.
func TestEstimateFileForms(t *testing.T) {
	dir := t.TempDir()
	common := []string{"-n", "10", "-T", "20", "--seed", "2"}
	args := []string{"--bootstrap", "0", "--estimators", "naive,wis-stepwise,bch-tabular"}
	var want string
	for _, f := range logio.Formats {
		path := filepath.Join(dir, "logs."+string(f))
		if _, errOut, code := run(t, append([]string{"sample", "--out", path}, common...)...); code != ExitOK {
			t.Fatalf("sample %s: %s", f, errOut)
		}
		got := estimates(t, append([]string{"--data", path}, args...)...)
		if want == "" {
			want = got
		}
		if got != want {
			t.Errorf("%s: estimates differ:\n got %s\nwant %s", f, got, want)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		withStdin(t, raw, func() { got = estimates(t, append([]string{"--data", "-", "--format", string(f)}, args...)...) })
		if got != want {
			t.Errorf("%s from standard input: estimates differ", f)
		}
		out, errOut, code := run(t, append([]string{"sample", "--out", "-", "--format", string(f)}, common...)...)
		if code != ExitOK || !strings.HasSuffix(errOut, "to standard output\n") {
			t.Fatalf("sample to standard output: exit %d: %s", code, errOut)
		}
		withStdin(t, []byte(out), func() { got = estimates(t, append([]string{"--data", "-", "--format", string(f)}, args...)...) })
		if got != want {
			t.Errorf("%s through a pipe: estimates differ", f)
		}
		// A file misnamed is read with --format.
		misnamed := filepath.Join(dir, "misnamed."+map[bool]string{true: "csv", false: "tsv"}[f == logio.Parquet])
		if err := os.WriteFile(misnamed, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if f != logio.CSV && f != logio.TSV {
			_, errOut, code := run(t, "estimate", "--data", misnamed)
			if code != ExitError || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "give --format ") {
				t.Errorf("%s named %s: exit %d: %s", f, misnamed, code, errOut)
			}
		}
		if got := estimates(t, append([]string{"--data", misnamed, "--format", string(f)}, args...)...); got != want {
			t.Errorf("%s misnamed, with --format: estimates differ", f)
		}
	}
}

// Labels for states and actions: the estimates are those of the same log
// with ids (up to the order of floating-point sums), and --write-mapping
// writes which label has which id.
func TestEstimateCategorical(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.csv")
	d := sampleLogs(t, logs, "-n", "20", "-T", "30")
	var b strings.Builder
	b.WriteString("episode,t,state,action,reward,behavior_logprob,target_logprob,next_state\n")
	actions := []string{"south", "north", "east", "west", "pickup", "dropoff"}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			next := ""
			if j == hi-1 && d.HasFinal[e] {
				next = fmt.Sprintf("cell %d", d.FinalState[e])
			}
			fmt.Fprintf(&b, "%s,%d,cell %d,%s,%v,%v,%v,%s\n", d.IDs[e], j-lo, d.State[j], actions[d.Action[j]], d.Reward[j], d.LogBehavior[j], d.LogTarget[j], next)
		}
	}
	labelled := filepath.Join(dir, "labelled.csv")
	if err := os.WriteFile(labelled, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "estimate", "--data", labelled)
	if code != ExitError || !strings.Contains(errOut, `(if the states are labels, read them with --categorical state)`) {
		t.Errorf("labels without --categorical: exit %d: %s", code, errOut)
	}
	mapping := filepath.Join(dir, "mapping.csv")
	args := []string{"--json", "--bootstrap", "0", "--estimators", "naive,wis-stepwise,bch-tabular"}
	out, errOut, code := run(t, append([]string{"estimate", "--data", labelled, "--categorical", "state,action", "--write-mapping", mapping}, args...)...)
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var got, want evaluate.Report
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	out, _, _ = run(t, append([]string{"estimate", "--data", logs}, args...)...)
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	for i, r := range got.Estimates {
		w := want.Estimates[i]
		if r.Estimate == nil || math.Abs(*r.Estimate-*w.Estimate) > 1e-9 {
			t.Errorf("%s: %v with labels, %v with ids", r.Estimator, r.Error+fmt.Sprint(r.Estimate), *w.Estimate)
		}
	}
	m, err := os.ReadFile(mapping)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(m), "column,id,label\nstate,0,cell ") || !strings.Contains(string(m), "\naction,0,dropoff\naction,1,east\n") {
		t.Errorf("mapping file:\n%.200s", m)
	}
}

func TestDataUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"estimate", "--data", "-"},
		{"estimate", "--data", "x.csv", "--format", "xlsx"},
		{"estimate", "--data", "x.csv", "--column", "propensity=p"},
		{"estimate", "--data", "x.csv", "--column", "pscore"},
		{"estimate", "--data", "x.csv", "--column", "t=step", "--column", "t=steps"},
		{"estimate", "--data", "x.csv", "--column", "t=step", "--ignore", "step"},
		{"estimate", "--data", "x.csv", "--categorical", "reward"},
		{"estimate", "--data", "x.csv", "--write-mapping", "m.csv"},
		{"sample", "--out", "-"},
		{"sample", "--out", "x.csv", "--format", "tsv"},
	} {
		_, errOut, code := run(t, args...)
		if code != ExitUsage || !strings.HasPrefix(errOut, "ihope: ") {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
}

// A hostile Parquet file gets one line on stderr, exit 1 and nothing on
// stdout: neither parquet-go's own warnings (one of these files made it
// print one straight to the terminal) nor a crash. The CLI runs in a
// child process, so that what reaches its stderr by any way is seen.
func TestHostileParquetQuiet(t *testing.T) {
	if args := os.Getenv("IHOPE_CLI_CHILD"); args != "" {
		os.Exit(Run(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
	dir := t.TempDir()
	for _, name := range []string{"b83f4ae015f4d21a", "lz4-page-doubling-oom", "page-size-1GiB", "levels-run-2GiB"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "dataset", "testdata", "fuzz", "FuzzReadParquet", name))
		if err != nil {
			t.Fatal(err)
		}
		// go test fuzz v1\n[]byte("...")
		s := strings.TrimSpace(string(raw[bytes.IndexByte(raw, '\n')+1:]))
		data, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(s, "[]byte("), ")"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".parquet")
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, verbose := range []string{"", "--verbose"} {
			args := []string{"estimate", "--data", path}
			if verbose != "" {
				args = append(args, verbose)
			}
			cmd := exec.Command(os.Args[0], "-test.run", "^TestHostileParquetQuiet$")
			cmd.Env = append(os.Environ(), "IHOPE_CLI_CHILD="+strings.Join(args, "\n"), "GOMEMLIMIT=512MiB")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitError {
				t.Errorf("%s %s: %v, stderr %q", name, verbose, err, stderr.String())
				continue
			}
			if stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 ||
				!strings.HasPrefix(stderr.String(), "ihope: "+path+": ") || !strings.Contains(stderr.String(), "damaged Parquet file") {
				t.Errorf("%s %s: stdout %q, stderr %q", name, verbose, stdout.String(), stderr.String())
			}
		}
	}
}
