// Package pendulum is Gymnasium's Pendulum-v1, the continuous-state world of
// the paper's Section 5 ("Pendulum"), with the policies its experiments
// evaluate.
//
// The state is (theta, theta-dot) with theta = 0 upright; the observation
// is (cos theta, sin theta, theta-dot); the action is a torque clipped to
// [-2, 2]. Each step pays
//
//	r = -(angle_normalize(theta)^2 + 0.1 theta-dot^2 + 0.001 u^2),
//
// computed on the state before the step, so rewards lie in
// [-16.2736044, 0]. There is no termination; Gymnasium's 200-step time
// limit is left to the caller. Gymnasium hands out float32 observations;
// here every number is a float64.
//
// DefaultTarget and DefaultPlus are the paper's pi_* and pi_+: truncated
// Gaussian policies whose mean is a 3-32-1 tanh network, trained by
// REINFORCE (package train) and shipped as JSON. Behavior(alpha) builds the
// behavior policy (1-alpha) pi_* + alpha pi_+. To regenerate the JSON
// files, run
//
//	go generate ./env/pendulum
//
// (about a minute on two cores; see internal/pendulumgen).
package pendulum
