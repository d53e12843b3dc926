package ope_test

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/value"
)

// On the linear-Gaussian system the quadratic features hold q exactly,
// so the linear kernel Bellman interval (sign flips) covers the exact
// long-run value in at least 1 - alpha - 2.33 sqrt(alpha(1 - alpha)/seeds)
// of the seeds at 90% (40 seeds; IHOPE_LONG=1: 200).
//
// At gamma = 1 (the average-reward form) the same holds for the exact
// average reward, on the 1-d and the 2-d system.
func TestKernelBellmanLinearCoverage(t *testing.T) {
	const alpha = 0.1
	seeds := 40
	if os.Getenv("IHOPE_LONG") != "" {
		seeds = 200
	}
	for _, c := range []struct {
		name  string
		p     *lineargauss.Problem
		gamma float64
	}{{"1-d", lineargauss.Problem1D(), 0.9}, {"1-d", lineargauss.Problem1D(), 1}, {"2-d", lineargauss.Problem2D(), 1}} {
		kernelBellmanLinearCoverage(t, c.name, c.p, c.gamma, alpha, seeds)
	}
}

func kernelBellmanLinearCoverage(t *testing.T, name string, p *lineargauss.Problem, gamma, alpha float64, seeds int) {
	t.Helper()
	var truth float64
	var err error
	if gamma == 1 {
		truth, err = p.System.AverageReward(p.Target)
	} else {
		truth, err = p.System.Value(p.Target, gamma, 3000)
	}
	if err != nil {
		t.Fatal(err)
	}
	covered, width := 0, 0.0
	for s := range seeds {
		d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(s), 5)), p.System, p.Behavior, p.Target, 60, 60)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ope.KernelBellman{RewardLow: -1e6, RewardHigh: 1e6, Alpha: alpha, Seed: uint64(s), Flips: 1000,
			ValueTarget: value.Target{Continuous: p.Target, Seed: 7}}.Bounds(d, gamma)
		if err != nil {
			t.Fatal(err)
		}
		if b.Guaranteed || b.Calibration != ope.SignFlip {
			t.Fatalf("real states: %+v, want the sign-flip calibration, no guarantee", b)
		}
		if b.Low <= truth && truth <= b.High {
			covered++
		}
		width += (b.High - b.Low) / float64(seeds)
	}
	floor := 1 - alpha - 2.33*math.Sqrt(alpha*(1-alpha)/float64(seeds))
	if float64(covered)/float64(seeds) < floor {
		t.Errorf("%s, gamma %v: covered %d of %d, want at least %.3f", name, gamma, covered, seeds, floor)
	}
	t.Logf("linear-Gaussian %s, gamma %v: covered %d/%d, mean width %.4f (truth %.5f)", name, gamma, covered, seeds, width, truth)
}
