package ratio_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// lgAverageReward is the 1-d linear-Gaussian problem's average reward of
// its target (lineargauss.Problem1D).
const lgAverageReward = -0.24079

// rangeOn fits bch-kernel's learner to a log of the 1-d linear-Gaussian
// system (gamma = 1) and returns its estimate's model and identification
// range at 0.05.
func rangeOn(t *testing.T, seed uint64, n, T int) (*ratio.KernelModel, ratio.FlowRange) {
	t.Helper()
	p := lineargauss.Problem1D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(seed+1, 5)), p.System, p.Behavior, p.Target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ratio.Kernel{}.Fit(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	km := m.(*ratio.KernelModel)
	r, err := ratio.FlowTest{Seed: seed}.Range(d, 1, km, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	return km, r
}

// On two logs of the 1-d linear-Gaussian system the range is finite, not
// empty, holds the average reward, and is narrow: the log locates the
// ratio (about 1.6 times the bootstrap interval's width, 0.066 on such
// logs: under twice it, so no warning; docs/intervals.md).
func TestFlowRange(t *testing.T) {
	for _, seed := range []uint64{0, 1} {
		_, r := rangeOn(t, seed, 40, 200)
		t.Logf("seed %d: range [%.4f, %.4f], lambda %.3g, least loss %.3g", seed, r.Low, r.High, r.Lambda, r.MinLoss)
		if r.Empty || !(r.Low <= lgAverageReward && lgAverageReward <= r.High) || r.High-r.Low > 0.13 || r.Units != 40 {
			t.Errorf("seed %d: range %+v, want a range under 0.13 wide holding %v", seed, r, lgAverageReward)
		}
	}
}

// The range holds the average reward on most logs (it is the flow test's
// inversion at 0.05, asymptotic, over a class of bumps that can only
// approach the Gaussian ratio): measured on 20 of 20 logs of 40 episodes
// and of one episode of 8,000 steps, 0.105 and 0.103 wide on average (the
// bootstrap interval of bch-kernel, 0.066 and 0.059); at least 17 must,
// and the mean width must stay under 0.15.
func TestFlowRangeCovers(t *testing.T) {
	if !testsets.Stat() {
		t.Skip("statistical set: IHOPE_STAT=1 (CI runs it)")
	}
	for _, shape := range []struct{ n, T int }{{40, 200}, {1, 8000}} {
		covered, width := 0, 0.0
		for seed := range 20 {
			_, r := rangeOn(t, uint64(seed), shape.n, shape.T)
			if r.Low <= lgAverageReward && lgAverageReward <= r.High {
				covered++
			}
			width += r.High - r.Low
		}
		t.Logf("%d x %d: the range holds the average reward on %d of 20 logs, mean width %.4f", shape.n, shape.T, covered, width/20)
		if covered < 17 || !(width/20 < 0.15) {
			t.Errorf("%d x %d: the range held the average reward on %d of 20 logs", shape.n, shape.T, covered)
		}
	}
}

// BenchmarkFlowRange is the identification range on 150 episodes of
// 1,000 steps of the 1-d linear-Gaussian system (the fit outside the
// timing).
func BenchmarkFlowRange(b *testing.B) {
	p := lineargauss.Problem1D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(1, 5)), p.System, p.Behavior, p.Target, 150, 1000)
	if err != nil {
		b.Fatal(err)
	}
	m, err := ratio.Kernel{}.Fit(d, 1)
	if err != nil {
		b.Fatal(err)
	}
	km := m.(*ratio.KernelModel)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (ratio.FlowTest{Seed: 1}).Range(d, 1, km, 0.05); err != nil {
			b.Fatal(err)
		}
	}
}
