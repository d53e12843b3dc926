package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

// IdentificationAlpha is the level of the held-out flow test behind
// IdentificationWarnings: an alternative ratio whose p-value exceeds it
// passes (the log cannot reject it).
const IdentificationAlpha = 0.05

// IdentificationWarnings says, for a density-ratio estimate on real
// states (bch-kernel's estimate, with its interval [low, high]), when the
// log cannot tell the ratio behind it from a ratio that gives another
// value. The episodes are split in halves; on the second half the
// held-out flow test (ratio.FlowTest, sign flips of whole episodes)
// tests two alternatives:
//
//   - w = 1, the behavior's own state distribution, whose estimate is the
//     behavior-weighted mean reward;
//   - at gamma < 1, the long-run (gamma = 1) ratio of learner fitted on
//     the first half: the average-reward ratio in place of the discounted
//     one.
//
// An alternative that passes (p > IdentificationAlpha) and whose estimate
// on the whole log lies outside the interval gets a warning in plain
// words: the kernel loss cannot locate the value between the two on this
// log. It needs at least 8 episodes; fewer give no warning.
func IdentificationWarnings(name string, d *dataset.Dataset, gamma, low, high float64, learner ratio.Kernel, seed uint64) ([]string, error) {
	n := d.NumEpisodes()
	if d.StateDim == 0 || n < 8 || math.IsNaN(low) || math.IsNaN(high) {
		return nil, nil
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
	var out []string
	one := func(obs [][]float64) ([]float64, error) {
		w := make([]float64, len(obs))
		for i := range w {
			w[i] = 1
		}
		return w, nil
	}
	res, err := test.Run(held, gamma, one)
	if err != nil {
		return nil, err
	}
	if res.P > IdentificationAlpha {
		w := make([]float64, d.NumSteps())
		for i := range w {
			w[i] = 1
		}
		if alt, err := ratioEstimate(d, gamma, w); err == nil && (alt.Value < low || alt.Value > high) {
			out = append(out, fmt.Sprintf(
				"%s: the data do not pin its ratio down: a ratio of 1 (the behavior's own state distribution) passes the flow test on held-out episodes (p = %.2g), yet gives %.4g, outside %s's interval [%.4g, %.4g]. The estimate rests on the learner's smoothing (its ridge and bumps) as much as on the data, and its interval does not count that; compare the importance-sampling rows, or log more episodes where the two policies differ",
				name, res.P, alt.Value, name, low, high))
		}
	}
	if gamma < 1 {
		m, err := learner.Fit(d.Subset(first), 1)
		if err != nil {
			return out, nil // no long-run ratio to test: nothing to say
		}
		km, ok := m.(*ratio.KernelModel)
		if !ok {
			return out, nil
		}
		long := func(obs [][]float64) ([]float64, error) {
			w := make([]float64, len(obs))
			for i, o := range obs {
				w[i] = km.Ratio(o)
			}
			return w, nil
		}
		res, err := test.Run(held, gamma, long)
		if err != nil {
			return out, nil
		}
		if res.P > IdentificationAlpha {
			w, err := m.StepRatios(d)
			if err != nil {
				return out, nil
			}
			if alt, err := ratioEstimate(d, gamma, w); err == nil && (alt.Value < low || alt.Value > high) {
				out = append(out, fmt.Sprintf(
					"%s: the data do not tell the discounted ratio from the long-run one: the average-reward (gamma = 1) ratio, fitted on half the episodes, passes the discounted flow test on the other half (p = %.2g), yet gives %.4g, outside %s's interval [%.4g, %.4g]. The kernel loss does not locate the discounted value on this log, and the interval does not count that; prefer estimators of the horizon value (--estimand horizon)",
					name, res.P, alt.Value, name, low, high))
			}
		}
	}
	return out, nil
}
