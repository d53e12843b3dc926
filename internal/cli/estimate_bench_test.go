package cli

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"
)

// BenchmarkEstimate1M runs every log estimator on 1,000,000 logged Taxi
// steps (2500 episodes x 400), without and with 200 bootstrap resamples.
// Reading the file is measured separately by dataset's benchmarks.
func BenchmarkEstimate1M(b *testing.B) {
	mix := 1.0
	w, err := (&worldFlags{Env: "taxi", Target: "pi19", Behavior: "pi18", Mix: &mix}).build(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	d, err := sampleWorld(w, 2500, 400, 7)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		B    int
	}{{"bootstrap=0", 0}, {"bootstrap=200", 200}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			o := evaluate.Defaults()
			o.Bootstrap = c.B
			for b.Loop() {
				ev, err := evaluate.New(o)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ev.Evaluate(d, "", nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEstimateFile is `ihope estimate --data FILE --bootstrap 0` in
// process, reading included: the in-memory speed targets of docs/streaming.md
// (1,000,000 Taxi steps from Parquet; the paper's Taxi seed, 80,000 steps
// of CSV). Process start-up (about 25 ms) is not in it; /usr/bin/time on
// the binary measures that too.
func BenchmarkEstimateFile(b *testing.B) {
	mix := 1.0
	w, err := (&worldFlags{Env: "taxi", Target: "pi19", Behavior: "pi18", Mix: &mix}).build(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for _, c := range []struct {
		name string
		n    int
	}{{"taxi-1M.parquet", 2500}, {"taxi-80k.csv", 200}} {
		d, err := sampleWorld(w, c.n, 400, 1)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, c.name)
		if err := logio.WriteFile(path, d); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if code := Run([]string{"estimate", "--data", path, "--bootstrap", "0"}, io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit code %d", code)
				}
			}
		})
	}
}

// BenchmarkCommandTree parses `ihope estimate --data FILE` with the tree of
// the estimate command alone (what Run does) and with the whole tree; the
// file does not exist, so the command stops at once.
func BenchmarkCommandTree(b *testing.B) {
	args := []string{"estimate", "--data", filepath.Join(b.TempDir(), "none.csv")}
	for _, c := range []struct {
		name string
		tree func() any
	}{{"command", func() any { return commandTree(args) }}, {"whole", func() any { return new(app) }}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if code := runTree(c.tree(), args, io.Discard, io.Discard); code != ExitError {
					b.Fatalf("exit code %d", code)
				}
			}
		})
	}
}
