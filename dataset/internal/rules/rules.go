// Package rules holds the value rules of the log contract that the
// readers (package logio) and Dataset.Validate share, so that a value a
// reader refuses is refused with the same words everywhere. Each check
// returns "" for a good value or a message for a FormatError.
package rules

import (
	"math"
	"strconv"
)

// Real checks a reward or a state or action vector component.
func Real(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN is not allowed"
	case math.IsInf(v, 1):
		return "+Inf is not allowed"
	case math.IsInf(v, -1):
		return "-Inf is not allowed"
	}
	return ""
}

// Prob checks one value of a target_prob_k or next_target_prob_k
// column: a probability in [0, 1].
func Prob(v float64) string {
	if msg := Real(v); msg != "" {
		return msg
	}
	if !(v >= 0 && v <= 1) {
		return Num(v) + " is outside [0, 1]"
	}
	return ""
}

// ProbTol is the tolerance of the rules on a target's action distribution:
// its sum is 1, and it Agrees with the logged action's target probability,
// both within ProbTol (absolute, on probabilities).
const ProbTol = 1e-6

// Distribution checks that the values of a distribution over the
// actions (each already in [0, 1]) sum to 1 within ProbTol, the one sum
// the readers, Validate and SetTargetPolicy all compute.
func Distribution(p []float64) (sum float64, ok bool) {
	for _, v := range p {
		sum += v
	}
	return sum, math.Abs(sum-1) <= ProbTol
}

// SumText formats a sum of probabilities for a message: 12 significant
// digits, enough to show a miss of 1e-6 and few enough to hide rounding
// (0.2 + 0.7 shows as 0.9).
func SumText(v float64) string { return strconv.FormatFloat(v, 'g', 12, 64) }

// Agrees reports whether a logged log-probability of the logged action,
// lt, Agrees with p, the action's entry in the target's distribution.
func Agrees(lt, p float64) bool { return math.Abs(math.Exp(lt)-p) <= ProbTol }

// Num formats a float for an error message (shortest exact form).
func Num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
