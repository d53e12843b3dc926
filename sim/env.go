package sim

import (
	"math/rand/v2"

	"github.com/ihope-ope/ihope/mdp"
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

// Sampler simulates an environment given by its table (mdp.Finite) by drawing from its table.
type Sampler struct {
	m       mdp.Finite
	initCDF []float64
}

// NewSampler returns a Discrete simulator of m. It panics if m's table is
// malformed (a programmer's mistake in an environment, checked by Check).
func NewSampler(m mdp.Finite) *Sampler {
	if err := mdp.Check(m); err != nil {
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
