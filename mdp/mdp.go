package mdp

import (
	"fmt"
	"math"
)

// Outcome is one entry of a transition table: taking an action leads to
// state Next with probability Prob and pays Reward.
type Outcome struct {
	Next   int
	Prob   float64
	Reward float64
}

// Finite is a finite MDP that exposes its transition table.
type Finite interface {
	NumStates() int
	NumActions() int
	// Initial returns the reset distribution d0 (length NumStates).
	Initial() []float64
	// Outcomes returns the outcomes of action a in state s; their
	// probabilities sum to 1. The slice must not be modified.
	Outcomes(s, a int) []Outcome
}

// ExpectedReward returns r(s, a) = sum over outcomes of Prob * Reward.
func ExpectedReward(m Finite, s, a int) float64 {
	r := 0.0
	for _, o := range m.Outcomes(s, a) {
		r += o.Prob * o.Reward
	}
	return r
}

// Check verifies that a table is well formed: probabilities in [0, 1]
// summing to 1 within 1e-9, next states in range, finite rewards.
func Check(m Finite) error {
	nS, nA := m.NumStates(), m.NumActions()
	if err := checkDist(m.Initial(), nS); err != nil {
		return fmt.Errorf("mdp: initial distribution: %w", err)
	}
	for s := 0; s < nS; s++ {
		for a := 0; a < nA; a++ {
			sum := 0.0
			for _, o := range m.Outcomes(s, a) {
				if o.Next < 0 || o.Next >= nS || o.Prob < 0 || o.Prob > 1 || math.IsNaN(o.Reward) || math.IsInf(o.Reward, 0) {
					return fmt.Errorf("mdp: state %d action %d: bad outcome %+v", s, a, o)
				}
				sum += o.Prob
			}
			if math.Abs(sum-1) > 1e-9 {
				return fmt.Errorf("mdp: state %d action %d: probabilities sum to %v", s, a, sum)
			}
		}
	}
	return nil
}

func checkDist(p []float64, n int) error {
	if len(p) != n {
		return fmt.Errorf("length %d, want %d", len(p), n)
	}
	sum := 0.0
	for _, v := range p {
		if v < 0 || math.IsNaN(v) {
			return fmt.Errorf("negative or NaN probability %v", v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("probabilities sum to %v", sum)
	}
	return nil
}
