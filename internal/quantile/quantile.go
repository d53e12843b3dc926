// Package quantile holds the one quantile rule ihope uses, shared by the
// estimators' bootstrap (package ope) and the figures' bands (package
// figure/results), which must not import each other.
package quantile

import "math"

// Type7 returns the p-quantile of sorted data by linear interpolation
// between order statistics (type 7 of Hyndman and Fan, the default of R
// and NumPy). gonum's stat.Quantile offers types 1 and 4 only.
func Type7(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 1 {
		return sorted[0]
	}
	h := p * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	if sorted[lo] == sorted[lo+1] { // also keeps +Inf from becoming NaN
		return sorted[lo]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
