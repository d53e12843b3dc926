package experiment

import (
	"math"
	"math/rand/v2"
)

// MonteCarlo returns the mean of n draws of f and its standard error
// sqrt(s^2/n), s^2 the unbiased sample variance. It is the truth of a
// world without a transition table: f is the normalised T-step value of
// one target rollout, and the experiments store the standard error next
// to the truth (CheckTruth then asks it to be at most a tenth of the
// smallest root-MSE drawn). n must be at least 2.
func MonteCarlo(rng *rand.Rand, n int, f func(*rand.Rand) float64) (mean, se float64) {
	if n < 2 {
		panic("experiment: MonteCarlo needs at least 2 draws")
	}
	// Welford's update keeps the variance accurate for large n.
	var m, m2 float64
	for i := 1; i <= n; i++ {
		x := f(rng)
		d := x - m
		m += d / float64(i)
		m2 += d * (x - m)
	}
	return m, math.Sqrt(m2 / float64(n-1) / float64(n))
}
