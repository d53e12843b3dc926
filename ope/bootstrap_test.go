package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/value"
)

func TestQuantile(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5}
	for i, c := range []struct{ p, want float64 }{
		{0, 1}, {1, 5}, {0.5, 3}, {0.25, 2}, {0.1, 1.4}, {0.95, 4.8},
	} {
		if got := ope.Quantile(sorted, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%d: Quantile(%v) = %v, want %v", i, c.p, got, c.want)
		}
	}
	if got := ope.Quantile([]float64{7}, 0.3); got != 7 {
		t.Errorf("single value: %v", got)
	}
}

func taxiData(t testing.TB, seed uint64, n, T int) *dataset.Dataset {
	t.Helper()
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(seed, 0)), sim.NewSampler(taxi.New()), behavior, target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func allLogEstimators() []ope.Estimator {
	return []ope.Estimator{&ope.Naive{}, &ope.TrajectoryWIS{}, &ope.StepwiseWIS{}, ope.DensityRatio{Learner: ratio.Tabular{}}}
}

// The intervals depend on the seed only, not on the number of workers.
func TestBootstrapDeterministic(t *testing.T) {
	d := taxiData(t, 3, 30, 60)
	var got [][]ope.Interval
	for _, workers := range []int{1, 2, 3} {
		b := ope.Bootstrap{Resamples: 20, Seed: 9, Workers: workers}
		ivs, err := b.Run(d, 1, allLogEstimators())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ivs)
	}
	for i := 1; i < len(got); i++ {
		if !reflect.DeepEqual(got[0], got[i]) {
			t.Errorf("workers changed the intervals:\n%v\n%v", got[0], got[i])
		}
	}
	for k, iv := range got[0] {
		if !(iv.Low <= iv.High) || len(iv.Estimates) != 20 || iv.Failures != 0 {
			t.Errorf("estimator %d: %+v", k, iv)
		}
	}
	// A different seed gives different resamples.
	b := ope.Bootstrap{Resamples: 20, Seed: 10}
	other, _ := b.Run(d, 1, allLogEstimators())
	if reflect.DeepEqual(other[0].Estimates, got[0][0].Estimates) {
		t.Error("seed had no effect")
	}
}

// blockRecorder is an estimator that checks the episodes a block
// bootstrap hands it: each must be the logged episode of M steps cut into
// blocks of L consecutive logged steps (the last block shortened to fit),
// each block starting anywhere in 0..M-L. Steps of the logged episode are
// numbered by State = t, so a resampled step shows where it came from. It
// counts the block starts it sees and returns the mean reward.
type blockRecorder struct {
	t      *testing.T
	logged []dataset.Step
	L      int
	mu     *sync.Mutex
	starts []int // starts[s] counts blocks that began at logged step s
	bad    *int  // resamples that broke the structure
}

func (*blockRecorder) Name() string { return "block-recorder" }

func (e *blockRecorder) Estimate(d *dataset.Dataset, gamma float64) (ope.Result, error) {
	M := len(e.logged)
	fail := func(format string, args ...any) (ope.Result, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if *e.bad++; *e.bad <= 3 {
			e.t.Errorf(format, args...)
		}
		return ope.Result{}, fmt.Errorf(format, args...)
	}
	if d.NumEpisodes() != 1 || d.Len(0) != M {
		return fail("resample has %d episodes; want 1 of %d steps", d.NumEpisodes(), M)
	}
	steps := d.Episode(0).Steps
	var starts []int
	sum := 0.0
	for k := 0; k < M; k += e.L {
		s := steps[k].State
		if s < 0 || s > M-e.L {
			return fail("block at %d starts at logged step %d, outside 0..%d", k, s, M-e.L)
		}
		starts = append(starts, s)
		for j := k; j < min(k+e.L, M); j++ {
			got, want := &steps[j], &e.logged[s+j-k]
			if got.State != want.State || got.Reward != want.Reward || got.NextState != want.NextState ||
				got.HasNext != want.HasNext || got.LogBehavior != want.LogBehavior || got.LogTarget != want.LogTarget {
				return fail("resampled step %d is %+v, want logged step %d %+v", j, *got, s+j-k, *want)
			}
			sum += got.Reward
		}
	}
	e.mu.Lock()
	for _, s := range starts {
		e.starts[s]++
	}
	e.mu.Unlock()
	return ope.Result{Value: sum / float64(M)}, nil
}

// One long episode is resampled in moving blocks of round(M^(1/3)) steps;
// the resampled episode keeps the original length and logged transitions,
// and the interval of the mean reward has the width of the known standard
// error of a mean of dependent rewards.
//
// The episode has M = 8000 steps (blocks of L = 20) with AR(1) rewards
//
//	r_t = mu + phi (r_{t-1} - mu) + e_t,   e_t ~ N(0, 1) i.i.d.,   phi = 1/2,
//
// started in the stationary law N(mu, 1/(1-phi^2)). The naive estimate is
// the mean reward; its standard error is sigma/sqrt(M) with the long-run
// standard deviation sigma = 1/(1-phi) = 2, so a 95% interval is
// 2 * 1.96 * 2/sqrt(8000) = 0.0877 wide. An i.i.d. bootstrap of the steps
// would see only the marginal sd 1/sqrt(1-phi^2) = 1.155 and give a width
// 0.58 times that; resampling nothing gives width 0.
//
// Expected ratio of the block bootstrap's width to 0.0877: its variance
// is about (gamma_0/M) sum_{|k|<L} (1-|k|/L) phi^|k| (Kuensch 1989),
// gamma_0 = 4/3, i.e. 1 + 2 (1 - 2/L) = 2.8 where the truth has
// (1+phi)/(1-phi) = 3, a ratio of sqrt(2.8/3) = 0.966. Its scatter: the
// block estimate of the variance has relative sd sqrt(4L/(3M)) = 5.8%,
// 2.9% in the width; B = 500 percentiles at 2.5% and 97.5% of a normal
// each have sd sqrt(0.025*0.975/B)/phi(1.96) = 0.12 standard errors, 4.3%
// in the width. So the ratio should be 0.966 +- 0.052 (1 sd); 100 other
// data and bootstrap seeds gave 0.960 +- 0.049 (range 0.84 to 1.08). The
// accepted band [0.80, 1.15] lies 3.3 sd below and 3.9 sd above that, and
// far from 0.58 and 0. The interval's midpoint scatters by 0.085 standard
// errors around the mean reward (0.080 over the 100 seeds); it must lie
// within 0.3 of one (3.5 sd). A correct bootstrap thus fails on about one
// seed in 1000.
func TestBlockBootstrap(t *testing.T) {
	const (
		M   = 8000
		L   = 20
		phi = 0.5
		mu  = 1.0
		B   = 500
	)
	want := 2 * 1.96 * (1 / (1 - phi)) / math.Sqrt(M) // 0.0877
	rng := rand.New(rand.NewPCG(7, 0))
	steps := make([]dataset.Step, M)
	x := mu + rng.NormFloat64()/math.Sqrt(1-phi*phi)
	mean := 0.0
	for i := range steps {
		if i > 0 {
			x = mu + phi*(x-mu) + rng.NormFloat64()
		}
		steps[i] = dataset.Step{State: i, NextState: i + 1, HasNext: true, Reward: x, LogBehavior: math.Log(0.5), LogTarget: math.Log(0.5)}
		mean += x / M
	}
	d, err := dataset.New(M+1, 1, []dataset.Episode{{ID: "one", Steps: steps}})
	if err != nil {
		t.Fatal(err)
	}

	b := ope.Bootstrap{Resamples: B, Seed: 1, Workers: 2}
	if method, l := b.Method(d); method != "blocks" || l != L {
		t.Fatalf("method %s, block %d; want blocks of %d", method, l, L)
	}
	var recMu sync.Mutex
	starts, bad := make([]int, M), 0
	ivs, err := b.Run(d, 1, []ope.Estimator{&ope.Naive{}, &blockRecorder{t: t, logged: steps, L: L, mu: &recMu, starts: starts, bad: &bad}})
	if err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Fatalf("%d of %d resamples are not made of logged blocks", bad, B)
	}
	// 400 blocks x 500 resamples = 200000 starts over 7981 places, about
	// 25 each: every place is drawn (some place is missed with probability
	// 7981 e^-25 < 1e-7).
	for s, c := range starts {
		if c == 0 && s <= M-L {
			t.Errorf("no block starts at step %d (of 0..%d)", s, M-L)
			break
		}
	}
	iv := ivs[0]
	if iv.Failures != 0 || len(iv.Estimates) != B {
		t.Fatalf("naive: %d failures, %d estimates", iv.Failures, len(iv.Estimates))
	}
	for r, v := range ivs[1].Estimates {
		if math.Abs(v-iv.Estimates[r]) > 1e-9 {
			t.Fatalf("resample %d: naive %v, mean of the blocks %v", r, iv.Estimates[r], v)
		}
	}
	se := want / (2 * 1.96)
	widthRatio := (iv.High - iv.Low) / want
	mid := (iv.High + iv.Low) / 2
	t.Logf("mean %.4f, 95%% interval [%.4f, %.4f]: width %.4f = %.3f x %.4f, midpoint %+.3f se from the mean",
		mean, iv.Low, iv.High, iv.High-iv.Low, widthRatio, want, (mid-mean)/se)
	if widthRatio < 0.80 || widthRatio > 1.15 {
		t.Errorf("interval width %.4f is %.3f x the standard error's 2*1.96*sigma/sqrt(M) = %.4f; want 0.80 to 1.15",
			iv.High-iv.Low, widthRatio, want)
	}
	if math.Abs(mid-mean) > 0.3*se {
		t.Errorf("interval midpoint %.4f is %.2f standard errors from the mean reward %.4f; want at most 0.3", mid, (mid-mean)/se, mean)
	}

	// The same for a density-ratio estimator on a Taxi episode: it refits
	// w on every block resample, and its interval is a non-degenerate band.
	taxiD := taxiData(t, 4, 1, M)
	tb := ope.Bootstrap{Resamples: 30, Seed: 1}
	tivs, err := tb.Run(taxiD, 1, []ope.Estimator{ope.DensityRatio{Learner: ratio.Tabular{}}})
	if err != nil {
		t.Fatal(err)
	}
	if iv := tivs[0]; iv.Failures != 0 || !(iv.High-iv.Low > 0.001 && iv.High-iv.Low < 0.5) {
		t.Errorf("bch-tabular interval [%v, %v], %d failures", iv.Low, iv.High, iv.Failures)
	}
}

// Bootstrap intervals of bch-tabular cover the exact T-step value at
// about the nominal rate: neither too rarely (intervals too narrow or off
// centre) nor too often (intervals too wide; a 90% interval that covers
// every seed is as wrong as one that covers 60%). bch-tabular targets the
// long-run value, but on these logs from a reset it lands close to the
// T-step one (the transient is in the logged states it weighs); its
// intervals rarely hold the long-run value, which TestCoverageLong
// measures and docs/intervals.md reports.
//
// The seeds are independent, so for a correct 90% interval the number X
// of covering seeds out of N is Binomial(N, 0.9), and the bounds are set
// so that such an interval fails with probability well under 1%:
//
//   - everyday: skipped (the statistical set; 20 seeds, X >= 15, was
//     the everyday version until the everyday set outgrew 3 minutes).
//   - IHOPE_STAT=1 (and CI): N = 60 seeds of n = 100 episodes of T = 200
//     steps, B = 50 resamples; 45 <= X <= 59. P(X <= 44) = 0.0002 and P(X = 60) =
//     0.9^60 = 0.0018, 0.2% in all. (With the 30 seeds used before, no
//     upper bound was possible: 0.9^30 = 4.2% of correct intervals cover
//     all 30.) The current code's coverage in this setting, measured over
//     300 seeds, is 265/300 = 0.883 (percentile intervals from 50
//     resamples run slightly short); at 0.883 the test fails with
//     probability 0.0012 + 0.0006 = 0.2% as well. An interval that covers
//     with probability 0.6 passes with probability 0.01, one that always
//     covers never passes, one that covers with probability 0.99 fails
//     with probability 0.55.
//   - IHOPE_LONG=1: the N = 100 seeds of n = 200, T = 400, B =
//     200; 80 <= X <= 97. P(X <= 79) = 0.0008 and P(X >= 98) = 0.0019,
//     0.3% in all.
func TestBootstrapCoverageTaxi(t *testing.T) {
	check := func(seeds, n, T, B, lo, hi int) {
		// Seeds 1000, 1001, ...: apart from TestCoverageLong's 1..50.
		st := measureCoverage(t, taxiCoverage(t, n, T), coverageCell{"bch-tabular", ope.LongRun, B}, 1000, seeds)
		x := st.byTruth[ope.Horizon]
		t.Logf("90%% intervals, %d seeds, n=%d, T=%d, B=%d: %d cover, %.3f", seeds, n, T, B, x, float64(x)/float64(seeds))
		if x < lo || x > hi {
			t.Errorf("%d of %d seeds cover the truth; want %d to %d", x, seeds, lo, hi)
		}
	}
	if os.Getenv("IHOPE_LONG") != "" {
		check(100, 200, 400, 200, 80, 97)
		return
	}
	if !testsets.Stat() {
		t.Skip("statistical set: IHOPE_STAT=1 (CI runs it)")
	}
	check(60, 100, 200, 50, 45, 59)
}

// The same episodes written in another order give the same estimates and
// intervals: the bootstrap draws places in the ids' natural order and
// dr's cross-fitting folds go by it, so the answer is the log's, not its
// export's (an audit saw dr and every interval move). Equal to rounding
// (sums run in the file's order; bch-tabular solves iteratively).
func TestEpisodeOrderInvariance(t *testing.T) {
	d := taxiData(t, 4, 40, 50)
	target, _ := taxi.Policy("pi19")
	perm := rand.New(rand.NewPCG(5, 5)).Perm(d.NumEpisodes())
	shuffled := d.Subset(perm)
	ests := append(allLogEstimators(), ope.DR{Target: value.Target{Policy: target}})
	var got [2][]ope.Interval
	var points [2][]float64
	for i, dd := range []*dataset.Dataset{d, shuffled} {
		for _, est := range ests {
			res, err := est.Estimate(dd, 1)
			if err != nil {
				t.Fatal(err)
			}
			points[i] = append(points[i], res.Value)
		}
		b := ope.Bootstrap{Resamples: 20, Seed: 9}
		ivs, err := b.Run(dd, 1, ests)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = ivs
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a)) } // bch-tabular: 1e-11 apart
	for k, est := range ests {
		a, b := got[0][k], got[1][k]
		if !close(points[0][k], points[1][k]) || !close(a.Low, b.Low) || !close(a.High, b.High) {
			t.Errorf("%s: %v [%v, %v] in order, %v [%v, %v] shuffled", est.Name(), points[0][k], a.Low, a.High, points[1][k], b.Low, b.High)
		}
	}
}
