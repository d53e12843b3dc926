package ope_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// The empirical Bernstein bound by hand: x = (0, 1, 2, 3), c = 2, so
// Y = (0, 1, 2, 2), mean 1.25, sample variance (0+1+4+4 - 4*1.25^2)/3 =
// 2.75/3; with delta = 0.1, l = ln 20.
func TestEmpiricalBernsteinLower(t *testing.T) {
	l := math.Log(20)
	want := 1.25 - 7*2*l/(3*3) - math.Sqrt(2*l*(2.75/3)/4)
	if got := ope.EmpiricalBernsteinLower([]float64{0, 1, 2, 3}, 2, 0.1); math.Abs(got-want) > 1e-15 {
		t.Errorf("bound %.17g, want %.17g", got, want)
	}
	if got := ope.EmpiricalBernsteinLower([]float64{1}, 2, 0.1); !math.IsInf(got, -1) {
		t.Errorf("one value: %v, want -Inf", got)
	}
}

// ChooseClip picks, among the held-out values, the clip whose predicted
// bound is largest: with one huge weight among ones, clipping it away
// (c = 1) beats keeping it (its variance term dominates).
func TestChooseClip(t *testing.T) {
	x := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1000}
	if c := ope.ChooseClip(x, 100, 0.05); c != 1 {
		t.Errorf("clip %v, want 1", c)
	}
}

// hcopeRing samples n episodes of T steps on the 5-state ring (behavior
// P(R) = 0.6, target 0.3) and returns them with the target's exact
// horizon value.
func hcopeRing(t testing.TB, seed uint64, n, T int, gamma, pTarget float64) (float64, func() (ope.Bound, error)) {
	t.Helper()
	m, err := ring.New(5)
	if err != nil {
		t.Fatal(err)
	}
	target := ring.Policy(5, pTarget)
	d, err := rollout.Sample(rand.New(rand.NewPCG(seed, 11)), sim.NewSampler(m), ring.Policy(5, 0.6), target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	truth := mdp.Value(m, target, nil, T, gamma)
	return truth, func() (ope.Bound, error) {
		return ope.HCOPE{RewardLow: 0, RewardHigh: 1, Alpha: 0.1, Seed: seed}.Bounds(d, gamma)
	}
}

// Coverage over 200 seeds on the ring, whose exact horizon value is
// known: the two bounds hold the truth together in at least
// 1 - alpha - 2.33 sqrt(alpha(1 - alpha)/200) of the seeds. (The bound is
// conservative: it holds in all of them here.) A target equal to the
// behavior gives a bound whose width shrinks with n.
func TestHCOPECoverage(t *testing.T) {
	const seeds, alpha = 200, 0.1
	for _, gamma := range []float64{1, 0.9} {
		covered, width := 0, 0.0
		for s := range seeds {
			truth, bound := hcopeRing(t, uint64(s), 200, 6, gamma, 0.3)
			b, err := bound()
			if err != nil {
				t.Fatal(err)
			}
			if b.Low <= truth && truth <= b.High {
				covered++
			}
			width += (b.High - b.Low) / seeds
		}
		floor := 1 - alpha - 2.33*math.Sqrt(alpha*(1-alpha)/seeds)
		if float64(covered)/seeds < floor {
			t.Errorf("gamma %v: covered %d of %d, want at least %.3f", gamma, covered, seeds, floor)
		}
		if !(width < 1) {
			t.Errorf("gamma %v: mean width %v: the bound says nothing beyond the reward range", gamma, width)
		}
		t.Logf("gamma %v: covered %d/%d, mean width %.3f", gamma, covered, seeds, width)
	}
	// On-policy logs: every weight is 1, and the width falls with n.
	var w [2]float64
	for k, n := range []int{100, 1600} {
		_, bound := hcopeRing(t, 1, n, 6, 1, 0.6)
		b, err := bound()
		if err != nil {
			t.Fatal(err)
		}
		w[k] = b.High - b.Low
	}
	// sqrt(1/n) and 1/n terms: a ratio between 4 and 16.
	if r := w[0] / w[1]; r < 4 || r > 16 || w[1] > 0.06 {
		t.Errorf("on-policy widths %v at n = 100 and 1600: ratio %.2f, want 4 to 16 and the second below 0.06", w, r)
	}
}

func TestHCOPERefuses(t *testing.T) {
	_, bound := hcopeRing(t, 1, 50, 6, 1, 0.3)
	if _, err := bound(); err != nil {
		t.Fatal(err)
	}
	m, _ := ring.New(5)
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 11)), sim.NewSampler(m), ring.Policy(5, 0.6), ring.Policy(5, 0.3), 50, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (ope.HCOPE{}).Bounds(d, 1); !errors.Is(err, ope.ErrNoRange) {
		t.Errorf("no range: %v, want ErrNoRange", err)
	}
	if _, err := (ope.HCOPE{RewardLow: 0, RewardHigh: 0.5}).Bounds(d, 1); err == nil || !strings.Contains(err.Error(), "outside the stated range") {
		t.Errorf("rewards beyond the range: %v", err)
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		t, base ope.Bound
		want    string
		level   float64
	}{
		{ope.Bound{Low: 0.6, High: 0.8, Level: 0.95}, ope.Bound{Low: 0.5, High: 0.5, Level: 1}, ope.Better, 0.95},
		{ope.Bound{Low: 0.6, High: 0.8, Level: 0.95}, ope.Bound{Low: 0.9, High: 0.9, Level: 1}, ope.Worse, 0.95},
		{ope.Bound{Low: 0.6, High: 0.8, Level: 0.95}, ope.Bound{Low: 0.7, High: 0.7, Level: 1}, ope.NotShown, 0.95},
		{ope.Bound{Low: 0.6, High: 0.8, Level: 0.95}, ope.Bound{Low: 0.3, High: 0.59, Level: 0.9}, ope.Better, 0.85},
		{ope.Bound{Low: 0.6, High: 0.8, Level: 0.95}, ope.Bound{Low: 0.3, High: 0.61, Level: 0.9}, ope.NotShown, 0.85},
	} {
		v, l := ope.Compare(c.t, c.base)
		if v != c.want || math.Abs(l-c.level) > 1e-12 {
			t.Errorf("Compare(%+v, %+v) = %s at %v, want %s at %v", c.t, c.base, v, l, c.want, c.level)
		}
	}
}
