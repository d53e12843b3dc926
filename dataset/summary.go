package dataset

import "math"

// Summary describes a log: its size and shape, what it covers, and the
// numbers behind the support diagnostics.
type Summary struct {
	Episodes, Steps      int
	MinLength, MaxLength int
	// StatesSeen is the number of distinct discrete states (0 for real
	// states), ActionsSeen of distinct discrete actions.
	StatesSeen, ActionsSeen int
	// MeanReward is the mean logged reward (NaN for no steps or an
	// infinite mean).
	MeanReward float64
	// ZeroTarget counts the steps whose action the target never takes.
	ZeroTarget int
	// LargeRatio counts the steps with pi/pi0 > LargeRatioLimit, and
	// FirstLarge locates the first of them (0 for a log without behavior
	// probabilities).
	LargeRatio int
	FirstLarge struct {
		Episode string
		T       int
		Ratio   float64
	}
	// MaxLogRatio is the largest log pi/pi0 over the steps the target
	// may take (NaN if there are none, or no behavior probabilities).
	MaxLogRatio float64
	// OpenEndings counts the episodes whose last step has no next state
	// and is not terminal (a terminal step's next state is the absorbing
	// state).
	OpenEndings int
	// Terminal counts the episodes that ended in a terminal state.
	Terminal int
}

// LargeRatioLimit is the policy ratio pi/pi0 above which Summarize counts
// a step as poorly supported.
const LargeRatioLimit = 1e6

// Summarize describes d.
func Summarize(d *Dataset) Summary {
	s := Summary{Episodes: d.NumEpisodes(), Steps: d.NumSteps(), MinLength: math.MaxInt,
		MeanReward: math.NaN(), MaxLogRatio: math.NaN()}
	if s.Episodes == 0 {
		s.MinLength = 0
	}
	var states, actions []bool
	if d.Discrete() {
		states = make([]bool, d.NumStates)
	}
	if d.ActionDim == 0 {
		actions = make([]bool, d.NumActions)
	}
	var meanR float64 // running mean: no overflow for huge rewards
	maxLR := math.Inf(-1)
	limit := math.Log(LargeRatioLimit)
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		s.MinLength = min(s.MinLength, hi-lo)
		s.MaxLength = max(s.MaxLength, hi-lo)
		if d.IsTerminal(e) {
			s.Terminal++
		} else if hi > lo && !d.HasFinal[e] {
			s.OpenEndings++
		}
		for j := lo; j < hi; j++ {
			meanR += (d.Reward[j] - meanR) / float64(j+1)
			if states != nil {
				states[d.State[j]] = true
			}
			if actions != nil {
				actions[d.Action[j]] = true
			}
			if math.IsInf(d.LogTarget[j], -1) {
				s.ZeroTarget++
				continue
			}
			if !d.HasBehavior() {
				continue
			}
			lr := d.LogRatio(j)
			maxLR = math.Max(maxLR, lr)
			if lr > limit {
				if s.LargeRatio == 0 {
					s.FirstLarge.Episode, s.FirstLarge.T, s.FirstLarge.Ratio = d.IDs[e], j-lo, math.Exp(lr)
				}
				s.LargeRatio++
			}
		}
	}
	if s.Steps > 0 && !math.IsInf(meanR, 0) {
		s.MeanReward = meanR
	}
	if !math.IsInf(maxLR, 0) {
		s.MaxLogRatio = maxLR
	}
	s.StatesSeen, s.ActionsSeen = count(states), count(actions)
	return s
}

func count(seen []bool) int {
	n := 0
	for _, b := range seen {
		if b {
			n++
		}
	}
	return n
}
