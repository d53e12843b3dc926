package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

// IdentificationAlpha is the level of the flow tests behind Identify: an
// alternative ratio whose p-value exceeds it passes (the log cannot
// reject it), and the identification range holds the ratios the test at
// this level accepts.
const IdentificationAlpha = 0.05

// heldOutWarnings says, for a density-ratio estimate on real states
// (bch-kernel's, with its interval [low, high]), when the log cannot tell
// the ratio behind it from a ratio that gives another value. The
// episodes are split in halves; on the second half the held-out flow
// test (ratio.FlowTest, sign flips of whole episodes) tests two
// alternatives:
//
//   - w = 1, the behavior's own state distribution, whose estimate is the
//     behavior-weighted mean reward (its warning is one);
//   - at gamma < 1, the long-run (gamma = 1) ratio of learner fitted on
//     the first half: the average-reward ratio in place of the discounted
//     one (long).
//
// An alternative that passes (p > IdentificationAlpha) and whose estimate
// on the whole log lies outside the interval gets a warning in plain
// words ("" otherwise): the kernel loss cannot locate the value between
// the two on this log. It needs at least 8 episodes; fewer give none.
func heldOutWarnings(name string, d *dataset.Dataset, gamma, low, high float64, learner ratio.Kernel, seed uint64) (one, long string, err error) {
	n := d.NumEpisodes()
	if d.StateDim == 0 || n < 8 || math.IsNaN(low) || math.IsNaN(high) {
		return "", "", nil
	}
	first, second := make([]int, 0, n/2), make([]int, 0, n-n/2)
	for e := range n {
		if e < n/2 {
			first = append(first, e)
		} else {
			second = append(second, e)
		}
	}
	held := d.Subset(second)
	test := ratio.FlowTest{Seed: seed}
	constant := func(obs [][]float64) ([]float64, error) {
		w := make([]float64, len(obs))
		for i := range w {
			w[i] = 1
		}
		return w, nil
	}
	res, err := test.Run(held, gamma, constant)
	if err != nil {
		return "", "", err
	}
	if res.P > IdentificationAlpha {
		w := make([]float64, d.NumSteps())
		for i := range w {
			w[i] = 1
		}
		if alt, err := ratioEstimate(d, gamma, w); err == nil && (alt.Value < low || alt.Value > high) {
			one = fmt.Sprintf(
				"%s: the data do not pin its ratio down: a ratio of 1 (the behavior's own state distribution) passes the flow test on held-out episodes (p = %.2g), yet gives %.4g, outside %s's interval [%.4g, %.4g]. The estimate rests on the learner's smoothing (its ridge and bumps) as much as on the data, and its interval does not count that; compare the importance-sampling rows, or log more episodes where the two policies differ",
				name, res.P, alt.Value, name, low, high)
		}
	}
	if gamma < 1 {
		m, err := learner.Fit(d.Subset(first), 1)
		if err != nil {
			return one, "", nil // no long-run ratio to test: nothing to say
		}
		km, ok := m.(*ratio.KernelModel)
		if !ok {
			return one, "", nil
		}
		longRun := func(obs [][]float64) ([]float64, error) {
			w := make([]float64, len(obs))
			for i, o := range obs {
				w[i] = km.Ratio(o)
			}
			return w, nil
		}
		res, err := test.Run(held, gamma, longRun)
		if err != nil {
			return one, "", nil
		}
		if res.P > IdentificationAlpha {
			w, err := m.StepRatios(d)
			if err != nil {
				return one, "", nil
			}
			if alt, err := ratioEstimate(d, gamma, w); err == nil && (alt.Value < low || alt.Value > high) {
				long = fmt.Sprintf(
					"%s: the data do not tell the discounted ratio from the long-run one: the average-reward (gamma = 1) ratio, fitted on half the episodes, passes the discounted flow test on the other half (p = %.2g), yet gives %.4g, outside %s's interval [%.4g, %.4g]. The kernel loss does not locate the discounted value on this log, and the interval does not count that; prefer estimators of the horizon value (--estimand horizon)",
					name, res.P, alt.Value, name, low, high)
			}
		}
	}
	return one, long, nil
}

// identificationRange is bch-kernel's identification range on d
// (ratio.FlowTest.Range at IdentificationAlpha over the class of m, the
// model behind its estimate, whose interval is [low, high]) and the
// warning its row gets, in plain words, when the range is more than
// twice as wide as the interval or when no ratio of the class passes
// the test. On the 1-d linear-Gaussian system, where the log locates
// the ratio, the range is about 1.6 times the interval's width; on
// discounted Pendulum, where it does not (docs/methods.md), several
// times.
func identificationRange(name string, d *dataset.Dataset, gamma float64, m *ratio.KernelModel, low, high float64, seed uint64) (ratio.FlowRange, string, error) {
	r, err := ratio.FlowTest{Seed: seed}.Range(d, gamma, m, IdentificationAlpha)
	if err != nil {
		return r, "", err
	}
	switch {
	case r.Empty:
		return r, fmt.Sprintf("%s: no ratio of its class (non-negative weights on its bumps) passes the flow test on this log at %g: the class cannot hold the log's ratio, so its estimate and interval stand on no ratio the data accept; compare the importance-sampling and value rows", name, IdentificationAlpha), nil
	case r.High-r.Low > 2*(high-low):
		return r, fmt.Sprintf("%s: the log does not pin its ratio down: the ratios of its class that pass the flow test (at %g) give estimates from %.4g to %.4g, more than twice as wide as its interval [%.4g, %.4g]. The estimate rests on the learner's smoothing (its ridge) as much as on the data, and the interval does not count that; read the identification range as the honest spread, compare the importance-sampling and value rows, or log more episodes where the two policies differ",
			name, IdentificationAlpha, r.Low, r.High, low, high), nil
	}
	return r, "", nil
}

// Identification is what a log says about the ratio behind a bch-kernel
// row (Identify).
type Identification struct {
	// Range is the identification range (ratio.FlowTest.Range at
	// IdentificationAlpha over the class of the row's fitted model), nil
	// when no model was given or the range could not be formed.
	Range *ratio.FlowRange
	// Warnings say in plain words where the log cannot tell the row's
	// ratio from ratios that give other values.
	Warnings []string
}

// Identify runs the held-out tests of heldOutWarnings and, given the
// model m behind the row's estimate (nil: none), its identification
// range and the range's warning. A range that warns leaves out the
// warning of the ratio of 1: the constant is in the class, and the range
// already says the log does not pin the ratio down.
func Identify(name string, d *dataset.Dataset, gamma float64, m *ratio.KernelModel, low, high float64, learner ratio.Kernel, seed uint64) (Identification, error) {
	var id Identification
	one, long, err := heldOutWarnings(name, d, gamma, low, high, learner, seed)
	if err != nil {
		return id, err
	}
	if m != nil && m.Dim() == d.StateDim {
		if r, w, err := identificationRange(name, d, gamma, m, low, high, seed); err == nil {
			id.Range = &r
			if w != "" {
				one = w
			}
		}
	}
	for _, w := range []string{one, long} {
		if w != "" {
			id.Warnings = append(id.Warnings, w)
		}
	}
	return id, nil
}
