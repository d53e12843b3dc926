package ratio

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/env/lineargauss"
	"github.com/ihope-ope/ihope/internal/gradcheck"
	"github.com/ihope-ope/ihope/internal/minimax"
	"github.com/ihope-ope/ihope/nn"
)

// The gradient of the neural MWL/DualDICE minibatch loss (through the
// batch-mean normalisation of w) matches central finite differences on a
// tiny network: gamma < 1 and = 1, V- and U-statistic, with and without
// DualDICE's E[w^2] term.
func TestPairNeuralGradient(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(3, 4)), behavior, target, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	mean, scale := minimax.Scaling(d)
	nd := minimax.NewNeuralData(d, mean, scale)
	idx := []int{0, 4, 4, 7, 11, 14, 2}
	st := []int{0, 1, 2, 2, 0, 1, 1}
	for _, gamma := range []float64{0.9, 1} {
		for _, diag := range []bool{true, false} {
			for _, lambda := range []float64{0, 0.3} {
				net, err := nn.New([]int{1, 4, 3, 3}, nn.Tanh, nn.Exp)
				if err != nil {
					t.Fatal(err)
				}
				net.Init(rand.New(rand.NewPCG(1, 2)), 1)
				b := newPairBatch(net, len(idx), gamma, 0.7)
				f := func() float64 {
					v, err := b.loss(nd, idx, st, gamma, lambda, diag, false)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				if _, err := b.loss(nd, idx, st, gamma, lambda, diag, true); err != nil {
					t.Fatal(err)
				}
				g := append([]float64(nil), b.grad...)
				vec, elem := gradcheck.Compare(g, gradcheck.FiniteDifferences(net.Params(), f))
				t.Logf("gamma %g, V-statistic %v, lambda %g: relative error %.2g (vector), %.2g (largest element)", gamma, diag, lambda, vec, elem)
				if !(vec <= 1e-6) {
					t.Errorf("gamma %g, V-statistic %v, lambda %g: relative error %.3g", gamma, diag, lambda, vec)
				}
			}
		}
	}
}
