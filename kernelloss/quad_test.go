package kernelloss

import (
	"math"
	"testing"
)

// LeastLoss is the plain minimum of the held-out losses over the grid,
// skipping ridges too small for the loss (+Inf); the one-standard-error
// rule's Ridge is at or above it.
func TestCVLeastLoss(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		cv   CV
		want float64
	}{
		{CV{Grid: []float64{1e-6, 1e-3, 1}, Loss: []float64{0.5, 0.2, 0.3}, SE: []float64{0.1, 0.1, 0.1}, Ridge: 1}, 1e-3},
		{CV{Grid: []float64{1e-6, 1e-3, 1}, Loss: []float64{inf, 0.4, 0.3}, SE: []float64{inf, 0.1, 0.1}, Ridge: 1}, 1},
		{CV{Grid: []float64{1e-6, 1e-3}, Loss: []float64{0.1, 0.2}, Ridge: 1e-3}, 1e-6},
		{CV{Ridge: 1e-2}, 1e-2}, // no grid: the fallback
	} {
		if got := c.cv.LeastLoss(); got != c.want {
			t.Errorf("%+v: LeastLoss %g, want %g", c.cv, got, c.want)
		}
	}
}
