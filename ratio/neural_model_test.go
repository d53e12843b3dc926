package ratio

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNeuralModelRatio checks the normalisation (the gamma^t-weighted mean
// of the ratio over the logged states is 1) and that Ratio, RatioBatch and
// StepRatios agree.
func TestNeuralModelRatio(t *testing.T) {
	c := arChain{dim: 2, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	d := c.sample(rand.New(rand.NewPCG(5, 0)), 30, 40)
	m := fit0(t, d, 11) // gamma = 0.95
	w, err := m.StepRatios(d)
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		g := 1.0
		for k := lo; k < hi; k++ {
			if r := m.Ratio(d.ObsAt(k)); math.Abs(r-w[k]) > 1e-15*r {
				t.Fatalf("episode %d step %d: Ratio %v, StepRatios %v", e, k-lo, r, w[k])
			}
			num += g * w[k]
			den += g
			g *= 0.95
		}
	}
	if mean := num / den; math.Abs(mean-1) > 1e-12 {
		t.Errorf("weighted mean ratio %v, want 1", mean)
	}
	if !math.IsNaN(m.Ratio([]float64{1})) {
		t.Errorf("Ratio of a 1-d state for a 2-d model is not NaN")
	}
	if _, err := m.RatioBatch([][]float64{{1, 2}, {3}}); err == nil {
		t.Errorf("RatioBatch accepted a 1-d state")
	}
}
