package sim

import "math/rand/v2"

// Continuous is a simulator whose states, observations and actions are
// real vectors, such as Pendulum (sim/pendulum) or a linear-Gaussian
// system (sim/lineargauss). Like Discrete it is pure: the state is passed
// in and returned, never stored, so one value serves many concurrent
// rollouts, and there is no termination (episodes are truncated by the
// caller, as in the paper's infinite-horizon setting).
//
// The internal state may differ from what a policy sees: Pendulum keeps
// (theta, theta-dot) but shows (cos theta, sin theta, theta-dot), as
// Gymnasium does. Policies, logged datasets and density-ratio models work
// on observations; the state only travels between Reset, Step and Observe.
type Continuous interface {
	// StateDim is the length of the internal state vector.
	StateDim() int
	// ObsDim is the length of an observation vector.
	ObsDim() int
	// ActionDim is the length of an action vector.
	ActionDim() int
	// Reset draws a start state from the reset distribution d0.
	Reset(rng *rand.Rand) []float64
	// Step draws (s', r) after taking action a in state s. It must not
	// modify state or action and returns a newly allocated next state.
	// The reward is r(s, a), paid for the step from s.
	Step(rng *rand.Rand, state, action []float64) (next []float64, reward float64)
	// Observe returns the observation of a state, newly allocated.
	Observe(state []float64) []float64
}

// Bounded is implemented by Continuous environments whose actions live in
// a box [Low_i, High_i]; Step clips actions into it.
type Bounded interface {
	// ActionBounds returns the lower and upper bound of each action
	// component. The slices must not be modified.
	ActionBounds() (low, high []float64)
}
