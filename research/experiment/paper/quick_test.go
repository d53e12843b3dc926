package paper_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/figure"
	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/research/experiment"
	_ "github.com/ihope-ope/ihope/research/experiment/paper" // registers the experiments
)

// TestQuick runs the quick grid of every registered experiment, checks
// its results file and draws its figures.
func TestQuick(t *testing.T) {
	for _, name := range experiment.Names() {
		t.Run(name, func(t *testing.T) {
			if name == "sumo" {
				// Needs the SUMO binary and its Monte Carlo truth is too
				// coarse for CheckTruth in quick mode: TestSumoQuick
				// covers it, and skips without SUMO.
				t.Skip("covered by TestSumoQuick")
			}
			e, _ := experiment.Lookup(name)
			dir := t.TempDir()
			r := &experiment.Runner{Dir: dir, Quick: true, Workers: 2}
			sum, err := r.Run(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, name+".quick.jsonl"); sum.File != want {
				t.Errorf("results file %s, want %s", sum.File, want)
			}
			lines, repaired, err := results.Read(sum.File)
			if err != nil || repaired {
				t.Fatalf("ReadResults: %v, repaired %v", err, repaired)
			}
			want := 0
			for _, p := range sum.Panels {
				k := e.DefaultSeeds(true)
				if p.MaxSeeds > 0 {
					k = min(k, p.MaxSeeds)
				}
				want += k * len(p.Settings)
			}
			if len(lines) != want || sum.Ran != want {
				t.Errorf("%d lines, %d cells run; want %d", len(lines), sum.Ran, want)
			}
			// The tabular worlds have an exact truth (standard error 0);
			// the others (Pendulum, SUMO) a Monte Carlo one with a
			// positive standard error.
			tabular := name == "ring" || strings.HasPrefix(name, "taxi")
			for _, l := range lines {
				exact := l.TruthMethod == "exact" && l.TruthSE == 0
				mc := l.TruthMethod == "monte-carlo" && l.TruthSE > 0
				if l.Experiment != name || !(exact || (mc && !tabular)) {
					t.Errorf("%s: experiment %q, truth %v (%s, se %v)", l.Key(), l.Experiment, l.Truth, l.TruthMethod, l.TruthSE)
				}
				for _, rec := range l.Records {
					if rec.Error != "" || math.IsNaN(float64(rec.SqError)) {
						t.Errorf("%s: %s failed: %s", l.Key(), rec.Estimator, rec.Error)
					}
				}
			}
			if w := results.CheckTruth(sum.Panels, lines); len(w) > 0 {
				t.Errorf("truth warnings: %q", w)
			}
			base := strings.TrimSuffix(sum.File, ".jsonl")
			files, _, err := figure.WriteAll(base, sum.Panels, lines)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 2*len(sum.Panels) {
				t.Errorf("%d figure files for %d panels", len(files), len(sum.Panels))
			}
			for _, f := range files {
				if fi, err := os.Stat(f); err != nil || fi.Size() < 1000 {
					t.Errorf("figure %s: %v", f, err)
				}
			}
			if name == "ring" {
				checkRingVariance(t, lines)
			}
		})
	}
}

// checkRingVariance checks that the Monte Carlo variance of the
// trajectory weight agrees with the exact A^L - 1 within four standard
// errors in every cell, and that the exact values are those of Appendix B
// for rho = 0.45: A = 1 + 0.01/0.2475.
func checkRingVariance(t *testing.T, lines []results.Line) {
	t.Helper()
	a := 1 + 0.01/0.2475
	n := 0
	for _, l := range lines {
		if l.Panel != "variance" {
			continue
		}
		n++
		L := float64(l.X)
		mc, se, ex := l.Metric("var_mc"), l.Metric("var_mc_se"), l.Metric("var_analytic")
		if want := math.Pow(a, L) - 1; math.Abs(ex-want) > 1e-12*want {
			t.Errorf("%s: exact variance %v, want A^%g - 1 = %v", l.Key(), ex, L, want)
		}
		if !(se > 0 && se < 0.1*ex) {
			t.Errorf("%s: standard error %v of %v is not small", l.Key(), se, ex)
		}
		if math.Abs(mc-ex) > 4*se {
			t.Errorf("%s: Monte Carlo %v vs exact %v: %.1f standard errors apart", l.Key(), mc, ex, math.Abs(mc-ex)/se)
		}
	}
	if n == 0 {
		t.Error("no variance cells")
	}
}
