package ope

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/ihope-ope/ihope/internal/quantile"

	"github.com/ihope-ope/ihope/dataset"
)

// Bootstrap computes percentile bootstrap intervals for estimators.
//
// With two or more episodes it resamples whole episodes with replacement
// (episodes are independent under the behavior policy). With a single
// long episode — a continuing task, the case the paper is about — it uses
// the moving-block bootstrap: the episode is rebuilt from contiguous blocks
// of BlockLength steps drawn with replacement, which keeps the dependence
// between neighbouring steps inside each block. Every step keeps its own
// logged transition (s, a, r, s'), so the density-ratio estimators see only
// real transitions; only the position t of a step changes.
//
// Each resample refits the estimator from scratch (for bch-tabular this
// includes solving for w), so the interval reflects the ratio's estimation
// error too. With several episodes, the estimators whose statistics are
// sums over episodes in one pass (Summer: naive, the IS family,
// bch-tabular, the tabular value models and minimax forms) do that refit
// from their sums instead: every resample is a copy of the sums weighted
// by its episodes' multiplicities, all filled in one pass over the log,
// and its final solve is the refit (the same numbers as Estimate on the
// resampled log, to rounding).
type Bootstrap struct {
	// Resamples is the number of bootstrap resamples B (> 0).
	Resamples int
	// Alpha gives (1 - Alpha) intervals; 0 means 0.05.
	Alpha float64
	// Seed seeds the resampling; resample b uses its own stream derived
	// from Seed and b, so results do not depend on Workers.
	Seed uint64
	// BlockLength is the block length of the block bootstrap; 0 means
	// round(M^(1/3)) for an episode of M steps (at least 1).
	BlockLength int
	// Workers is the number of goroutines; 0 means 1.
	Workers int
	// Progress, if not nil, is called after each finished resample.
	Progress func(done int)
	// Poisson, with two or more episodes, gives every episode a
	// Poisson(1) multiplicity in each resample, PoissonCount(Seed, id, r),
	// instead of drawing m episodes with replacement: the Poisson
	// bootstrap, which a stream over shards computes too (package stream),
	// so the two agree resample for resample. Episode ids must be distinct.
	Poisson bool
}

// Interval is a bootstrap interval of one estimator.
type Interval struct {
	Low, High float64
	// Method is how Low and High were formed from the resamples:
	// "percentile" or, with fewer than PercentileMin successful
	// resamples, "student-t" (see intervals).
	Method string
	// Estimates are the resample estimates that succeeded, in resample
	// order.
	Estimates []float64
	// Failures counts resamples on which the estimator returned an error
	// (e.g. every weight zero); they are excluded from the percentiles and
	// reported, never silently dropped.
	Failures int
	// FirstFailure is the error of the first failed resample.
	FirstFailure error
}

// ErrBlocksDiscounted is returned by Bootstrap.Run for a single episode
// with gamma < 1: the discounted value of one episode depends on where it
// starts, and blocks moved to other positions would change it (and the
// dummy start transition of Algorithm 2), so there is no honest block
// bootstrap for it.
var ErrBlocksDiscounted = errors.New("one episode with gamma < 1: no intervals (the discounted value depends on where the episode starts, which a block bootstrap cannot resample); use gamma = 1 or log several episodes")

// Method returns "episodes" or "blocks" for d, and the block length used.
func (b *Bootstrap) Method(d *dataset.Dataset) (string, int) {
	if d.NumEpisodes() > 1 {
		return "episodes", 0
	}
	return "blocks", b.blockLength(d.NumSteps())
}

func (b *Bootstrap) blockLength(m int) int {
	if b.BlockLength > 0 {
		return min(b.BlockLength, m)
	}
	return max(1, int(math.Round(math.Cbrt(float64(m)))))
}

// MaxSumBlocks is the number of blocks the Poisson block bootstrap of one
// long episode (BlockSums) cuts it into at most when the block length is
// not given: each block adds its statistics to every copy, so the cost
// grows with their number (bch-kernel on a 150,000-step Pendulum episode:
// 45 s with the cube root's 2,830 blocks, 16 s with 250), while 256
// blocks already give the variance to within sqrt(2/256), 9%, and longer
// blocks only keep more of the steps' dependence.
const MaxSumBlocks = 256

// SumBlockLength returns the block length of the Poisson block bootstrap
// of one episode of m steps: BlockLength if set, otherwise the longer of
// the cube root of m and the length that makes MaxSumBlocks blocks.
func (b *Bootstrap) SumBlockLength(m int) int {
	if b.BlockLength > 0 {
		return min(b.BlockLength, m)
	}
	return max(b.blockLength(m), (m+MaxSumBlocks-1)/MaxSumBlocks)
}

// Check returns ErrBlocksDiscounted if d is a single episode and gamma < 1
// (see ErrBlocksDiscounted), nil otherwise.
func (b *Bootstrap) Check(d *dataset.Dataset, gamma float64) error {
	if method, _ := b.Method(d); method == "blocks" && gamma < 1 {
		return ErrBlocksDiscounted
	}
	return nil
}

// Run computes an interval for every estimator, in the order given.
// Estimators are stateless values, evaluated concurrently on the
// resamples. A single episode with gamma < 1 gets ErrBlocksDiscounted.
func (b *Bootstrap) Run(d *dataset.Dataset, gamma float64, ests []Estimator) ([]Interval, error) {
	if b.Resamples <= 0 {
		return nil, fmt.Errorf("bootstrap: %d resamples", b.Resamples)
	}
	if d.NumEpisodes() == 0 {
		return nil, fmt.Errorf("bootstrap: no episodes")
	}
	if err := b.Check(d, gamma); err != nil {
		return nil, err
	}
	alpha := b.Alpha
	if alpha == 0 {
		alpha = 0.05
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("bootstrap: alpha %v outside (0, 1)", alpha)
	}
	values := make([][]float64, len(ests)) // [estimator][resample], NaN on failure
	errs := make([][]error, len(ests))
	for k := range values {
		values[k] = make([]float64, b.Resamples)
		errs[k] = make([]error, b.Resamples)
	}
	order := d.IDOrder()
	summed := b.summed(d, order, gamma, ests, values, errs)
	prepared := b.prepare(d, gamma, ests, summed)
	var (
		mu   sync.Mutex
		done int
		g    errgroup.Group
	)
	g.SetLimit(max(1, b.Workers))
	for r := range b.Resamples {
		g.Go(func() error {
			b.resample(d, order, gamma, ests, summed, prepared, r, values, errs)
			if b.Progress != nil {
				mu.Lock()
				done++
				b.Progress(done)
				mu.Unlock()
			}
			return nil
		})
	}
	g.Wait()
	return intervals(values, errs, alpha), nil
}

// reweighter is implemented by an estimator not summed that can still
// evaluate many reweightings of one log's episodes quickly (mis, whose
// time-indexed ratios are counts): prepare does the per-step work once and
// returns a function that gives the estimate on the log in which episode i
// appears mult[i] times, safe for concurrent use; a nil function when the
// estimator has no fast path for its settings.
type reweighter interface {
	prepare(d *dataset.Dataset, gamma float64) (func(mult []int) (float64, error), error)
}

// summed evaluates every resample of the estimators whose statistics are
// one-pass sums over episodes (Summer, not TwoPassSums) from B+1 copies of
// those sums, copy r+1 weighing each episode by its multiplicity in
// resample r, into values[k][r] and errs[k][r]; it reports which it did.
// An estimator whose sums cannot be formed (an option they do not cover,
// or a log its Estimate refuses) is left to the refits, which report its
// errors resample by resample; so is one whose sums cannot read this log
// as its Estimate does (SumsRead, the stream's rule). The estimators'
// sums are filled concurrently (Workers), each in the log's order, so the
// numbers do not depend on Workers. Nothing is summed for the block bootstrap of one episode (no
// episode multiplicities) or for a log with episodes that end in a
// terminal state (the estimators pad those to the log's horizon, which
// sums do not; a refitted resample pads to the whole log's,
// Dataset.Horizon).
func (b *Bootstrap) summed(d *dataset.Dataset, order []int, gamma float64, ests []Estimator, values [][]float64, errs [][]error) []bool {
	done := make([]bool, len(ests))
	if d.NumEpisodes() <= 1 || d.NumTerminal() > 0 {
		return done
	}
	var todo []int
	for k, est := range ests {
		if _, ok := est.(Summer); ok {
			todo = append(todo, k)
		}
	}
	if len(todo) == 0 {
		return done
	}
	// mult[i][c]: episode i's multiplicity in copy c (copy 0 the log).
	m := d.NumEpisodes()
	mult := make([][]int, m)
	for i := range mult {
		mult[i] = make([]int, b.Resamples+1)
		mult[i][0] = 1
	}
	for r := range b.Resamples {
		var counts []int
		b.draw(rand.New(rand.NewPCG(b.Seed, uint64(r)+1)), d, order, r, &counts)
		for i, c := range counts {
			mult[i][r+1] = c
		}
	}
	var g errgroup.Group
	g.SetLimit(max(1, b.Workers))
	for _, k := range todo {
		g.Go(func() error {
			s, err := ests[k].(Summer).NewSums(gamma, b.Resamples+1)
			if err != nil {
				return nil
			}
			if _, twoPass := s.(TwoPassSums); twoPass || SumsRead(ests[k].Name(), s, d) != nil {
				return nil
			}
			for i := range m {
				if err := s.Add(d, i, mult[i]); err != nil {
					return nil
				}
			}
			if _, _, err := s.Finish(0); err != nil {
				return nil // the estimator fails on the log itself: let the refits say so per resample
			}
			// The copies' final solves (bch-tabular's, the value models')
			// are the refits: run them concurrently, as the refits are.
			values[k], errs[k] = copyEstimates(ests[k].Name(), s, b.Resamples, b.Workers)
			done[k] = true
			return nil
		})
	}
	g.Wait()
	return done
}

// prepare returns, for every estimator not summed that implements
// reweighter and has a fast path (mis), the function that evaluates an
// episode resample from multiplicities (nil otherwise, and always nil for
// the block bootstrap). Its padding of terminal episodes is the whole
// log's, as a refitted resample's is (Dataset.Horizon).
func (b *Bootstrap) prepare(d *dataset.Dataset, gamma float64, ests []Estimator, summed []bool) []func([]int) (float64, error) {
	prepared := make([]func([]int) (float64, error), len(ests))
	if d.NumEpisodes() <= 1 {
		return prepared
	}
	for k, est := range ests {
		if summed[k] {
			continue
		}
		if rw, ok := est.(reweighter); ok {
			// On error the estimator fails on the full data too;
			// Estimate reports it per resample.
			prepared[k], _ = rw.prepare(d, gamma)
		}
	}
	return prepared
}

// resample draws resample r from its own stream and evaluates every
// estimator on it, into values[k][r] (NaN and errs[k][r] on failure).
// order is d.IDOrder().
func (b *Bootstrap) resample(d *dataset.Dataset, order []int, gamma float64, ests []Estimator, summed []bool, prepared []func([]int) (float64, error), r int, values [][]float64, errs [][]error) {
	rng := rand.New(rand.NewPCG(b.Seed, uint64(r)+1))
	var mult []int
	idx, rd := b.draw(rng, d, order, r, &mult)
	for k, est := range ests {
		if rs, ok := est.(Reseeder); ok {
			// A fresh training seed per resample (and per estimator), from
			// the resample's own stream; drawn for a summed estimator too,
			// so that the others' seeds do not depend on which are summed.
			est = rs.Reseed(rng.Uint64())
		}
		if summed[k] {
			continue
		}
		if prepared[k] != nil && mult != nil {
			v, err := prepared[k](mult)
			values[k][r], errs[k][r] = finite(est.Name(), v, err)
			continue
		}
		if rd == nil {
			rd = d.Subset(idx)
			if d.NumTerminal() > 0 {
				// Pad to the log's horizon, not the resample's longest
				// episode: every resample estimates the same T-step value.
				rd.Horizon = max(d.Horizon, d.MaxLen())
			}
		}
		res, err := est.Estimate(rd, gamma)
		values[k][r], errs[k][r] = finite(est.Name(), res.Value, err)
	}
}

// PercentileMin is the number of successful resamples from which an
// interval is the percentile one; below it the interval is
//
//	mean ± t_(B-1, 1-alpha/2) sd
//
// over the B resample estimates (method "student-t"). With few
// resamples the percentile interval's ends are the extreme order
// statistics, which fall inside the tails they estimate: their expected
// coverage is about 1 - 2 (1 + (B-1) alpha/2)/(B+1), 81% for a 90%
// interval from the 20 resamples the slow estimators get (and the
// coverage table measured 80-84% for bch-kernel and bch-neural there),
// whatever the estimator. The standard deviation of 20 resamples is
// nearly unbiased, and the Student quantile accounts for its own
// uncertainty; what this form gives up is the percentile interval's
// asymmetry, which 20 resamples cannot estimate anyway.
const PercentileMin = 100

// intervals turns the resample estimates into percentile or, with few
// resamples, Student-t intervals (PercentileMin).
func intervals(values [][]float64, errs [][]error, alpha float64) []Interval {
	out := make([]Interval, len(values))
	for k := range out {
		out[k] = IntervalOf(values[k], errs[k], alpha)
	}
	return out
}

// IntervalOf is the (1 - alpha) interval of one estimator from its
// resample estimates, in resample order, where errs[r] != nil marks a
// failed resample: percentile, or Student-t with fewer than PercentileMin
// successes, as Bootstrap.Run forms it. Package stream forms the Poisson
// bootstrap's intervals with it.
func IntervalOf(values []float64, errs []error, alpha float64) Interval {
	var iv Interval
	for r, v := range values {
		if errs[r] != nil {
			if iv.Failures == 0 {
				iv.FirstFailure = errs[r]
			}
			iv.Failures++
			continue
		}
		iv.Estimates = append(iv.Estimates, v)
	}
	if len(iv.Estimates) == 0 {
		iv.Low, iv.High = math.NaN(), math.NaN()
		return iv
	}
	if B := len(iv.Estimates); B >= 2 && B < PercentileMin {
		mean, sd := stat.MeanStdDev(iv.Estimates, nil)
		half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(B - 1)}.Quantile(1-alpha/2) * sd
		iv.Low, iv.High, iv.Method = mean-half, mean+half, "student-t"
		return iv
	}
	sorted := slices.Clone(iv.Estimates)
	slices.Sort(sorted)
	iv.Low = Quantile(sorted, alpha/2)
	iv.High = Quantile(sorted, 1-alpha/2)
	iv.Method = "percentile"
	return iv
}

// draw draws bootstrap resample r: for two or more episodes the indices
// of the drawn episodes (the dataset is built only if needed) and their
// multiplicities in *mult, for one episode the block-resampled dataset.
// The draws pick places in order (d.IDOrder()), so a resample holds the
// same episodes in the same order whatever the order of d's episodes.
func (b *Bootstrap) draw(rng *rand.Rand, d *dataset.Dataset, order []int, r int, mult *[]int) ([]int, *dataset.Dataset) {
	if m := d.NumEpisodes(); m > 1 {
		*mult = make([]int, m)
		var idx []int
		if b.Poisson {
			for i, id := range d.IDs {
				k := PoissonCount(b.Seed, id, r)
				(*mult)[i] = k
				for range k {
					idx = append(idx, i)
				}
			}
			return idx, nil
		}
		idx = make([]int, m)
		for i := range idx {
			idx[i] = order[rng.IntN(m)]
			(*mult)[idx[i]]++
		}
		return idx, nil
	}
	m := d.NumSteps()
	L := b.blockLength(m)
	var starts, lens []int
	for n := 0; n < m; {
		start := rng.IntN(m - L + 1)
		k := min(L, m-n)
		starts, lens = append(starts, start), append(lens, k)
		n += k
	}
	return nil, d.Blocks(starts, lens)
}

// Quantile returns the p-quantile of sorted data by linear interpolation
// between order statistics (type 7 of Hyndman and Fan, the default of R
// and NumPy).
func Quantile(sorted []float64, p float64) float64 { return quantile.Type7(sorted, p) }
