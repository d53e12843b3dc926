package ratio_test

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// TestDiscountedPendulumHeldOut measures what the kernel loss can tell on
// Pendulum at gamma = 0.99 (the README's Pendulum logs, n = 150, T =
// 1000, alpha = 1): per data seed it fits Kernel at ridges 1e-6 to 100 and
// one network (Neural's defaults) on the first 75 episodes and tests each
// fit with the held-out flow test (ratio.FlowTest: sign flips of the other
// 75 episodes). An earlier version scored each fit on the episodes it was
// fitted on and accepted nearly all (2 of 16 rejected), concluding that
// the discounted value was not identified; held out, the test rejects
// more of them. It logs every fit's estimate and p-value and asserts that
// the held-out test rejects at least one fit on at least 2 of the 4 seeds.
// IHOPE_LONG=1 (a few minutes).
func TestDiscountedPendulumHeldOut(t *testing.T) {
	if os.Getenv("IHOPE_LONG") != "1" {
		t.Skip("set IHOPE_LONG=1 to run (a few minutes)")
	}
	world, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	behavior, err := pendulum.Behavior(1)
	if err != nil {
		t.Fatal(err)
	}
	seedsRejecting := 0
	for seed := range 4 {
		d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(seed)+1, 91)), world, behavior, target, 150, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var first []int
		for e := range 75 {
			first = append(first, e)
		}
		train, held := d.Subset(first), heldOut(d)
		type fit struct {
			name string
			m    ratio.Model
			at   func([][]float64) ([]float64, error)
		}
		nm, err := ratio.Neural{Seed: 1}.Fit(train, 0.99)
		if err != nil {
			t.Fatal(err)
		}
		net := nm.(*ratio.NeuralModel)
		fits := []fit{{"network", net, net.RatioBatch}}
		for _, ridge := range []float64{1e-6, 1e-2, 1, 100} {
			km, err := ratio.Kernel{Ridge: ridge}.Fit(train, 0.99)
			if err != nil {
				t.Fatal(err)
			}
			k := km.(*ratio.KernelModel)
			fits = append(fits, fit{"kernel, ridge " + strconv.FormatFloat(ridge, 'g', -1, 64), k, func(obs [][]float64) ([]float64, error) {
				w := make([]float64, len(obs))
				for i, o := range obs {
					w[i] = k.Ratio(o)
				}
				return w, nil
			}})
		}
		var accepted []float64
		rejected := 0
		for _, f := range fits {
			res, err := ratio.FlowTest{Seed: 1}.Run(held, 0.99, f.at)
			if err != nil {
				t.Fatal(err)
			}
			w, err := f.m.StepRatios(d)
			if err != nil {
				t.Fatal(err)
			}
			v := discountedEstimate(d, 0.99, w)
			t.Logf("seed %d: %s: estimate %.3f (truth -1.451), held-out p %.3g, z %.2f", seed, f.name, v, res.P, res.Z)
			if res.P <= 0.05 {
				rejected++
			} else {
				accepted = append(accepted, v)
			}
		}
		if rejected > 0 {
			seedsRejecting++
		}
		if len(accepted) > 0 {
			t.Logf("seed %d: %d of %d fits rejected; the accepted estimates span %.3f to %.3f", seed, rejected, len(fits), slices.Min(accepted), slices.Max(accepted))
		}
	}
	if seedsRejecting < 2 {
		t.Errorf("the held-out test rejected a fit on %d of 4 seeds, want at least 2", seedsRejecting)
	}
}

// discountedEstimate is the density-ratio estimate sum gamma^t w beta r /
// sum gamma^t w beta over the logged steps (ope's ratioEstimate, without
// its log-space scaling).
func discountedEstimate(d *dataset.Dataset, gamma float64, w []float64) float64 {
	var num, den float64
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		g := 1.0
		for j := lo; j < hi; j++ {
			v := g * w[j] * math.Exp(d.LogRatio(j))
			num += v * d.Reward[j]
			den += v
			g *= gamma
		}
	}
	return num / den
}
