package ope_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// coverageWorld is a world whose two estimands are known exactly, with
// the options that let the estimators of its cells run on its logs.
type coverageWorld struct {
	name  string
	n, T  int
	opts  ope.Options // Estimand and Seed are set per cell and seed
	truth map[ope.Estimand]float64
	// sample returns the logs of a seed.
	sample func(t testing.TB, seed uint64) *dataset.Dataset
}

// taxiCoverage is the paper's Taxi, behavior pi18, target pi19, gamma = 1:
// the exact 400-step value from reset and the exact long-run average.
func taxiCoverage(t testing.TB, n, T int) coverageWorld {
	t.Helper()
	m := taxi.New()
	target, _ := taxi.Policy("pi19")
	long, err := mdp.LongRun(m, target, 1)
	if err != nil {
		t.Fatal(err)
	}
	return coverageWorld{
		name: "Taxi", n: n, T: T,
		opts: ope.Options{Target: target},
		truth: map[ope.Estimand]float64{
			ope.Horizon: mdp.Value(m, target, nil, T, 1),
			ope.LongRun: long,
		},
		sample: func(t testing.TB, seed uint64) *dataset.Dataset { return taxiData(t, seed, n, T) },
	}
}

// gaussCoverage is lineargauss.Problem1D, gamma = 1, logged from the
// behavior's stationary law: its T-step value (System.Value) and average
// reward (System.AverageReward) in closed form. The logged states carry
// no transient, so the long-run estimators see exactly what they target.
func gaussCoverage(t testing.TB, n, T int, opts ope.Options) coverageWorld {
	t.Helper()
	p := lineargauss.Problem1D()
	horizon, err := p.System.Value(p.Target, 1, T)
	if err != nil {
		t.Fatal(err)
	}
	long, err := p.System.AverageReward(p.Target)
	if err != nil {
		t.Fatal(err)
	}
	opts.TargetContinuous = p.Target
	return coverageWorld{
		name: "linear-Gaussian 1-d", n: n, T: T, opts: opts,
		truth: map[ope.Estimand]float64{ope.Horizon: horizon, ope.LongRun: long},
		sample: func(t testing.TB, seed uint64) *dataset.Dataset {
			d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(seed, 0)), p.System, p.Behavior, p.Target, n, T)
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
	}
}

// coverageCell is one estimator of the registry, run under one estimand,
// with B bootstrap resamples.
type coverageCell struct {
	name     string
	estimand ope.Estimand
	B        int
}

// coverageStats is what a cell's seeds gave. Coverage counts are of the
// truth of the estimand the estimator targets (Result.Estimand), at the
// levels 90% and 50%.
type coverageStats struct {
	cell   coverageCell
	seeds  int
	target ope.Estimand // Result.Estimand
	truth  float64
	model  string // Result.Learner
	boot90 int    // percentile intervals holding the truth
	boot50 int
	wald90 int // Wald intervals (estimate ± z SE) holding the truth; -1 without an SE
	wald50 int
	// byTruth counts the 90% percentile intervals holding each
	// estimand's truth (byTruth[target] = boot90).
	byTruth  map[ope.Estimand]int
	errs     []float64 // estimate - truth
	widths   []float64 // of the 90% percentile intervals
	walds    []float64 // of the 90% Wald intervals
	failures int       // failed resamples, over all seeds
	elapsed  time.Duration
}

var (
	z90 = distuv.UnitNormal.Quantile(0.95)
	z50 = distuv.UnitNormal.Quantile(0.75)
)

// measureCoverage runs the cell on the seeds first, first+1, ... (seeds
// of them) of the world: on every seed's logs the estimate (training seed
// = the seed) and the percentile bootstrap interval of ope.Bootstrap
// (seeded by the seed too; every resample refits, and an estimator that
// trains gets a fresh training seed per resample), the interval the
// command line prints; for estimators with a standard error (dr) also the
// Wald interval estimate ± z SE it prints beside it.
func measureCoverage(t testing.TB, w coverageWorld, c coverageCell, first uint64, seeds int) coverageStats {
	t.Helper()
	start := time.Now()
	opts := w.opts
	opts.Estimand = c.estimand
	st := coverageStats{cell: c, seeds: seeds, wald90: -1, wald50: -1, byTruth: map[ope.Estimand]int{}}
	for s := range seeds {
		seed := first + uint64(s)
		d := w.sample(t, seed)
		opts.Seed = seed
		ests, err := ope.New([]string{c.name}, opts)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ests[0].Estimate(d, 1)
		if err != nil {
			t.Fatalf("%s, %s, seed %d: %v", w.name, c.name, seed, err)
		}
		truth, ok := w.truth[res.Estimand]
		if !ok {
			t.Fatalf("%s: no truth for the estimand %q", c.name, res.Estimand)
		}
		st.target, st.truth, st.model = res.Estimand, truth, res.Learner
		st.errs = append(st.errs, res.Value-truth)

		b := ope.Bootstrap{Resamples: c.B, Alpha: 0.1, Seed: seed, Workers: runtime.GOMAXPROCS(0)}
		ivs, err := b.Run(d, 1, ests)
		if err != nil {
			t.Fatal(err)
		}
		iv := ivs[0]
		if len(iv.Estimates) < c.B/2 {
			t.Fatalf("%s, %s, seed %d: %d of %d resamples failed (first: %v)", w.name, c.name, seed, iv.Failures, c.B, iv.FirstFailure)
		}
		st.failures += iv.Failures
		sorted := slices.Sorted(slices.Values(iv.Estimates))
		st.boot90 += holds(iv.Low, iv.High, truth)
		st.boot50 += holds(ope.Quantile(sorted, 0.25), ope.Quantile(sorted, 0.75), truth)
		for e, x := range w.truth {
			st.byTruth[e] += holds(iv.Low, iv.High, x)
		}
		st.widths = append(st.widths, iv.High-iv.Low)
		if res.SE > 0 {
			if st.wald90 < 0 {
				st.wald90, st.wald50 = 0, 0
			}
			st.wald90 += holds(res.Value-z90*res.SE, res.Value+z90*res.SE, truth)
			st.wald50 += holds(res.Value-z50*res.SE, res.Value+z50*res.SE, truth)
			st.walds = append(st.walds, 2*z90*res.SE)
		}
	}
	st.elapsed = time.Since(start)
	return st
}

// holds returns 1 if lo <= x <= hi, else 0.
func holds(lo, hi, x float64) int {
	if lo <= x && x <= hi {
		return 1
	}
	return 0
}

// percentileCeiling is about the best coverage a (1 - alpha) percentile
// interval from B resamples can reach: even when the bootstrap law of the
// estimate is exactly its sampling law, the ends are order statistics of
// B draws. Type-7 quantiles put the lower end at order statistic
// h = (B-1) alpha/2 + 1, and the k-th of B draws has expected
// probability k/(B+1) below it, so the interval holds a fresh draw with
// probability about 1 - 2h/(B+1): 0.891 for B = 200, 0.882 for 100, 0.814
// for 20 at alpha = 0.1. A coverage near this ceiling, not near 1 - alpha,
// is what a correct interval with few resamples gives.
func percentileCeiling(B int, alpha float64) float64 {
	h := float64(B-1)*alpha/2 + 1
	return 1 - 2*h/float64(B+1)
}

// rows returns the cell's rows of docs/intervals.md's table: the percentile
// interval and, for estimators with a standard error, the Wald one.
func (st coverageStats) rows(w coverageWorld) []string {
	mean, sd := stat.MeanStdDev(st.errs, nil)
	label := "`" + st.cell.name + "`"
	if st.model != "" && "bch-"+st.model != st.cell.name { // the learners behind dr
		label += " (" + st.model + ")"
	}
	pct := func(k int) string {
		return fmt.Sprintf("%d/%d (%.0f%%)", k, st.seeds, 100*float64(k)/float64(st.seeds))
	}
	out := []string{fmt.Sprintf("| %s | %s | %s %.5f | bootstrap, B = %d | **%s** | %.0f%% | %s | %+.4f | %.4f | %.4f |",
		w.name, label, st.target, st.truth, st.cell.B, pct(st.boot90), 100*percentileCeiling(st.cell.B, 0.1), pct(st.boot50),
		mean, sd, stat.Mean(st.widths, nil))}
	if st.wald90 >= 0 {
		out = append(out, fmt.Sprintf("| %s | %s | %s %.5f | Wald (SE by episode) | **%s** | | %s | %+.4f | %.4f | %.4f |",
			w.name, label, st.target, st.truth, pct(st.wald90), pct(st.wald50), mean, sd, stat.Mean(st.walds, nil)))
	}
	return out
}

// coverageHeader is the header of docs/intervals.md's table.
const coverageHeader = "| world | estimator | estimand, exact truth | interval | 90% interval holds the truth | ceiling for B | 50% interval holds it | bias | sd | mean width (90%) |\n" +
	"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"

// TestCoverageTaxi is the short version of TestCoverageLong that CI runs
// with IHOPE_STAT=1: dr, under the horizon estimand the command line
// chooses for logs of several episodes, on 40 seeds of Taxi logs of n = 50 episodes of
// T = 100 steps (a quarter of the paper's n and T; a refit costs about
// T, not n: the finite-horizon count model backs up all 2000 states T
// times), B = 100 resamples. Its 90% intervals, bootstrap and Wald, must
// hold the exact 100-step value in at least 80% of the seeds (32 of 40).
//
// Can it fail? The seeds are independent, so the number X of seeds whose
// interval holds the truth is Binomial(40, p). For a correct interval
// (p = 0.9; or 0.88, the ceiling of a percentile interval from 100
// resamples) P(X < 32) = 0.016 (0.044): the bar rarely rejects a right
// interval on a reshuffle of the seeds. For one that is too narrow it
// does: an interval of 50% coverage passes with probability 9e-5, one of
// 70% with 0.11. The 50% intervals of the same resamples (quartiles;
// estimate ± 0.674 SE) are that deliberately narrow interval: the test
// checks that the bar rejects them on these very seeds.
//
// It is in the statistical set (IHOPE_STAT=1, which CI runs). With 20
// seeds the bar was weak (an interval of 70% coverage passed with
// probability 0.24), with 12 none rejected the 50% intervals.
//
// (bch-tabular has its own CI check against the T-step truth,
// TestBootstrapCoverageTaxi; under the long-run estimand it targets its
// intervals miss on Taxi, see TestCoverageLong.)
func TestCoverageTaxi(t *testing.T) {
	if !testsets.Stat() {
		t.Skip("statistical set: IHOPE_STAT=1 (CI runs it)")
	}
	seeds, need := 40, 32 // need = ceil(0.8 seeds)
	w := taxiCoverage(t, 50, 100)
	st := measureCoverage(t, w, coverageCell{"dr", ope.Horizon, 100}, 1, seeds)
	t.Logf("%d seeds in %v:\n%s\n%s", seeds, st.elapsed.Round(time.Second), coverageHeader, strings.Join(st.rows(w), "\n"))
	for _, c := range []struct {
		interval   string
		at90, at50 int
	}{
		{"bootstrap", st.boot90, st.boot50},
		{"Wald", st.wald90, st.wald50},
	} {
		if c.at90 < need {
			t.Errorf("dr's 90%% %s interval holds the exact truth in %d of %d seeds; want at least %d", c.interval, c.at90, seeds, need)
		}
		if c.at50 >= need {
			t.Errorf("dr's 50%% %s interval holds the exact truth in %d of %d seeds: the bar of %d cannot tell a 90%% interval from a too narrow one", c.interval, c.at50, seeds, need)
		}
	}
}

// TestCoverageLong measures, with IHOPE_LONG=1, how often the 90%
// intervals the command line prints hold the exact truth, over 50 seeds
// per cell, and logs the table docs/intervals.md quotes:
//
//   - Taxi (pi18 -> pi19, gamma = 1, n = 200 episodes of T = 400 steps, the
//     paper's setting): bch-tabular with B = 200 resamples, the command
//     line's default, and dr under both estimands (tabular value model;
//     ratio: bch-tabular's under long-run, mis's time-indexed one under
//     horizon) with B = 100: its refit costs three fits (a ratio and two
//     cross-fitted value models), 40-50 ms against bch-tabular's 14 ms;
//   - the linear-Gaussian system lineargauss.Problem1D (gamma = 1, n = 40
//     episodes of T = 200 steps from the behavior's stationary law):
//     bch-kernel, bch-neural and dr under long-run (linear value model,
//     kernel ratio), B = 20 resamples, the command line's
//     --bootstrap-neural for the estimators whose refit costs a kernel fit
//     or a network's training. dr is not marked slow in the registry, so
//     the command line would give it 200 resamples; its kernel ratio
//     costs what bch-kernel's does, so it gets 20 here too.
//
// bch-neural trains 50 x 21 networks here. With the library's defaults
// (an ensemble of ratio.DefaultRestarts networks, each 1000 iterations on
// samples of 2048 transitions: about 4 x 10 s of one core per fit on these
// logs) that alone would be about nine hours of one core. So it runs the
// library's training algorithm (samples held for 100 iterations, Adam at
// 1e-2, 1000 iterations, no early stopping, half the median bandwidth) at
// the cost a test can pay: one network, on samples of 1024 transitions
// (3.8 s a fit on a loaded machine; 2048 took 10 s, and on seeds 1-3 the
// two sizes erred alike: +0.009, +0.018, -0.004 against -0.002, -0.028,
// -0.015). Before, this row ran the algorithm the library had then (a
// fresh minibatch of 512 every iteration at 3e-3, held-out early
// stopping).
//
// Every estimator is compared with the truth of the estimand it targets
// (Result.Estimand): bch-* the long-run value, dr the one it is run
// under. The test fails only where a correct interval is expected: dr's
// intervals on Taxi (bootstrap and Wald, either estimand) must hold the
// truth in at least 40 of 50 seeds (a correct 90% interval fails that
// with probability 0.009, one at the B = 100 ceiling of 0.88 with 0.03).
// The others are measured and reported: bch-tabular's intervals miss its
// long-run target on Taxi, whose logs start from a reset and carry a
// transient the long-run value leaves out.
func TestCoverageLong(t *testing.T) {
	if os.Getenv("IHOPE_LONG") == "" {
		t.Skip("set IHOPE_LONG=1 to run (about 90 minutes on two cores, most of it bch-neural's row)")
	}
	const seeds, need = 50, 40
	taxiW := taxiCoverage(t, 200, 400)
	gauss := gaussCoverage(t, 40, 200, ope.Options{Neural: ratio.Neural{Workers: 1, BatchSize: 1024}, Restarts: 1})
	start := time.Now()
	var (
		mu   sync.Mutex
		rows []string
	)
	for _, c := range []struct {
		w      coverageWorld
		cell   coverageCell
		assert bool
	}{
		{taxiW, coverageCell{"bch-tabular", ope.LongRun, 200}, false},
		{taxiW, coverageCell{"dr", ope.Horizon, 100}, true},
		{taxiW, coverageCell{"dr", ope.LongRun, 100}, true},
		{gauss, coverageCell{"bch-kernel", ope.LongRun, 20}, false},
		{gauss, coverageCell{"dr", ope.LongRun, 20}, false},
		{gauss, coverageCell{"bch-neural", ope.LongRun, 20}, false},
	} {
		// A subtest per row, so that one row can be rerun alone:
		// -run 'CoverageLong/linear-Gaussian_1-d/bch-neural'.
		t.Run(c.w.name+"/"+c.cell.name+"/"+string(c.cell.estimand), func(t *testing.T) {
			st := measureCoverage(t, c.w, c.cell, 1, seeds)
			r := st.rows(c.w)
			mu.Lock()
			rows = append(rows, r...)
			mu.Unlock()
			other := ope.Horizon
			if st.target == ope.Horizon {
				other = ope.LongRun
			}
			t.Logf("%s, %s under %s: %v; %d resamples failed; the 90%% bootstrap interval holds the %s truth %.5f in %d of %d seeds\n%s\n%s",
				c.w.name, c.cell.name, c.cell.estimand, st.elapsed.Round(time.Second), st.failures, other, c.w.truth[other], st.byTruth[other], seeds, coverageHeader, strings.Join(r, "\n"))
			if !c.assert {
				return
			}
			if st.boot90 < need || st.wald90 < need {
				t.Errorf("%s, %s under %s: the 90%% intervals hold the truth in %d (bootstrap) and %d (Wald) of %d seeds; want at least %d",
					c.w.name, c.cell.name, c.cell.estimand, st.boot90, st.wald90, seeds, need)
			}
		})
	}
	t.Logf("%d seeds per cell, %v in all:\n%s\n%s", seeds, time.Since(start).Round(time.Second), coverageHeader, strings.Join(rows, "\n"))
}
