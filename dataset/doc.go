// Package dataset holds logged trajectories: episodes of steps, each step
// carrying the state, the action, the reward, the next state and the
// log-probability (or log-density) of the logged action under the behavior
// policy pi0 and the target policy pi.
//
// Every estimator in ihope consumes a *Dataset, whether it was sampled from
// a built-in environment (Sample) or loaded from a user's logs. Probabilities
// are stored as logarithms so that products over long horizons stay finite
// (see ../shared/DESIGN.md, "Conventions").
package dataset
