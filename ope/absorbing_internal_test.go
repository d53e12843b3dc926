package ope

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ihope-ope/ihope/policy"
)

// In the absorbing state z = (0, ..., 0, 1) a policy over real actions
// takes the zero action, the one the padding logs there, whatever the
// policy would do at the zero state; elsewhere it acts on the state
// without its indicator. (Sampling the policy at the zero state, a draws
// file's target made fqe depend on an unrelated row: an audit.)
func TestAbsorbingContinuousZ(t *testing.T) {
	draws, err := policy.NewDraws([][]float64{{0, 0}, {1, 2}}, [][]float64{{5}, {7}})
	if err != nil {
		t.Fatal(err)
	}
	p := absorbingContinuous{Continuous: draws, dim: 2}
	rng := rand.New(rand.NewPCG(1, 1))
	if a := p.Sample(rng, []float64{0, 0, 1}); !slices.Equal(a, []float64{0}) {
		t.Errorf("at z: %v, want the zero action", a)
	}
	if a := p.Sample(rng, []float64{1, 2, 0}); !slices.Equal(a, []float64{7}) {
		t.Errorf("at (1, 2): %v, want 7", a)
	}
	if a := p.Sample(rng, []float64{0, 0, 0}); !slices.Equal(a, []float64{5}) {
		t.Errorf("at the zero state: %v, want 5", a)
	}
	if a := p.Sample(rng, []float64{3, 3, 0}); !math.IsNaN(a[0]) {
		t.Errorf("at a state without draws: %v, want NaN", a)
	}
}
