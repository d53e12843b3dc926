package ratio_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
)

func constantRatio(obs [][]float64) ([]float64, error) {
	w := make([]float64, len(obs))
	for i := range w {
		w[i] = 1
	}
	return w, nil
}

// The flow test is calibrated: at the exact stationary ratio of the 1-d
// linear-Gaussian system (gamma = 1, logs from the behavior's stationary
// law) its p-values are uniform, so at level 0.1 it rejects on about 4
// of 40 seeds (at most 9 here: a valid test does more with probability
// 0.008); and it has power: w = 1 (the behavior's own law, 0.3 from the
// target's mean) is rejected at 0.01 on at least 35 of the 40. The same
// on one long episode, whose blocks are flipped.
func TestFlowTestCalibrated(t *testing.T) {
	if !testsets.Stat() {
		t.Skip("statistical set: IHOPE_STAT=1 (CI runs it)")
	}
	p := lineargauss.Problem1D()
	r, err := p.Ratio()
	if err != nil {
		t.Fatal(err)
	}
	exact := func(obs [][]float64) ([]float64, error) {
		w := make([]float64, len(obs))
		for i, o := range obs {
			w[i] = r.W(o)
		}
		return w, nil
	}
	for _, shape := range []struct{ n, T int }{{40, 200}, {1, 8000}} {
		const seeds = 40
		rejectExact, rejectOne := 0, 0
		for seed := range seeds {
			d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(seed)+1, 5)), p.System, p.Behavior, p.Target, shape.n, shape.T)
			if err != nil {
				t.Fatal(err)
			}
			ft := ratio.FlowTest{Seed: uint64(seed) + 1}
			a, err := ft.Run(d, 1, exact)
			if err != nil {
				t.Fatal(err)
			}
			if a.P <= 0.1 {
				rejectExact++
			}
			b, err := ft.Run(d, 1, constantRatio)
			if err != nil {
				t.Fatal(err)
			}
			if b.P <= 0.01 {
				rejectOne++
			}
		}
		t.Logf("%d × %d: the exact ratio rejected at 0.1 on %d of %d seeds, w = 1 at 0.01 on %d", shape.n, shape.T, rejectExact, seeds, rejectOne)
		if rejectExact > 9 {
			t.Errorf("%d × %d: the exact ratio rejected at 0.1 on %d of %d seeds", shape.n, shape.T, rejectExact, seeds)
		}
		if rejectOne < 35 {
			t.Errorf("%d × %d: w = 1 rejected at 0.01 on only %d of %d seeds", shape.n, shape.T, rejectOne, seeds)
		}
	}
}

// On discounted Pendulum (the paper's logs, gamma = 0.99) the held-out
// test rejects w = 1 at 0.05 on at least 3 of 4 seeds: the bar
// for an identification test that can see a wrong ratio there.
func TestFlowTestPendulumDiscounted(t *testing.T) {
	world, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	behavior, err := pendulum.Behavior(1)
	if err != nil {
		t.Fatal(err)
	}
	rejected := 0
	for seed := range 4 {
		d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(seed)+1, 91)), world, behavior, target, 150, 1000)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ratio.FlowTest{Seed: 1}.Run(heldOut(d), 0.99, constantRatio)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: w = 1: U %.3g, z %.2f, p %.3g", seed, res.U, res.Z, res.P)
		if res.P <= 0.05 {
			rejected++
		}
	}
	if rejected < 3 {
		t.Errorf("w = 1 rejected on %d of 4 seeds of discounted Pendulum, want at least 3", rejected)
	}
}

// heldOut returns the second half of d's episodes: the ones a ratio
// fitted on the first half was not fitted on.
func heldOut(d *dataset.Dataset) *dataset.Dataset {
	var idx []int
	for e := d.NumEpisodes() / 2; e < d.NumEpisodes(); e++ {
		idx = append(idx, e)
	}
	return d.Subset(idx)
}
