package rank

import (
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// Order returns the indices of v from its largest value to its smallest:
// the ranking of policies by value, best first. Equal values keep their
// order in v. NaN values (an estimator that failed) come last.
func Order(v []float64) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := v[idx[a]], v[idx[b]]
		if math.IsNaN(y) {
			return !math.IsNaN(x)
		}
		return x > y
	})
	return idx
}

// Ranks returns the rank of every value of v, 1 for the largest; values
// that tie share the mean of the ranks they span (1, 2.5, 2.5, 4), as
// Spearman's correlation needs. It panics if v holds a NaN.
func Ranks(v []float64) []float64 {
	if slices.ContainsFunc(v, math.IsNaN) {
		panic("rank: NaN value")
	}
	idx := Order(v)
	out := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		// Positions i..j-1 (ranks i+1..j) tie: each gets their mean.
		mean := float64(i+1+j) / 2
		for _, k := range idx[i:j] {
			out[k] = mean
		}
		i = j
	}
	return out
}

// Spearman returns Spearman's rank correlation of x and y: the Pearson
// correlation of their ranks, ties given mean ranks,
//
//	rho = cov(rank x, rank y) / (sd(rank x) sd(rank y)),
//
// which without ties is 1 - 6 sum_i d_i^2 / (n (n^2 - 1)) with d_i the
// difference of the two ranks of item i. It is 1 when x orders the items
// as y does, -1 when it reverses them. It returns NaN when there are
// fewer than two items, when x or y is constant (no order to compare)
// or holds a NaN. It panics if the lengths differ.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) {
		panic("rank: length mismatch")
	}
	if len(x) < 2 || slices.ContainsFunc(x, math.IsNaN) || slices.ContainsFunc(y, math.IsNaN) ||
		constant(x) || constant(y) {
		return math.NaN()
	}
	return stat.Correlation(Ranks(x), Ranks(y), nil)
}

func constant(v []float64) bool {
	for _, x := range v[1:] {
		if x != v[0] {
			return false
		}
	}
	return true
}

// Regret returns the normalised regret@k of choosing, among the k
// policies that est ranks highest, the one truly best:
//
//	regret@k = (V_best - max_{i in top k of est} V_i) / (V_best - V_worst)
//
// with V the true values truth. It is 0 when the policy chosen is the
// best of all and 1 when it is the worst; the normalisation makes
// regrets comparable across sets of policies of different spreads.
// An estimate that ties with the k-th one at the cut is counted in
// against the estimator: the truly worse of the tied policies fills the
// last places, so an estimator that cannot tell two policies apart gets
// no credit for the better one. When every true value is equal every
// choice is the best, and Regret returns 0. It returns NaN if est or
// truth holds a NaN, and panics if the lengths differ, if they are
// empty or if k < 1; k above the number of policies means all of them.
func Regret(est, truth []float64, k int) float64 {
	if len(est) != len(truth) {
		panic("rank: length mismatch")
	}
	if len(est) == 0 || k < 1 {
		panic("rank: no policies or k < 1")
	}
	if slices.ContainsFunc(est, math.IsNaN) || slices.ContainsFunc(truth, math.IsNaN) {
		return math.NaN()
	}
	k = min(k, len(est))
	// Rank by estimate, and among equal estimates the truly worse first.
	idx := make([]int, len(est))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if est[i] != est[j] {
			return est[i] > est[j]
		}
		return truth[i] < truth[j]
	})
	best, worst := slices.Max(truth), slices.Min(truth)
	if best == worst {
		return 0
	}
	picked := math.Inf(-1)
	for _, i := range idx[:k] {
		picked = math.Max(picked, truth[i])
	}
	return (best - picked) / (best - worst)
}
