package ope

import "math"

// KishESS returns Kish's effective sample size of a set of weights,
//
//	ESS = (sum_i |v_i|)^2 / sum_i v_i^2,
//
// which is len(v) for equal weights and 1 when one weight carries all the
// mass. Absolute values are used so a ratio model with a few negative
// entries still gets a meaningful diagnostic. It returns 0 for no weights
// or all-zero weights.
func KishESS(v []float64) float64 {
	var s, s2 float64
	for _, x := range v {
		a := math.Abs(x)
		s += a
		s2 += a * a
	}
	if s2 == 0 {
		return 0
	}
	return s * s / s2
}

// MaxShare returns the largest weight's share of the total absolute weight,
// max_i |v_i| / sum_i |v_i| (0 for no or all-zero weights).
func MaxShare(v []float64) float64 {
	var s, m float64
	for _, x := range v {
		a := math.Abs(x)
		s += a
		m = math.Max(m, a)
	}
	if s == 0 {
		return 0
	}
	return m / s
}
