package ope

import (
	"errors"
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
)

// A Bounder gives confidence bounds on one estimand of the target's
// value (HCOPE on the horizon value, KernelBellman on the long-run one).
type Bounder interface {
	Name() string // "hcope", "kernel-bellman": Bound.Method
	Estimand() Estimand
	Bounds(d *dataset.Dataset, gamma float64) (Bound, error)
}

// Bound is a confidence bound on a value: Low and High hold it together
// with probability at least Level; either is NaN when the method gives no
// bound on that side.
type Bound struct {
	Low, High float64
	Level     float64
	// Method names the bound ("hcope", "kernel-bellman"); Calibration
	// how its threshold was set, where it has one ("finite-sample",
	// "sign-flip").
	Method, Calibration string
	// Guaranteed says whether the level holds for any sample size (a
	// finite-sample bound) rather than as the sample grows.
	Guaranteed bool
	// Assumes says, in plain words, what the guarantee rests on.
	Assumes string
	// Markov says that it rests on the logged states being Markov (its
	// class holds q as a function of the state and action): aliased
	// states break it (MarkovTest says when a log's visibly do).
	Markov bool
}

// BoundSettings are what the bounds share: the range every reward lies
// in (stated by the user), 1 - their level, the kernel Bellman interval's
// calibration and the seed of what they draw.
type BoundSettings struct {
	RewardLow, RewardHigh float64
	Alpha                 float64
	Calibration           string
	Seed                  uint64
}

// ErrNoRange is returned by the bounds that need the rewards' range when
// it is not given.
var ErrNoRange = errors.New("a bound needs the range every reward lies in, stated by you (ihope estimate --reward-range LO,HI), not read off the sample")

// The verdicts of Compare.
const (
	Better   = "better"
	Worse    = "worse"
	NotShown = "not shown"
)

// Compare says whether a target whose value lies in t is better or worse
// than a baseline whose value lies in base (a known value: Low = High),
// with the confidence of both bounds together (1 - the sum of their
// alphas, by the union bound), or that the bounds do not show either.
func Compare(t, base Bound) (verdict string, level float64) {
	level = t.Level
	if base.Low != base.High {
		level = 1 - (1 - t.Level) - (1 - base.Level)
	}
	switch {
	case t.Low > base.High:
		return Better, level
	case t.High < base.Low:
		return Worse, level
	}
	return NotShown, level
}

// boundRange checks a stated reward range.
func boundRange(name string, lo, hi float64) error {
	if lo == 0 && hi == 0 {
		return fmt.Errorf("%s: %w", name, ErrNoRange)
	}
	if !(lo < hi) || lo-lo != 0 || hi-hi != 0 {
		return fmt.Errorf("%s: reward range [%v, %v]: want finite LO < HI", name, lo, hi)
	}
	return nil
}

// boundAlpha returns a bound's alpha, 0.05 for 0, or an error outside (0, 1).
func boundAlpha(name string, alpha float64) (float64, error) {
	if alpha == 0 {
		alpha = 0.05
	}
	if !(alpha > 0 && alpha < 1) {
		return 0, fmt.Errorf("%s: alpha %v outside (0, 1)", name, alpha)
	}
	return alpha, nil
}

// rewardsWithin checks that every logged reward, and the terminal
// state's 0 where episodes end in one, lies in the stated range: the
// guarantees rest on it.
func rewardsWithin(name string, d *dataset.Dataset, lo, hi float64) error {
	for e := range d.NumEpisodes() {
		first, end := d.Span(e)
		for j := first; j < end; j++ {
			if r := d.Reward[j]; !(r >= lo && r <= hi) {
				return fmt.Errorf("%s: episode %q step %d: reward %v outside the stated range [%v, %v]", name, d.IDs[e], j-first, r, lo, hi)
			}
		}
	}
	if d.NumTerminal() > 0 && (0 < lo || 0 > hi) {
		return fmt.Errorf("%s: episodes end in a terminal state, whose reward 0 lies outside the stated range [%v, %v]", name, lo, hi)
	}
	return nil
}
