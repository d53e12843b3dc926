package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ihope-ope/ihope/figure/results"
)

// fakeExperiment is a cheap grid for testing the runner: panel "n" has
// settings n = 1..4 whose estimators average n normal draws (truth 0);
// panel "metric" repeats n = 2 and n = 4 with the same Keys, so they are
// computed once per seed. runs counts computations, truths the calls of
// the memoised truth, fakePools the calls of the per-seed memo.
func fakeExperiment(runs, truths *atomic.Int64) *Experiment {
	cell := func(n int) func(context.Context, *Cell) (*Outcome, error) {
		return func(ctx context.Context, c *Cell) (*Outcome, error) {
			runs.Add(1)
			v, err := c.Memo("truth", func() (any, error) {
				truths.Add(1)
				return 0.0, nil
			})
			if err != nil {
				return nil, err
			}
			pool, err := c.SeedMemo("pool", func() (any, error) {
				fakePools.Add(1)
				return c.Rand("pool").Float64(), nil
			})
			if err != nil {
				return nil, err
			}
			rng := c.Rand("data") // no n in the stream: common random numbers
			sum, first := 0.0, 0.0
			for i := range n {
				x := rng.NormFloat64()
				if i == 0 {
					first = x
				}
				sum += x
			}
			out := &Outcome{Truth: v.(float64), TruthMethod: "exact",
				Records: []results.Record{
					{Estimator: "naive", Estimate: results.Float(sum / float64(n))},
					{Estimator: "wis-stepwise", Estimate: results.Float(first)},
					{Estimator: "model-based", Error: "no model"},
				},
				Metrics: map[string]float64{"n": float64(n), "inf": math.Inf(1), "pool": pool.(float64)},
				Vectors: map[string][]float64{"v": {first, math.NaN()}},
			}
			return out, nil
		}
	}
	return &Experiment{
		Name: "fake", Description: "a test grid", Seeds: 5, QuickSeeds: 2,
		Panels: func(quick bool) ([]Panel, error) {
			var n, m Panel
			n = Panel{Name: "n", XName: "n", Kind: results.KindMSE}
			m = Panel{Name: "metric", XName: "n", Kind: results.KindMetric, Metric: "n", KeepVectors: true}
			for k := 1; k <= 4; k++ {
				key := fmt.Sprintf("n=%d", k)
				n.Settings = append(n.Settings, Setting{ID: key, X: float64(k), Key: key, Run: cell(k)})
				if k%2 == 0 {
					m.Settings = append(m.Settings, Setting{ID: key, X: float64(k), Key: key, Run: cell(k)})
				}
			}
			return []Panel{n, m}, nil
		},
	}
}

// fakePools counts the per-seed memo's computations of fakeExperiment.
var fakePools atomic.Int64

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRunnerDeterministicAcrossWorkers(t *testing.T) {
	var files [][]byte
	for _, workers := range []int{1, 3} {
		var runs, truths atomic.Int64
		fakePools.Store(0)
		dir := t.TempDir()
		r := &Runner{Dir: dir, Workers: workers}
		sum, err := r.Run(context.Background(), fakeExperiment(&runs, &truths))
		if err != nil {
			t.Fatal(err)
		}
		// 5 seeds x (4 + 2) cells, but the metric panel shares its Keys.
		if sum.Ran != 30 || sum.Found != 0 || len(sum.Lines) != 30 {
			t.Errorf("workers %d: ran %d, found %d, lines %d; want 30, 0, 30", workers, sum.Ran, sum.Found, len(sum.Lines))
		}
		if got := runs.Load(); got != 20 {
			t.Errorf("workers %d: %d computations, want 20 (4 settings x 5 seeds)", workers, got)
		}
		if got := truths.Load(); got != 1 {
			t.Errorf("workers %d: memoised truth computed %d times, want 1", workers, got)
		}
		if got := fakePools.Load(); got != 5 {
			t.Errorf("workers %d: per-seed memo computed %d times, want 5 (once per seed)", workers, got)
		}
		files = append(files, readFile(t, sum.File))
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("results differ between 1 and 3 workers")
	}
}

func TestRunnerLines(t *testing.T) {
	var runs, truths atomic.Int64
	dir := t.TempDir()
	sum, err := (&Runner{Dir: dir, Seeds: 2, Workers: 2}).Run(context.Background(), fakeExperiment(&runs, &truths))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "fake.jsonl"); sum.File != want {
		t.Errorf("file %s, want %s", sum.File, want)
	}
	// Canonical order: panel n settings 1..4 then panel metric 2, 4; seeds
	// inside each setting.
	var keys []string
	for _, l := range sum.Lines {
		keys = append(keys, l.Key())
	}
	want := "n/n=1/0 n/n=1/1 n/n=2/0 n/n=2/1 n/n=3/0 n/n=3/1 n/n=4/0 n/n=4/1 metric/n=2/0 metric/n=2/1 metric/n=4/0 metric/n=4/1"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
	// Common random numbers: the first draw of seed 0 is the same at every
	// n, and the n = 1 naive estimate equals it.
	first := float64(sum.Lines[0].Records[1].Estimate)
	for _, l := range sum.Lines {
		if l.Panel != "n" || l.Seed != 0 {
			continue
		}
		if got := float64(l.Records[1].Estimate); got != first {
			t.Errorf("%s: first draw %v, want %v", l.Key(), got, first)
		}
		if got, want := float64(l.Records[1].SqError), first*first; got != want {
			t.Errorf("%s: sq_error %v, want %v", l.Key(), got, want)
		}
		if !math.IsNaN(float64(l.Records[2].Estimate)) || l.Records[2].Error != "no model" {
			t.Errorf("%s: failed estimator recorded as %+v", l.Key(), l.Records[2])
		}
		if l.Vectors != nil {
			t.Errorf("%s: vectors kept in a panel that does not draw them", l.Key())
		}
	}
	if got := float64(sum.Lines[0].Records[0].Estimate); got != first {
		t.Errorf("n=1 naive %v, want the first draw %v", got, first)
	}
	m := sum.Lines[8]
	if m.Records != nil || len(m.Vectors["v"]) != 2 || !math.IsInf(m.Metric("inf"), 1) || m.Metric("n") != 2 {
		t.Errorf("metric line %s: %+v", m.Key(), m)
	}
}

// TestRunnerResume interrupts a run after k cells (context cancellation),
// tears its last line as a kill would, resumes it, and checks that the
// results file is byte for byte the file of an uninterrupted run.
func TestRunnerResume(t *testing.T) {
	var runs, truths atomic.Int64
	exp := fakeExperiment(&runs, &truths)
	ref, err := (&Runner{Dir: t.TempDir(), Workers: 2}).Run(context.Background(), exp)
	if err != nil {
		t.Fatal(err)
	}
	want := readFile(t, ref.File)

	for _, k := range []int{1, 7, 20} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		r := &Runner{Dir: dir, Workers: 2, Progress: func(done, total int) {
			if done >= k {
				cancel()
			}
		}}
		sum, err := r.Run(ctx, exp)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("k=%d: interrupted run returned %v, want context.Canceled", k, err)
		}
		if sum.Ran < k || sum.Ran >= 30 {
			t.Fatalf("k=%d: interrupted run wrote %d cells", k, sum.Ran)
		}
		// A kill in the middle of a write leaves a torn last line.
		f, err := os.OpenFile(sum.File, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"experiment":"fake","panel":"n","sett`)
		f.Close()
		lines, repaired, err := results.Read(sum.File)
		if err != nil || !repaired || len(lines) != sum.Ran {
			t.Fatalf("k=%d: ReadResults: %d lines, repaired %v, err %v; want %d, true, nil", k, len(lines), repaired, err, sum.Ran)
		}

		r.Progress = nil
		res, err := r.Run(context.Background(), exp)
		if err != nil {
			t.Fatalf("k=%d: resume: %v", k, err)
		}
		if !res.Repaired || res.Found != sum.Ran || res.Found+res.Ran != 30 {
			t.Errorf("k=%d: resume found %d, ran %d, repaired %v; want %d, %d, true", k, res.Found, res.Ran, res.Repaired, sum.Ran, 30-sum.Ran)
		}
		if got := readFile(t, res.File); !bytes.Equal(got, want) {
			t.Errorf("k=%d: resumed results differ from an uninterrupted run", k)
		}
		// A third run has nothing to do and changes nothing.
		again, err := r.Run(context.Background(), exp)
		if err != nil || again.Ran != 0 || again.Found != 30 {
			t.Errorf("k=%d: rerun ran %d, found %d, err %v", k, again.Ran, again.Found, err)
		}
		if got := readFile(t, res.File); !bytes.Equal(got, want) {
			t.Errorf("k=%d: a rerun changed the results file", k)
		}
	}
}

func TestRunnerErrors(t *testing.T) {
	var runs, truths atomic.Int64
	exp := fakeExperiment(&runs, &truths)
	dir := t.TempDir()
	path := results.FileName(dir, "fake", false)
	good := `{"experiment":"fake","panel":"n","setting":"n=1","x_name":"n","x":1,"seed":0,"truth":0,"truth_se":0}` + "\n"
	cases := []struct {
		content string
		want    string
	}{
		{good + "not json\n" + good, "fake.jsonl:2: not a results line"},
		{`{"experiment":"other","panel":"n","setting":"n=1","x_name":"n","x":1,"seed":0,"truth":0,"truth_se":0}` + "\n", `results of experiment "other"`},
		{good + `{"experiment":"fake","panel":"n","setting":"n=1","bogus":1}` + "\n" + good, `fake.jsonl:2: not a results line: json: unknown field "bogus"`},
	}
	for i, c := range cases {
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := (&Runner{Dir: dir, Workers: 1}).Run(context.Background(), exp)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: error %v, want it to contain %q", i, err, c.want)
		}
	}

	// A failing cell stops the run and names the cell.
	bad := &Experiment{Name: "bad", Panels: func(bool) ([]Panel, error) {
		return []Panel{{Name: "p", Kind: results.KindMSE, Settings: []Setting{{ID: "s", Run: func(context.Context, *Cell) (*Outcome, error) {
			return nil, errors.New("boom")
		}}}}}, nil
	}}
	_, err := (&Runner{Dir: dir, Seeds: 3}).Run(context.Background(), bad)
	if err == nil || err.Error() != "experiment bad, panel p, setting s, seed 0: boom" &&
		!strings.HasPrefix(err.Error(), "experiment bad, panel p, setting s, seed ") {
		t.Errorf("failing cell: %v", err)
	}
	dup := &Experiment{Name: "dup", Panels: func(bool) ([]Panel, error) {
		return []Panel{{Name: "p", Kind: results.KindMSE}, {Name: "p", Kind: results.KindMSE}}, nil
	}}
	if _, err := (&Runner{Dir: dir}).Run(context.Background(), dup); err == nil || err.Error() != `experiment dup: panel "p" twice` {
		t.Errorf("duplicate panel: %v", err)
	}
}

func TestCellRand(t *testing.T) {
	a := (&Cell{Experiment: "x", Seed: 3}).Rand("data").Uint64()
	b := Rand("x", "data", 3).Uint64()
	c := (&Cell{Experiment: "x", Seed: 4}).Rand("data").Uint64()
	d := (&Cell{Experiment: "x", Seed: 3}).Rand("truth").Uint64()
	e := (&Cell{Experiment: "y", Seed: 3}).Rand("data").Uint64()
	if a != b {
		t.Errorf("same experiment, stream and seed: %d != %d", a, b)
	}
	if a == c || a == d || a == e {
		t.Errorf("different seed, stream or experiment gave the same first number %d", a)
	}
}

func TestMonteCarlo(t *testing.T) {
	i := 0
	alt := func(*rand.Rand) float64 { i++; return float64(i % 2) } // 1, 0, 1, 0
	m, se := MonteCarlo(nil, 4, alt)
	// mean 1/2, s^2 = 1/3, se = sqrt(1/3/4)
	if m != 0.5 || math.Abs(se-math.Sqrt(1.0/12)) > 1e-15 {
		t.Errorf("MonteCarlo = %v, %v; want 0.5, %v", m, se, math.Sqrt(1.0/12))
	}
	m, se = MonteCarlo(nil, 10, func(*rand.Rand) float64 { return 3 })
	if m != 3 || se != 0 {
		t.Errorf("constant: %v, %v; want 3, 0", m, se)
	}
}

// A seed's memo lives until the seed's last job is done.
func TestSeedMemos(t *testing.T) {
	jobs := []*job{{seed: 0}, {seed: 0}, {seed: 1}}
	s := newSeedMemos(jobs)
	m0 := s.get(0)
	if s.get(0) != m0 || s.get(1) == m0 {
		t.Fatal("get does not return one memo per seed")
	}
	s.done(0)
	if s.get(0) != m0 {
		t.Error("seed 0's memo dropped with a job left")
	}
	s.done(0)
	s.done(1)
	if len(s.m) != 0 {
		t.Errorf("%d memos left after every job is done", len(s.m))
	}
}

// A run with fewer seeds than its results file holds reports only the
// seeds asked for, and leaves the others in the file.
func TestRunnerFewerSeeds(t *testing.T) {
	var runs, truths atomic.Int64
	dir := t.TempDir()
	exp := fakeExperiment(&runs, &truths)
	if _, err := (&Runner{Dir: dir, Seeds: 3}).Run(context.Background(), exp); err != nil {
		t.Fatal(err)
	}
	sum, err := (&Runner{Dir: dir, Seeds: 2}).Run(context.Background(), exp)
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[int]bool{}
	for _, l := range sum.Lines {
		seeds[l.Seed] = true
	}
	if len(sum.Lines) != 12 || len(seeds) != 2 || sum.Found != 12 || sum.Ran != 0 {
		t.Errorf("lines %d of seeds %v, found %d, ran %d; want 12 lines of seeds 0 and 1, all found", len(sum.Lines), seeds, sum.Found, sum.Ran)
	}
	all, _, err := results.Read(sum.File)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 18 {
		t.Errorf("the file holds %d lines, want the 18 of 3 seeds", len(all))
	}
}
