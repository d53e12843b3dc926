package pendulum

import (
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/sim"
)

// Constants of Gymnasium's Pendulum-v1 (gymnasium/envs/classic_control/
// pendulum.py).
const (
	DefaultG  = 10.0 // gravity, m s^-2
	Mass      = 1.0  // m
	Length    = 1.0  // l
	DT        = 0.05 // seconds per step
	MaxSpeed  = 8.0  // |theta-dot| is clipped to this after each step
	MaxTorque = 2.0  // |u| is clipped to this before each step
	// MinReward is the lowest reward, -(pi^2 + 0.1 8^2 + 0.001 2^2).
	MinReward = -(math.Pi*math.Pi + 0.1*MaxSpeed*MaxSpeed + 0.001*MaxTorque*MaxTorque)
)

// Pendulum is the inverted-pendulum swing-up task. The zero value is
// Gymnasium's default (g = 10).
type Pendulum struct {
	// G is the gravity; if it is 0, DefaultG (10) is used.
	G float64
}

var (
	_ sim.Continuous = Pendulum{}
	_ sim.Bounded    = Pendulum{}
)

func (p Pendulum) g() float64 {
	if p.G == 0 {
		return DefaultG
	}
	return p.G
}

// StateDim returns 2: (theta, theta-dot).
func (Pendulum) StateDim() int { return 2 }

// ObsDim returns 3: (cos theta, sin theta, theta-dot).
func (Pendulum) ObsDim() int { return 3 }

// ActionDim returns 1: the torque.
func (Pendulum) ActionDim() int { return 1 }

var (
	low  = []float64{-MaxTorque}
	high = []float64{MaxTorque}
)

// ActionBounds returns [-2, 2].
func (Pendulum) ActionBounds() (lo, hi []float64) { return low, high }

// Reset draws theta ~ U[-pi, pi] and theta-dot ~ U[-1, 1], as Gymnasium
// does, in that order.
func (Pendulum) Reset(rng *rand.Rand) []float64 {
	th := math.Pi * (2*rng.Float64() - 1)
	thdot := 2*rng.Float64() - 1
	return []float64{th, thdot}
}

// Step applies the torque u = clip(action[0], -2, 2) for DT seconds:
//
//	r      = -(angle_normalize(theta)^2 + 0.1 theta-dot^2 + 0.001 u^2)
//	theta-dot' = clip(theta-dot + (3g/(2l) sin theta + 3/(m l^2) u) dt, -8, 8)
//	theta'     = theta + theta-dot' dt
//
// exactly as Gymnasium's PendulumEnv.step (semi-implicit Euler: the new
// velocity moves the angle; the reward is that of the state before the
// step). Like Gymnasium, theta is not wrapped; only the reward and the
// observation see it modulo 2 pi. The dynamics are deterministic; rng is
// unused.
func (p Pendulum) Step(_ *rand.Rand, state, action []float64) ([]float64, float64) {
	th, thdot := state[0], state[1]
	u := math.Min(math.Max(action[0], -MaxTorque), MaxTorque)
	an := AngleNormalize(th)
	cost := an*an + 0.1*thdot*thdot + 0.001*u*u
	g := p.g()
	newThdot := thdot + (3*g/(2*Length)*math.Sin(th)+3.0/(Mass*Length*Length)*u)*DT
	newThdot = math.Min(math.Max(newThdot, -MaxSpeed), MaxSpeed)
	newTh := th + newThdot*DT
	return []float64{newTh, newThdot}, -cost
}

// Observe returns (cos theta, sin theta, theta-dot).
func (Pendulum) Observe(state []float64) []float64 {
	s, c := math.Sincos(state[0])
	return []float64{c, s, state[1]}
}

// AngleNormalize maps x to [-pi, pi) as Gymnasium's angle_normalize,
// ((x + pi) mod 2 pi) - pi with a non-negative remainder.
func AngleNormalize(x float64) float64 {
	m := math.Mod(x+math.Pi, 2*math.Pi)
	if m < 0 {
		m += 2 * math.Pi
	}
	return m - math.Pi
}
