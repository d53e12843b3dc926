package behavior

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/gradcheck"
)

// The penalised log-likelihood's gradient agrees with finite differences.
func TestLogisticGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 0))
	var b dataset.Builder
	b.Init(0, 4, 3, 0)
	for e := range 30 { // one step per episode
		s := []float64{rng.NormFloat64(), 3 + 2*rng.NormFloat64(), 7}
		b.Add(dataset.Step{State: -1, Obs: s, Action: rng.IntN(4), NextState: -1, LogTarget: -1})
		b.EndEpisode(fmt.Sprint(e))
	}
	d, err := b.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	m := newLogisticModel(d)
	p := m.problem(d)
	theta := make([]float64, len(m.Theta))
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	for _, steps := range [][]int{nil, {0, 3, 3, 17}} {
		g := make([]float64, len(theta))
		p.nll(theta, g, steps, 0.3)
		fd := gradcheck.FiniteDifferences(theta, func() float64 { return p.nll(theta, nil, steps, 0.3) })
		if vec, elem := gradcheck.Compare(g, fd); vec > 1e-7 || elem > 1e-5 {
			t.Errorf("steps %v: gradient off by %.3g (largest element %.3g)", steps, vec, elem)
		}
	}
}
