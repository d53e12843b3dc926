package value

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/internal/gradcheck"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/nn"
	"github.com/ihope-ope/ihope/sim/lineargauss"
)

// The gradient of the neural MQL's sample loss, profiled over the
// residuals' level, matches central finite differences on a
// tiny network, for gamma < 1 and = 1.
func TestMQLNeuralGradient(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(3, 4)), behavior, target, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	mean, scale := kernelloss.Scaling(d)
	nd := kernelloss.NewNeuralData(d, mean, scale)
	idx := []int{0, 4, 4, 7, 11, 16, 2}
	for _, gamma := range []float64{0.9, 1} {
		{
			net, err := nn.New([]int{1, 4, 3, 3}, nn.Tanh, nn.Identity)
			if err != nil {
				t.Fatal(err)
			}
			net.Init(rand.New(rand.NewPCG(1, 2)), 1)
			b := newMQLBatch(net, len(idx), kernelloss.NewFeatureLoss(rand.New(rand.NewPCG(5, 6)), 1, 3, 0, 16, 0.7))
			b.load(nd, idx)
			f := func() float64 {
				v, err := b.loss(nd, gamma, -2, 3, 0, true, false)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			if _, err := b.loss(nd, gamma, -2, 3, 0, true, true); err != nil {
				t.Fatal(err)
			}
			g := append([]float64(nil), b.grad...)
			fd := gradcheck.FiniteDifferences(net.Params(), f)
			vec, elem := gradcheck.Compare(g, fd)
			t.Logf("gamma %g: relative error %.2g (vector), %.2g (largest element)", gamma, vec, elem)
			if !(vec <= 1e-6) {
				t.Errorf("gamma %g: relative error %.3g", gamma, vec)
			}
		}
	}
}
