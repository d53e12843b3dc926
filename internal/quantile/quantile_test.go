package quantile

import (
	"math"
	"testing"
)

func TestType7(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5}
	for i, c := range []struct{ p, want float64 }{
		{0, 1}, {1, 5}, {0.5, 3}, {0.25, 2}, {0.1, 1.4}, {0.95, 4.8},
	} {
		if got := Type7(sorted, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%d: Type7(%v) = %v, want %v", i, c.p, got, c.want)
		}
	}
	if got := Type7([]float64{7}, 0.3); got != 7 {
		t.Errorf("single value: %v", got)
	}
	// Ties next to +Inf stay finite instead of becoming NaN (Inf - Inf).
	if got := Type7([]float64{1, 2, 2, math.Inf(1)}, 0.5); got != 2 {
		t.Errorf("ties before +Inf: %v", got)
	}
	if got := Type7([]float64{1, math.Inf(1), math.Inf(1)}, 0.9); !math.IsInf(got, 1) {
		t.Errorf("+Inf ties: %v", got)
	}
}
