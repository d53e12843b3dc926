package ratio

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The range's programme agrees with a brute-force search: on small
// random instances (3 features, the class a scaled triangle, the loss's
// bound between its least value and 4 times more), each end of
// R = a^T theta / b^T theta found by Dinkelbach's iteration is attained
// by a ratio of the class within the bound, no point of a grid of the
// triangle (steps of 1/1500) within the bound lies beyond it, and the
// grid's own extremes come within 0.5% of the range's width of it.
func TestClassProgrammeBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 8 {
		P, D := 3, 6
		A := mat.NewDense(D, P, nil)
		c, e, a, b := make([]float64, D), make([]float64, P), make([]float64, P), make([]float64, P)
		for i := range D {
			c[i] = rng.NormFloat64()
			for j := range P {
				A.Set(i, j, rng.NormFloat64())
			}
		}
		for j := range P {
			e[j] = 0.5 + rng.Float64()
			a[j] = rng.NormFloat64()
			b[j] = 0.2 + rng.Float64()
		}
		cp := newClassProgramme(A, c, e)
		centre, err := cp.minimise(make([]float64, P), 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		lambda := cp.loss(centre) * (1 + 3*rng.Float64())
		lo, hi, err := cp.fractionalRange(a, b, lambda, centre)
		if err != nil {
			t.Fatal(err)
		}
		for _, end := range []rangeEnd{lo, hi} {
			if l := cp.loss(end.theta); l > lambda*(1+1e-9) {
				t.Errorf("trial %d: an end's ratio has loss %v above the bound %v", trial, l, lambda)
			}
		}
		for _, end := range []rangeEnd{lo, hi} {
			sum := 0.0
			for j, v := range end.theta {
				sum += v * e[j]
				if v < 0 {
					t.Errorf("trial %d: an end's ratio has a negative weight %v", trial, v)
				}
			}
			if r := dot(a, end.theta) / dot(b, end.theta); math.Abs(sum-1) > 1e-9 || math.Abs(r-end.value) > 1e-9*math.Max(1, math.Abs(r)) {
				t.Errorf("trial %d: an end %v is attained by a ratio of mean %v giving %v", trial, end.value, sum, r)
			}
		}
		sLo, sHi := math.Inf(1), math.Inf(-1)
		theta := make([]float64, P)
		const steps = 1500
		for i := 0; i <= steps; i++ {
			for j := 0; i+j <= steps; j++ {
				// Barycentric coordinates, scaled so that e^T theta = 1.
				theta[0] = float64(i) / steps / e[0]
				theta[1] = float64(j) / steps / e[1]
				theta[2] = float64(steps-i-j) / steps / e[2]
				if cp.loss(theta) > lambda {
					continue
				}
				r := dot(a, theta) / dot(b, theta)
				sLo, sHi = math.Min(sLo, r), math.Max(sHi, r)
			}
		}
		w := hi.value - lo.value
		if sLo < lo.value-1e-9 || sHi > hi.value+1e-9 || sLo-lo.value > 0.005*w || hi.value-sHi > 0.005*w {
			t.Errorf("trial %d: range [%v, %v], the grid's feasible ratios [%v, %v]", trial, lo.value, hi.value, sLo, sHi)
		}
	}
}
