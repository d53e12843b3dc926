package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// ihope is the ihope binary the tests compare the pipeline with, built
// from the main module by TestMain (the pipeline links no part of the
// command line).
var ihope string

func TestMain(m *testing.M) {
	beamlog.LogLevel = "error" // Prism's job logs; the failing tests' errors are checked
	beam.Init()
	dir, err := os.MkdirTemp("", "ihope-beam-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ihope = filepath.Join(dir, "ihope")
	if out, err := exec.Command("go", "build", "-o", ihope, "github.com/ihope-ope/ihope/cmd/ihope").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ihope: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runIhope runs the ihope binary with args, with stdout and stderr.
func runIhope(args []string, stdout, stderr io.Writer) error {
	cmd := exec.Command(ihope, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

// report is the part of ihope estimate's JSON the tests compare.
type report struct {
	Data struct {
		Episodes int `json:"episodes"`
		Steps    int `json:"steps"`
	} `json:"data"`
	Estimates []struct {
		Estimator string   `json:"estimator"`
		Estimate  *float64 `json:"estimate"`
		CILow     *float64 `json:"ci_low"`
		CIHigh    *float64 `json:"ci_high"`
		Error     string   `json:"error"`
	} `json:"estimates"`
}

// shards samples k Taxi shards of n episodes of T steps into a new
// directory, each with its own seed and episode ids.
func shards(t *testing.T, k, n, T int, ext string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i := range k {
		path := filepath.Join(dir, fmt.Sprintf("shard-%02d.%s", i, ext))
		var out, errOut bytes.Buffer
		args := append([]string{"sample", "-n", fmt.Sprint(n), "-T", fmt.Sprint(T), "--seed", fmt.Sprint(i + 1),
			"--id-prefix", fmt.Sprintf("s%d-", i), "--out", path}, flags...)
		if err := runIhope(args, &out, &errOut); err != nil {
			t.Fatalf("sample: %s", errOut.String())
		}
	}
	return dir
}

// estimate runs ihope estimate --json on the shards.
func estimate(t *testing.T, input string, flags ...string) report {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := runIhope(append([]string{"estimate", "--data", input, "--json"}, flags...), &out, &errOut); err != nil {
		t.Fatalf("estimate: %s", errOut.String())
	}
	var r report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// runPipeline runs the pipeline on Prism and returns its report, or the
// pipeline's error.
func runPipeline(t *testing.T, input string, f evaluate.StreamOptions) (report, error) {
	t.Helper()
	output := filepath.Join(t.TempDir(), "out.json")
	c, err := NewConfig(context.Background(), input, output, logio.ReadOptions{}, f)
	if err != nil {
		return report{}, err
	}
	execute := func(ctx context.Context, p *beam.Pipeline) error {
		_, err := prism.Execute(ctx, p)
		return err
	}
	if err := Run(context.Background(), c, execute); err != nil {
		return report{}, err
	}
	raw, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r, nil
}

// sameReports checks the pipeline's report against ihope estimate's: the
// same rows, and estimates and intervals within 1e-12 relative for the
// estimators whose results are sums, which the runner adds in another
// order than one machine does. bch-tabular and model-based solve their
// sums' linear systems iteratively to a relative residual of 1e-12,
// which gives their ratios to about 1e-9 (ratio.Tabular.Tol): another
// order of the same sums moves their results by that much, and the
// bootstrap's quantiles, solved from the point solution, by up to 1e-8.
func sameReports(t *testing.T, got, want report) {
	t.Helper()
	if got.Data.Episodes != want.Data.Episodes || got.Data.Steps != want.Data.Steps {
		t.Errorf("data: %d episodes, %d steps; want %d, %d", got.Data.Episodes, got.Data.Steps, want.Data.Episodes, want.Data.Steps)
	}
	if len(got.Estimates) != len(want.Estimates) || len(want.Estimates) == 0 {
		t.Fatalf("%d rows, want %d", len(got.Estimates), len(want.Estimates))
	}
	worst := 0.0
	for i, w := range want.Estimates {
		g := got.Estimates[i]
		tol := 1e-12
		if w.Estimator == "bch-tabular" || w.Estimator == "model-based" {
			tol = 1e-7
		}
		if w.Estimator == "bch-kernel" || w.Estimator == "mwl" || w.Estimator == "mql" {
			tol = 1e-9 // the scaling's moments merge in another order; the solve carries it
		}
		if w.Estimator == "dualdice" {
			tol = 1e-4 // the same, through a solve whose penalty E_D[w^2] is nearly singular (about 1e-5 measured)
		}
		close := func(a, b *float64) bool {
			if a == nil || b == nil {
				return a == nil && b == nil
			}
			d := math.Abs(*a-*b) / math.Max(1e-300, math.Abs(*b))
			if tol < 1e-9 {
				worst = math.Max(worst, d)
			}
			return d <= tol
		}
		if g.Estimator != w.Estimator || g.Error != w.Error || !close(g.Estimate, w.Estimate) || !close(g.CILow, w.CILow) || !close(g.CIHigh, w.CIHigh) {
			t.Errorf("row %d: pipeline %s %v [%v, %v] %q; estimate %s %v [%v, %v] %q", i, g.Estimator, val(g.Estimate), val(g.CILow), val(g.CIHigh), g.Error,
				w.Estimator, val(w.Estimate), val(w.CILow), val(w.CIHigh), w.Error)
		}
	}
	t.Logf("largest relative difference of the sums' estimators: %.2g", worst)
}

func val(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// The pipeline on Prism over 4 shards gives ihope estimate's report on
// the same shards: every default estimator's estimate and Poisson
// bootstrap interval, to 1e-9 relative; with the target's whole
// distribution in the shards (target_prob_k), the tabular learners too
// (model-based, fqe, mwl, mql, dualdice: an audit found them empty, the
// combiner's first accumulator having no number of actions).
func TestPipelineEqualsEstimate(t *testing.T) {
	for _, flags := range [][]string{nil, {"--target-probs"}} {
		dir := shards(t, 4, 10, 60, "parquet", flags...)
		want := estimate(t, dir, "--bootstrap", "40", "--seed", "7")
		got, err := runPipeline(t, dir, evaluate.StreamOptions{Gamma: 1, Bootstrap: 40, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		if want.Data.Episodes != 40 {
			t.Fatalf("%d episodes, want 40", want.Data.Episodes)
		}
		if flags != nil {
			for _, name := range []string{"model-based", "fqe", "mwl", "mql", "dualdice"} {
				for _, r := range got.Estimates {
					if r.Estimator == name && r.Estimate == nil {
						t.Errorf("%s: no estimate from the pipeline (%s)", name, r.Error)
					}
				}
			}
		}
		sameReports(t, got, want)
	}
}

// A shard whose content is wrong fails the pipeline with the reader's
// error: the file, the row and the column.
func TestPipelineBadShard(t *testing.T) {
	dir := shards(t, 3, 4, 20, "csv")
	bad := filepath.Join(dir, "shard-01.csv")
	raw, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	header := strings.Split(lines[0], ",")
	col := -1
	for j, h := range header {
		if h == "reward" {
			col = j
		}
	}
	fields := strings.Split(lines[3], ",")
	fields[col] = "1.5.2"
	lines[3] = strings.Join(fields, ",")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runPipeline(t, dir, evaluate.StreamOptions{Gamma: 1})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{bad, "row 4", `column "reward"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// An episode id in two shards is refused, naming both.
	dir2 := shards(t, 2, 3, 10, "csv")
	for i := range 2 {
		p := filepath.Join(dir2, fmt.Sprintf("shard-%02d.csv", i))
		raw, _ := os.ReadFile(p)
		os.WriteFile(p, bytes.ReplaceAll(raw, []byte(fmt.Sprintf("s%d-", i)), []byte("x-")), 0o644)
	}
	_, err = runPipeline(t, dir2, evaluate.StreamOptions{Gamma: 1})
	if err == nil || !strings.Contains(err.Error(), `episode "x-0" is in shards`) {
		t.Errorf("shared ids: %v", err)
	}
}

// A worker that fails to read a shard (an I/O error, injected on the
// first three attempts at one shard: the three attempts without delay of
// the past failed the job) reads it again after its back-off, and no
// shard is lost or counted twice: the report is the one without the
// failure.
func TestPipelineReadRetried(t *testing.T) {
	defer shortBackoff()()
	dir := shards(t, 4, 6, 40, "parquet")
	want := estimate(t, dir, "--bootstrap", "20", "--seed", "2")
	var mu sync.Mutex
	attempts := map[string]int{}
	prev := openShard
	openShard = func(ctx context.Context, path string) (io.ReadCloser, error) {
		mu.Lock()
		attempts[filepath.Base(path)]++
		n := attempts[filepath.Base(path)]
		mu.Unlock()
		if filepath.Base(path) == "shard-02.parquet" && n <= 3 {
			return nil, errors.New("injected: connection reset")
		}
		return prev(ctx, path)
	}
	defer func() { openShard = prev }()
	got, err := runPipeline(t, dir, evaluate.StreamOptions{Gamma: 1, Bootstrap: 20, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	sameReports(t, got, want)
	// shard-00 is read once more by the driver (to choose estimators).
	if attempts["shard-02.parquet"] != 4 || attempts["shard-01.parquet"] != 1 {
		t.Errorf("attempts %v: want shard-02 read 4 times, shard-01 once", attempts)
	}
}

// bch-kernel needs two passes (its features are fixed by the whole log):
// Run runs two pipelines on Prism, and the report equals ihope estimate's
// two passes over the same shards up to the order of summation (the
// first pass's moments and samples merge in any order; the samples are
// the same whatever the order, the moments differ by rounding).
func TestPipelineKernelTwoPasses(t *testing.T) {
	p := lineargauss.Problem2D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(5, 0)), p.System, p.Behavior, p.Target, 32, 60)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range 4 {
		var idx []int
		for e := i * 8; e < (i+1)*8; e++ {
			idx = append(idx, e)
		}
		if err := logio.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%02d.parquet", i)), d.Subset(idx)); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"bch-kernel", "wis-stepwise"}
	want := estimate(t, dir, "--bootstrap", "10", "--seed", "3", "--gamma", "0.99", "--estimators", strings.Join(names, ","))
	got, err := runPipeline(t, dir, evaluate.StreamOptions{Estimators: names, Gamma: 0.99, Bootstrap: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want.Data.Steps != 32*60 {
		t.Fatalf("%d steps", want.Data.Steps)
	}
	sameReports(t, got, want)
	if entries, _ := os.ReadDir(filepath.Dir(filepath.Join(dir, "x"))); len(entries) != 4 {
		t.Errorf("%d files in the shards' directory", len(entries))
	}
	// bch-neural's second pass holds networks trained in one process:
	// refused by name, and left out of the default set.
	if _, err := runPipeline(t, dir, evaluate.StreamOptions{Estimators: []string{"bch-neural"}, Gamma: 1}); err == nil || !strings.Contains(err.Error(), "bch-neural cannot run on a cluster") {
		t.Errorf("bch-neural: %v", err)
	}
	// So do the neural forms of fqe and mql (--value-model neural).
	for name, want := range map[string]string{"fqe": "fqe with the neural value learner cannot run on a cluster", "mql": "mql in its neural form cannot run on a cluster"} {
		if _, err := runPipeline(t, dir, evaluate.StreamOptions{Estimators: []string{name}, Gamma: 0.9, ValueModel: "neural", Estimand: "long-run"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s --value-model neural: %v", name, err)
		}
	}
	// The default set is the estimand's: the horizon value's, then the
	// long-run value's.
	for _, c := range []struct{ estimand, want string }{
		{"", "naive,wis-trajectory,wis-stepwise"},
		{"long-run", "bch-kernel"},
	} {
		def, err := runPipeline(t, dir, evaluate.StreamOptions{Gamma: 1, Estimand: c.estimand})
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, e := range def.Estimates {
			rows = append(rows, e.Estimator)
		}
		if strings.Join(rows, ",") != c.want {
			t.Errorf("default rows under %q: %v, want %s", c.estimand, rows, c.want)
		}
	}
}

// fqe's linear value learner streams in two passes too: over 4 shards of
// real states with discrete actions, the two pipelines give ihope
// estimate's report.
func TestPipelineLinearFQE(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(6, 0)), behavior, target, 24, 40)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range 4 {
		var idx []int
		for e := i * 6; e < (i+1)*6; e++ {
			idx = append(idx, e)
		}
		if err := logio.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%02d.parquet", i)), d.Subset(idx)); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"fqe", "wis-stepwise"}
	want := estimate(t, dir, "--bootstrap", "10", "--seed", "3", "--gamma", "0.95", "--estimators", strings.Join(names, ","), "--value-model", "linear")
	got, err := runPipeline(t, dir, evaluate.StreamOptions{Estimators: names, Gamma: 0.95, Bootstrap: 10, Seed: 3, ValueModel: "linear"})
	if err != nil {
		t.Fatal(err)
	}
	sameReports(t, got, want)
}

// mwl, mql and dualdice stream in their kernel form on real states, in
// two passes: over 4 shards the two pipelines give ihope estimate's
// report (estimates and Poisson intervals), and the default set holds
// them.
func TestPipelineMinimaxKernel(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(7, 0)), behavior, target, 24, 40)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range 4 {
		var idx []int
		for e := i * 6; e < (i+1)*6; e++ {
			idx = append(idx, e)
		}
		if err := logio.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%02d.parquet", i)), d.Subset(idx)); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"mwl", "mql", "dualdice"}
	for _, gamma := range []float64{1, 0.95} {
		want := estimate(t, dir, "--bootstrap", "10", "--seed", "3", "--gamma", fmt.Sprint(gamma), "--estimators", strings.Join(names, ","))
		got, err := runPipeline(t, dir, evaluate.StreamOptions{Estimators: names, Gamma: gamma, Bootstrap: 10, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		sameReports(t, got, want)
	}
	def, err := runPipeline(t, dir, evaluate.StreamOptions{Gamma: 1, Estimand: "long-run"})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, e := range def.Estimates {
		rows = append(rows, e.Estimator)
	}
	if got := strings.Join(rows, ","); !strings.Contains(got, "mwl,mql,dualdice") || strings.Contains(got, "bch-neural") {
		t.Errorf("default rows %v", rows)
	}
}

// shortBackoff makes the back-off 6 waits of 1 ms for a test, and
// returns what restores it.
func shortBackoff() func() {
	prev := ReadBackoff
	ReadBackoff = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond}
	return func() { ReadBackoff = prev }
}

// The documented schedule: waits of 0.5 s doubling to 16 s, 7 attempts
// over 31.5 s.
func TestReadBackoffSchedule(t *testing.T) {
	var sum time.Duration
	for i, d := range ReadBackoff {
		if want := 500 * time.Millisecond << i; d != want {
			t.Errorf("wait %d: %v, want %v", i, d, want)
		}
		sum += d
	}
	if len(ReadBackoff) != 6 || sum != 31500*time.Millisecond {
		t.Errorf("%d waits over %v, want 6 over 31.5s", len(ReadBackoff), sum)
	}
}

// Which failures are read again, and how often: a failure to get a
// shard's bytes (an I/O error, a refused permission, a file missing for a
// while) until the back-off runs out, then an error naming the shard and
// the attempts; an error in the content never.
func TestReadWithBackoff(t *testing.T) {
	defer shortBackoff()()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(good, []byte("episode,t,state,action,reward,behavior_prob,target_prob\ne,0,0,0,1,0.5,0.5\n"), 0o644)
	os.WriteFile(bad, []byte("episode,t,state,action,reward,behavior_prob,target_prob\ne,0,0,0,x,0.5,0.5\n"), 0o644)
	ioErr := errors.New("injected: input/output error")
	for _, c := range []struct {
		name     string
		path     string
		fail     int   // attempts that fail with fault before the file is opened
		fault    error // the injected failure
		attempts int
		want     string // in the error; "" for none
	}{
		{"read at once", good, 0, nil, 1, ""},
		{"unreadable for 6 attempts", good, 6, ioErr, 7, ""},
		{"permission refused twice, then given", good, 2, fs.ErrPermission, 3, ""},
		{"unreadable for good", good, 100, ioErr, 7, "good.csv: unreadable after 7 attempts over 6ms (the last: injected: input/output error)"},
		{"parse error", bad, 0, nil, 1, `column "reward"`},
		{"missing for good", filepath.Join(dir, "none.csv"), 0, nil, 7, "none.csv: unreadable after 7 attempts over 6ms (the last: open " + filepath.Join(dir, "none.csv") + ": no such file or directory)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			prev := openShard
			openShard = func(ctx context.Context, path string) (io.ReadCloser, error) {
				n++
				if n <= c.fail {
					return nil, c.fault
				}
				return prev(ctx, path)
			}
			defer func() { openShard = prev }()
			d, err := ReadShard(context.Background(), c.path, logio.ReadOptions{})
			if n != c.attempts {
				t.Errorf("%d attempts, want %d", n, c.attempts)
			}
			if c.want == "" {
				if err != nil || d.NumSteps() != 1 {
					t.Errorf("got %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// A run leaves nothing in the temporary directory: not the loopback
// worker's 0-byte beamloopbackworker-* file (left by every run before),
// not its private directory; a killed run's (a fake ihope-beam-<pid>-*
// of a finished process) is removed; TMPDIR is restored.
func TestRunLeavesNoTempFiles(t *testing.T) {
	dir := shards(t, 2, 4, 20, "csv")
	tmp := t.TempDir()
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Skip("no sh to make a dead pid:", err)
	}
	stale := filepath.Join(tmp, fmt.Sprintf("ihope-beam-%d-1", cmd.Process.Pid))
	if err := os.MkdirAll(filepath.Join(stale, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	if _, err := runPipeline(t, dir, evaluate.StreamOptions{Gamma: 1}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		t.Errorf("left in the temporary directory: %s", e.Name())
	}
	if got := os.Getenv("TMPDIR"); got != tmp {
		t.Errorf("TMPDIR %q after the run, want %q", got, tmp)
	}
}
