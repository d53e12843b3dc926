package cli

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
)

// Reading a large log draws a bar of the bytes read and gives the same
// dataset as dataset.ReadFile, for CSV and Parquet.
func TestReadLogProgress(t *testing.T) {
	dir := t.TempDir()
	defer func(size int64, throttle time.Duration) { readProgressMin, readThrottle = size, throttle }(readProgressMin, readThrottle)
	readProgressMin, readThrottle = 0, 0 // every file is large, every read drawn
	for _, ext := range []string{"csv", "csv.gz", "parquet"} {
		path := filepath.Join(dir, "logs."+ext)
		if _, errOut, code := run(t, "sample", "-n", "200", "-T", "100", "--out", path); code != ExitOK {
			t.Fatal(errOut)
		}
		var bar bytes.Buffer
		got, _, err := readLogProgress(path, dataset.ReadOptions{}, &bar)
		if err != nil {
			t.Fatal(err)
		}
		want, err := dataset.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the dataset read with a bar differs", ext)
		}
		if !strings.Contains(bar.String(), "reading logs."+ext) {
			t.Errorf("%s: no bar in %q", ext, bar.String())
		}
	}
	// Errors are dataset.ReadFile's.
	var bar bytes.Buffer
	if _, _, err := readLogProgress(filepath.Join(dir, "logs.txt"), dataset.ReadOptions{}, &bar); err == nil || !strings.Contains(err.Error(), "want .csv, .tsv") {
		t.Errorf("a .txt log: %v", err)
	}
}

// The bootstrap's bars are labelled by what they resample: the slow
// estimators' refits have a bar (and so an ETA) of their own, named, and
// with several target policies each bar names its policy.
func TestGroupLabel(t *testing.T) {
	var entries []ope.Entry
	for _, n := range []string{"wis-stepwise", "bch-kernel", "bch-neural"} {
		e, _ := ope.Lookup(n)
		entries = append(entries, e)
	}
	c := &estimateCmd{}
	if got := c.groupLabel(entries, []int{0}); got != "bootstrap" {
		t.Errorf("fast group: %q", got)
	}
	if got := c.groupLabel(entries, []int{1, 2}); got != "bootstrap, refitting bch-kernel and bch-neural" {
		t.Errorf("slow group: %q", got)
	}
	c.policyLabel = "pi19"
	if got := c.groupLabel(entries, []int{2}); got != "pi19: bootstrap, refitting bch-neural" {
		t.Errorf("slow group of a policy: %q", got)
	}
}

// The training bar counts the evaluations of every network of the
// ensemble and one step for the estimate: a fit without early stopping
// makes exactly as many evaluations as Evaluations says, so the bar
// stands at 9 of 10 when the networks are trained; an estimator that
// trains more networks raises its total instead of running past it.
func TestTrainingProgress(t *testing.T) {
	var buf bytes.Buffer
	opts := ope.Options{Restarts: 3, Neural: ratio.Neural{MaxIter: 120, EvalEvery: 50}}
	per, err := opts.Neural.Evaluations()
	if err != nil || per != 3 { // iterations 50, 100 and the last, 120
		t.Fatalf("Evaluations = %d, %v; want 3", per, err)
	}
	readThrottle = 0
	defer func() { readThrottle = 100 * time.Millisecond }()
	progress, finish := trainingProgress(&buf, "bch-neural", opts)
	for range 3 * per {
		progress(0, 0, 0)
	}
	if out := buf.String(); !strings.Contains(out, "bch-neural: training 3 networks") || !strings.Contains(out, " 90%") {
		t.Errorf("bar after 9 of 9 evaluations: %q", out)
	}
	buf.Reset()
	progress(0, 0, 0)                                        // a tenth: a fourth network's
	if out := buf.String(); !strings.Contains(out, " 76%") { // 10 of 13
		t.Errorf("bar after 10 evaluations, total raised to 13: %q", out)
	}
	finish()
}
