package benchmark

import (
	"math"
	"slices"
	"sort"
)

// The ranking metrics of DOPE (Fu et al., Benchmarks for Deep Off-Policy
// Evaluation, ICLR 2021): given one estimate per policy of a family and
// the policies' true values, how well does the estimator order the family
// (Spearman's rank correlation) and how much value does one lose by
// deploying the policy it ranks first, or the best of its top k
// (regret@k)? Higher values are better throughout: every world of the
// benchmark pays rewards, and a policy is better when its value is larger.

// Ranks returns the rank of every entry of x, 1 for the smallest; tied
// entries share the mean of the ranks they span (so that a metric built
// on ranks does not depend on the order of ties). NaN entries are
// ranked as larger than every number, which callers avoid by dropping
// them first.
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return less(x[idx[a]], x[idx[b]]) })
	r := make([]float64, len(x))
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && x[idx[hi]] == x[idx[lo]] {
			hi++
		}
		mean := float64(lo+hi+1) / 2 // ranks lo+1 .. hi
		for _, i := range idx[lo:hi] {
			r[i] = mean
		}
		lo = hi
	}
	return r
}

// less orders numbers before NaN.
func less(a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	return math.IsNaN(b) || a < b
}

// Spearman returns Spearman's rank correlation of x and y: the Pearson
// correlation of their ranks (Ranks, ties averaged). It is 1 when x orders
// the entries as y does, -1 when it reverses them, and NaN when x and y
// differ in length, have fewer than two entries or either is constant
// (no order to agree with).
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	rx, ry := Ranks(x), Ranks(y)
	mean := float64(len(x)+1) / 2 // the mean of any ranks 1..n, ties averaged
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mean, ry[i]-mean
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// RegretAtK returns DOPE's normalised regret@k of picking policies by
// their estimates: the k policies with the largest estimates are tried,
// and the best of them in truth is kept, so
//
//	regret@k = (V_best - max_{i in top k} V_i) / (V_best - V_worst),
//
// V the true values. It is 0 when the top k hold the best policy and 1
// when the estimator's single pick is the worst policy. Ties among the
// estimates at the k-th place are broken against the estimator (the
// truly worse policy is taken first), so that a constant estimator
// cannot score by luck. k larger than the family counts as the whole
// family. RegretAtK returns NaN if the lengths differ, k < 1, the family
// is empty or all true values are equal.
func RegretAtK(estimates, truths []float64, k int) float64 {
	n := len(truths)
	if len(estimates) != n || k < 1 || n == 0 {
		return math.NaN()
	}
	best, worst := slices.Max(truths), slices.Min(truths)
	if best == worst {
		return math.NaN()
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	// Largest estimate first; among equal estimates the smaller truth.
	sort.SliceStable(idx, func(a, b int) bool {
		ea, eb := estimates[idx[a]], estimates[idx[b]]
		if ea != eb {
			return less(eb, ea)
		}
		return truths[idx[a]] < truths[idx[b]]
	})
	picked := math.Inf(-1)
	for _, i := range idx[:min(k, n)] {
		picked = math.Max(picked, truths[i])
	}
	return (best - picked) / (best - worst)
}
