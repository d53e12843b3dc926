package ope_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// One episode with gamma < 1 has no block bootstrap: Run refuses it with
// ErrBlocksDiscounted before resampling, while gamma = 1 on the same
// episode and gamma < 1 on several episodes run.
func TestBootstrapBlocksDiscounted(t *testing.T) {
	m, err := ring.New(5)
	if err != nil {
		t.Fatal(err)
	}
	one, err := rollout.Sample(rand.New(rand.NewPCG(6, 0)), sim.NewSampler(m), ring.Policy(5, 0.6), ring.Policy(5, 0.3), 1, 300)
	if err != nil {
		t.Fatal(err)
	}
	many, err := rollout.Sample(rand.New(rand.NewPCG(7, 0)), sim.NewSampler(m), ring.Policy(5, 0.6), ring.Policy(5, 0.3), 10, 30)
	if err != nil {
		t.Fatal(err)
	}
	ests := []ope.Estimator{&ope.Naive{}, ope.DensityRatio{Learner: ratio.Tabular{}}}
	progress := 0
	b := ope.Bootstrap{Resamples: 10, Seed: 1, Progress: func(int) { progress++ }}

	ivs, err := b.Run(one, 0.9, ests)
	if !errors.Is(err, ope.ErrBlocksDiscounted) || ivs != nil {
		t.Errorf("one episode, gamma 0.9: %v, %v; want ErrBlocksDiscounted", ivs, err)
	}
	if progress != 0 {
		t.Errorf("%d resamples ran before the error", progress)
	}
	if err := b.Check(one, 0.9); !errors.Is(err, ope.ErrBlocksDiscounted) {
		t.Errorf("Check(one episode, 0.9) = %v", err)
	}
	for _, c := range []struct {
		name  string
		gamma float64
		n     int
	}{{"one episode, gamma 1", 1, 1}, {"ten episodes, gamma 0.9", 0.9, 10}} {
		d := one
		if c.n > 1 {
			d = many
		}
		if err := b.Check(d, c.gamma); err != nil {
			t.Errorf("%s: Check: %v", c.name, err)
		}
		ivs, err := b.Run(d, c.gamma, ests)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for k, iv := range ivs {
			if len(iv.Estimates) != 10 || iv.Failures != 0 || !(iv.Low <= iv.High) {
				t.Errorf("%s, %s: %+v", c.name, ests[k].Name(), iv)
			}
		}
	}
}
