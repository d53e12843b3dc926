package sumo

import (
	"context"
	"fmt"

	"github.com/ihope-ope/ihope/sim/traci"
)

// Sim is one SUMO run of a Network under the agent's control: the
// reinforcement-learning formulation of Appendix D.
//
//   - State: for every light, the vehicle counts of its lane-area
//     detectors, summed per approach into straight and left-turn lanes
//     (8 numbers per light, see ObsPerLight), read at the end of a step.
//   - Action: one of the 4 green phases per light; with several lights
//     the joint action is sum_l a_l 4^l (light 0 is the least
//     significant digit).
//   - Step: 6 simulated seconds. When a light changes phase, the first 3
//     are its yellow transition and the last 3 the new green; otherwise
//     all 6 are green.
//   - Reward: minus the number of vehicles on all detectors at the end of
//     the step. The paper approximates the total travel time during the
//     step by 6 times this count; the constant factor is dropped here, so
//     the average reward reads as the mean number of queued vehicles.
//
// Start runs the warm-up before returning, so the first state is the one
// after Config.Warmup seconds of a fixed-time plan, whatever the policy.
// A Sim is not safe for concurrent use; Close it to end SUMO.
type Sim struct {
	net    *Network
	proc   *traci.Process
	batch  *traci.Batch
	counts []int // per detector, light-major, refreshed by subscriptions
	phases []int // per light, refreshed by subscriptions
	green  []int // the green phase each light is in or heading to
	obs    []float64
	time   float64
	steps  int
}

// Start launches SUMO on the network with the given random seed (SUMO's
// --seed: vehicle insertion and driver imperfection) and runs the
// warm-up. Cancelling ctx kills SUMO.
func (n *Network) Start(ctx context.Context, seed int) (*Sim, error) {
	p, err := traci.Start(ctx, traci.Options{Binary: n.Config.Sumo, Args: n.sumoArgs(seed)})
	if err != nil {
		return nil, err
	}
	s := &Sim{
		net: n, proc: p, batch: p.NewBatch(),
		counts: make([]int, 12*len(n.Lights)),
		phases: make([]int, len(n.Lights)),
		green:  make([]int, len(n.Lights)),
		obs:    make([]float64, n.ObsDim()),
	}
	for l, light := range n.Lights {
		for d := range 4 {
			for k, det := range light.Detectors[d] {
				s.batch.SubscribeLaneAreaVehicleNumber(det, &s.counts[12*l+3*d+k])
			}
		}
		s.batch.SubscribePhase(light.ID, &s.phases[l])
	}
	if err := s.batch.Do(); err != nil {
		p.Close()
		return nil, fmt.Errorf("sumo: subscribe: %w", err)
	}
	for l := range s.phases {
		if s.phases[l] != 0 {
			p.Close()
			return nil, fmt.Errorf("sumo: light %s starts in phase %d, want 0", n.Lights[l].ID, s.phases[l])
		}
	}
	// Warm-up: a fixed-time plan, each green held 5 steps (30 s).
	for k := 0; k < n.Config.Warmup/StepSeconds; k++ {
		g := (k / 5) % NumPhases
		a := 0
		for l := len(n.Lights) - 1; l >= 0; l-- {
			a = a*NumPhases + g
		}
		if _, err := s.Step(a); err != nil {
			s.Close()
			return nil, fmt.Errorf("sumo: warm-up: %w", err)
		}
	}
	s.steps = 0
	return s, nil
}

// Obs returns the current state (newly allocated): the detector counts
// described at Sim.
func (s *Sim) Obs() []float64 { return append([]float64(nil), s.obs...) }

// Time returns the simulation time in seconds.
func (s *Sim) Time() float64 { return s.time }

// Steps returns the number of steps taken since the warm-up.
func (s *Sim) Steps() int { return s.steps }

// Green returns the green phase light l shows (or changes to during the
// current step).
func (s *Sim) Green(l int) int { return s.green[l] }

// Step applies the joint action for 6 simulated seconds and returns the
// reward; the new state is then Obs. An error (SUMO died, refused a
// command, or a light is not in the phase the action asked for) leaves
// the Sim unusable; Close it.
func (s *Sim) Step(action int) (float64, error) {
	if action < 0 || action >= s.net.NumActions() {
		return 0, fmt.Errorf("sumo: action %d outside [0, %d)", action, s.net.NumActions())
	}
	want := action
	for l, light := range s.net.Lights {
		a := want % NumPhases
		want /= NumPhases
		if a != s.green[l] {
			s.batch.SetPhase(light.ID, YellowPhase(s.green[l], a))
			s.green[l] = a
		}
	}
	s.batch.Step(s.time + StepSeconds)
	if err := s.batch.Do(); err != nil {
		return 0, fmt.Errorf("sumo: step at %v s: %w", s.time, err)
	}
	s.time += StepSeconds
	s.steps++
	for l, light := range s.net.Lights {
		if s.phases[l] != s.green[l] {
			return 0, fmt.Errorf("sumo: light %s in phase %d at %v s, want green %d", light.ID, s.phases[l], s.time, s.green[l])
		}
	}
	total := 0
	for l := range s.net.Lights {
		for d := range 4 {
			c := s.counts[12*l+3*d:]
			s.obs[ObsPerLight*l+2*d] = float64(c[0] + c[1])
			s.obs[ObsPerLight*l+2*d+1] = float64(c[2])
			total += c[0] + c[1] + c[2]
		}
	}
	return -float64(total), nil
}

// Pid returns SUMO's process id.
func (s *Sim) Pid() int { return s.proc.Pid() }

// Close ends the simulation and reaps SUMO.
func (s *Sim) Close() error { return s.proc.Close() }

// Kill kills SUMO at once and reaps it.
func (s *Sim) Kill() { s.proc.Kill() }
