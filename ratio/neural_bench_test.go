package ratio

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/nn"
)

// benchTrainer returns a trainer of the default network (2 -> 64 -> 64 ->
// 1, tanh, softplus) with a batch of m = 512 transitions loaded, drawn from
// a 2-d Gaussian chain with dummies (gamma = 0.95).
func benchTrainer(b *testing.B, workers int) (*neuralTrainer, *transitions, *rand.Rand) {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 0))
	c := arChain{dim: 2, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	d := c.sample(rng, 100, 200)
	mean, scale := kernelloss.Scaling(d)
	train, _ := splitTransitions(rng, d, 0.95, -1, mean, scale, nil)
	net, err := nn.New([]int{2, 64, 64, 1}, nn.Tanh, nn.Softplus)
	if err != nil {
		b.Fatal(err)
	}
	net.Init(rng, 0.1)
	tr := newNeuralTrainer(net, 512, 1, workers)
	b.Cleanup(tr.close)
	idx := make([]int, 512)
	train.draw(rng, idx)
	tr.fill(train, idx)
	// One warm-up step, so that Adam's moment vectors exist.
	if _, err := tr.loss(true, true); err != nil {
		b.Fatal(err)
	}
	tr.opt.Step(net.Params(), tr.grad)
	return tr, train, rng
}

// BenchmarkNeuralIteration times one training iteration of the default
// network on a minibatch of 512 transitions: forward passes on the 1024
// states s_i and s'_i, the 512 x 512 kernel, the loss, the backward passes
// and the Adam update ("full", which also draws and loads the minibatch).
// The sub-benchmarks split it: "network" is the forward and backward
// passes and Adam without the kernel, "kernel" the kernel product K Delta
// alone; "full-1worker" runs on one goroutine.
func BenchmarkNeuralIteration(b *testing.B) {
	b.Run("full", func(b *testing.B) {
		tr, train, rng := benchTrainer(b, 2)
		idx := make([]int, tr.m)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			train.draw(rng, idx)
			tr.fill(train, idx)
			if _, err := tr.loss(true, true); err != nil {
				b.Fatal(err)
			}
			tr.opt.Step(tr.net.Params(), tr.grad)
		}
	})
	b.Run("full-1worker", func(b *testing.B) {
		tr, train, rng := benchTrainer(b, 1)
		idx := make([]int, tr.m)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			train.draw(rng, idx)
			tr.fill(train, idx)
			if _, err := tr.loss(true, true); err != nil {
				b.Fatal(err)
			}
			tr.opt.Step(tr.net.Params(), tr.grad)
		}
	})
	b.Run("network", func(b *testing.B) {
		tr, _, _ := benchTrainer(b, 2)
		for i := range tr.dy {
			tr.dy[i] = 1e-3
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			tr.run(phaseForward)
			tr.run(phaseBackward)
			for k := range tr.grad {
				tr.grad[k] = tr.grads[0][k] + tr.grads[1][k]
			}
			tr.opt.Step(tr.net.Params(), tr.grad)
		}
	})
	b.Run("kernel", func(b *testing.B) {
		tr, _, _ := benchTrainer(b, 2)
		for i := range tr.delta {
			tr.delta[i] = 1
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			tr.run(phaseKernel)
		}
	})
}
