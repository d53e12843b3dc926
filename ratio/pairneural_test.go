package ratio

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/internal/gradcheck"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/nn"
	"github.com/ihope-ope/ihope/sim/lineargauss"
)

// The gradient of the neural MWL/DualDICE sample loss (through the
// batch-mean normalisation of w) matches central finite differences on a
// tiny network: gamma < 1 and = 1, V- and U-statistic, with and without
// DualDICE's E[w^2] term.
func TestPairNeuralGradient(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(3, 4)), behavior, target, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	mean, scale := kernelloss.Scaling(d)
	nd := kernelloss.NewNeuralData(d, mean, scale)
	idx := []int{0, 4, 4, 7, 11, 14, 2}
	st := []int{0, 2}
	for _, gamma := range []float64{0.9, 1} {
		{
			for _, lambda := range []float64{0, 0.3} {
				net, err := nn.New([]int{1, 4, 3, 3}, nn.Tanh, nn.Exp)
				if err != nil {
					t.Fatal(err)
				}
				net.Init(rand.New(rand.NewPCG(1, 2)), 1)
				starts := st
				if gamma == 1 {
					starts = nil
				}
				kern := kernelloss.NewFeatureLoss(rand.New(rand.NewPCG(5, 6)), 1, 3, 0, 16, 0.7)
				b := newPairBatch(net, len(idx), len(starts), kern)
				b.load(nd, idx, starts, gamma)
				f := func() float64 {
					v, err := b.loss(nd, gamma, lambda, false)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				if _, err := b.loss(nd, gamma, lambda, true); err != nil {
					t.Fatal(err)
				}
				g := append([]float64(nil), b.grad...)
				vec, elem := gradcheck.Compare(g, gradcheck.FiniteDifferences(net.Params(), f))
				t.Logf("gamma %g, lambda %g: relative error %.2g (vector), %.2g (largest element)", gamma, lambda, vec, elem)
				if !(vec <= 1e-6) {
					t.Errorf("gamma %g, lambda %g: relative error %.3g", gamma, lambda, vec)
				}
			}
		}
	}
}
