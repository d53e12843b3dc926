package ope

import (
	"math"
	"testing"
)

// TestIntervalsForm checks the two forms of intervals: with fewer than
// PercentileMin resamples, mean ± t sd with the Student quantile of B-1
// degrees of freedom (for B = 20 resamples 0, 1, ..., 19 at alpha = 0.1:
// mean 9.5, sd sqrt(35) = 5.9161, t_(19, 0.95) = 1.7291); with more, the
// type-7 percentiles (for B = 101 resamples 0..100: 5 and 95).
func TestIntervalsForm(t *testing.T) {
	seq := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i)
		}
		return v
	}
	for _, c := range []struct {
		values         []float64
		method         string
		low, high, tol float64
	}{
		{seq(20), "student-t", 9.5 - 1.729133*math.Sqrt(35), 9.5 + 1.729133*math.Sqrt(35), 1e-5},
		{seq(101), "percentile", 5, 95, 1e-12},
	} {
		errs := make([]error, len(c.values))
		iv := intervals([][]float64{c.values}, [][]error{errs}, 0.1)[0]
		if iv.Method != c.method || math.Abs(iv.Low-c.low) > c.tol || math.Abs(iv.High-c.high) > c.tol {
			t.Errorf("%d resamples: %s [%.6f, %.6f], want %s [%.6f, %.6f]", len(c.values), iv.Method, iv.Low, iv.High, c.method, c.low, c.high)
		}
	}
}
