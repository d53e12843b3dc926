package rollout

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// Simulator is the target rolled out in a discrete world, the source of
// ope's on-policy oracle (it implements ope.Simulator: ope.Options.Sim,
// ope.OnPolicy.Sim). Package rollout does not import ope, whose tests
// sample their logs here.
type Simulator struct {
	Env    sim.Discrete
	Target policy.Discrete
}

// SimulatorContinuous is the target rolled out in a world of real states
// and actions; the policy acts on the world's observations, as when the
// data were logged.
type SimulatorContinuous struct {
	Env    sim.Continuous
	Target policy.Continuous
}

// Check says why the target cannot be rolled out in the world.
func (s Simulator) Check() error {
	if s.Env == nil || s.Target == nil {
		return fmt.Errorf("needs an environment and a target policy")
	}
	if s.Target.NumActions() != s.Env.NumActions() {
		return fmt.Errorf("target policy has %d actions, environment %d", s.Target.NumActions(), s.Env.NumActions())
	}
	return nil
}

// Return is Return(rng, s.Env, s.Target, T, g0, gamma).
func (s Simulator) Return(rng *rand.Rand, T int, g0, gamma float64) float64 {
	return Return(rng, s.Env, s.Target, T, g0, gamma)
}

// Check says why the target cannot be rolled out in the world.
func (s SimulatorContinuous) Check() error {
	if s.Env == nil || s.Target == nil {
		return fmt.Errorf("needs an environment and a target policy")
	}
	if s.Target.ActionDim() != s.Env.ActionDim() {
		return fmt.Errorf("target policy has %d action components, environment %d", s.Target.ActionDim(), s.Env.ActionDim())
	}
	return nil
}

// Return is ReturnContinuous(rng, s.Env, s.Target, T, g0, gamma).
func (s SimulatorContinuous) Return(rng *rand.Rand, T int, g0, gamma float64) float64 {
	return ReturnContinuous(rng, s.Env, s.Target, T, g0, gamma)
}
