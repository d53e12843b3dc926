package env

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Discrete is a simulator with states 0..NumStates()-1 and actions
// 0..NumActions()-1. There is no termination: the paper's setting is the
// infinite-horizon one, and episodes are truncated by the caller.
type Discrete interface {
	NumStates() int
	NumActions() int
	// Reset draws a start state from the reset distribution d0.
	Reset(rng *rand.Rand) int
	// Step draws (s', r) after taking action a in state s.
	Step(rng *rand.Rand, s, a int) (next int, reward float64)
}

// Outcome is one entry of a transition table: taking an action leads to
// state Next with probability Prob and pays Reward.
type Outcome struct {
	Next   int
	Prob   float64
	Reward float64
}

// Tabular is a finite MDP that exposes its transition table.
type Tabular interface {
	NumStates() int
	NumActions() int
	// Initial returns the reset distribution d0 (length NumStates).
	Initial() []float64
	// Outcomes returns the outcomes of action a in state s; their
	// probabilities sum to 1. The slice must not be modified.
	Outcomes(s, a int) []Outcome
}

// ExpectedReward returns r(s, a) = sum over outcomes of Prob * Reward.
func ExpectedReward(m Tabular, s, a int) float64 {
	r := 0.0
	for _, o := range m.Outcomes(s, a) {
		r += o.Prob * o.Reward
	}
	return r
}

// Check verifies that a table is well formed: probabilities in [0, 1]
// summing to 1 within 1e-9, next states in range, finite rewards.
func Check(m Tabular) error {
	nS, nA := m.NumStates(), m.NumActions()
	if err := checkDist(m.Initial(), nS); err != nil {
		return fmt.Errorf("env: initial distribution: %w", err)
	}
	for s := 0; s < nS; s++ {
		for a := 0; a < nA; a++ {
			sum := 0.0
			for _, o := range m.Outcomes(s, a) {
				if o.Next < 0 || o.Next >= nS || o.Prob < 0 || o.Prob > 1 || math.IsNaN(o.Reward) || math.IsInf(o.Reward, 0) {
					return fmt.Errorf("env: state %d action %d: bad outcome %+v", s, a, o)
				}
				sum += o.Prob
			}
			if math.Abs(sum-1) > 1e-9 {
				return fmt.Errorf("env: state %d action %d: probabilities sum to %v", s, a, sum)
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

// Sampler simulates a Tabular environment by drawing from its table.
type Sampler struct {
	m       Tabular
	initCDF []float64
}

// NewSampler returns a Discrete simulator of m. It panics if m's table is
// malformed (a programmer's mistake in an environment, checked by Check).
func NewSampler(m Tabular) *Sampler {
	if err := Check(m); err != nil {
		panic(err)
	}
	return &Sampler{m: m, initCDF: cumulative(m.Initial())}
}

var _ Discrete = (*Sampler)(nil)

func (e *Sampler) NumStates() int  { return e.m.NumStates() }
func (e *Sampler) NumActions() int { return e.m.NumActions() }

// Reset draws s0 from the table's initial distribution.
func (e *Sampler) Reset(rng *rand.Rand) int { return search(e.initCDF, rng.Float64()) }

// Step draws one outcome of (s, a) by inverting its cumulative probabilities.
func (e *Sampler) Step(rng *rand.Rand, s, a int) (int, float64) {
	out := e.m.Outcomes(s, a)
	u := rng.Float64()
	acc := 0.0
	for i := range out {
		acc += out[i].Prob
		if u < acc {
			return out[i].Next, out[i].Reward
		}
	}
	// Rounding left u above the last partial sum: take the last outcome
	// with positive probability.
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Prob > 0 {
			return out[i].Next, out[i].Reward
		}
	}
	panic("env: no outcome with positive probability")
}

func cumulative(p []float64) []float64 {
	c := make([]float64, len(p))
	acc := 0.0
	for i, v := range p {
		acc += v
		c[i] = acc
	}
	return c
}

// search returns the first index i with u < cdf[i], skipping zero-mass
// entries; the last positive entry absorbs rounding.
func search(cdf []float64, u float64) int {
	lo, hi := 0, len(cdf)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if u < cdf[mid] {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	for lo > 0 && cdf[lo] == cdf[lo-1] {
		lo--
	}
	return lo
}
