package ratio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// psi(x)^T psi(y) approximates the equal mixture of the Gaussian kernels
// of bandwidths h scales[j]: with 2 x 20,000 features the error of each
// pair is about 0.007 (the sd of a mean of 20,000 cosines), so 0.03 is
// four standard deviations; and with scales {1} the frequencies are the
// draws of the single kernel.
func TestFourierMixture(t *testing.T) {
	const h, in = 1.3, 2
	x := [][]float64{{0, 0}, {0.2, -0.1}, {0.5, 0.3}, {-0.6, 0.4}, {1.5, -1}}
	for _, scales := range [][]float64{{1}, {0.5, 0.25}} {
		f := newFourier(rand.New(rand.NewPCG(5, 0)), in, 40000, h, scales)
		a, b := make([]float64, f.dim()), make([]float64, f.dim())
		for _, xi := range x {
			for _, yi := range x {
				f.features(xi, a)
				f.features(yi, b)
				d2 := (xi[0]-yi[0])*(xi[0]-yi[0]) + (xi[1]-yi[1])*(xi[1]-yi[1])
				want := 0.0
				for _, s := range scales {
					want += math.Exp(-d2/(2*h*h*s*s)) / float64(len(scales))
				}
				got := 0.0
				for q := range a {
					got += a[q] * b[q]
				}
				if math.Abs(got-want) > 0.03 {
					t.Errorf("scales %v, x %v, y %v: psi^T psi %.4f, kernel %.4f", scales, xi, yi, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 0))
	single := newFourier(rand.New(rand.NewPCG(7, 0)), in, 8, h, []float64{1})
	want := make([]float64, 4*in)
	for i := range want {
		want[i] = rng.NormFloat64() / h
	}
	if !slices.Equal(single.omega, want) {
		t.Errorf("frequencies with scales {1}: %v, want %v", single.omega, want)
	}
}

// The negative-ratio warning calls a few negative units possible noise
// and many a sign of a poorly determined ratio, with their share.
func TestNegativeWarning(t *testing.T) {
	for _, c := range []struct {
		n, total int
		mass     float64
		want     string
	}{
		{3, 1000, 0.2, "so few may be noise"},
		{50, 1000, 0.2, "so few may be noise"},
		{120, 1000, 0.2, "12.0% of them, carrying 20.0% of the total |w| (why): no density ratio is negative"},
		{4040, 10000, 0.3, "40.4% of them, carrying 30.0% of the total |w|"},
		{3300, 10000, 0.02, "33.0% of them (why), but small there: they carry 2.0% of the total |w|"},
	} {
		got := negativeWarning(c.n, c.total, c.mass, "transitions", "why")
		if !strings.Contains(got, c.want) || !strings.Contains(got, fmt.Sprintf("negative at %d of the %d logged transitions", c.n, c.total)) {
			t.Errorf("%d of %d: %q, want %q", c.n, c.total, got, c.want)
		}
	}
}

func TestCountNegative(t *testing.T) {
	w := []float64{1, -0.5, 2, -0.5, -3}
	if n, mass := countNegative(w, nil); n != 3 || mass != 4.0/7 {
		t.Errorf("all: %d, %v; want 3, 4/7", n, mass)
	}
	if n, mass := countNegative(w, func(j int) bool { return j < 4 }); n != 2 || mass != 0.25 {
		t.Errorf("first four: %d, %v; want 2, 0.25", n, mass)
	}
}
