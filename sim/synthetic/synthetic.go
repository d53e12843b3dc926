package synthetic

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The dimensions and horizon of SCOPE-RL's default synthetic environment
// (basicgym's BasicEnv and its registered "BasicEnv-discrete-v0").
const (
	StateDim   = 5  // state_dim
	NumActions = 10 // n_actions
	ActionDim  = 3  // action_dim: the length of an action's context vector
	Horizon    = 10 // step_per_episode
	Gamma      = 1  // SCOPE-RL's default discount
	Seed       = 12345
)

// Env is SCOPE-RL's synthetic environment with discrete actions. The
// state s is a unit vector of R^5; action a is shown to the system as its
// context vector c_a in R^3. With x = s/5 and u = c_a/3, a step pays
//
//	r(s, a) = theta_s . x + theta_a . u + x' M_r u
//
// and moves to s' = y/|y|, where
//
//	y = A x + B u + (C u) . x   (the last term a scalar added to every component).
//
// Both are deterministic (reward_std = obs_std = 0, the defaults); only
// the start, a uniform draw on the unit sphere, and the policy are random.
// The coefficients A (5x5), B (5x3), C (5x3), theta_s, theta_a, M_r (5x3)
// and the contexts c_a are standard normal draws, made as SCOPE-RL makes
// them from numpy's RandomState(seed).
type Env struct {
	context          [NumActions][ActionDim]float64
	a                [StateDim][StateDim]float64
	b, c             [StateDim][ActionDim]float64
	thetaS           [StateDim]float64
	thetaA           [ActionDim]float64
	mr               [StateDim][ActionDim]float64
	rewardA          [NumActions]float64           // theta_a . u_a
	rewardSA, stepCU [NumActions][StateDim]float64 // M_r u_a and B u_a
	stepScalar       [NumActions][StateDim]float64 // C u_a
}

// New returns the environment SCOPE-RL builds with random_state = seed
// (its registered environments use Seed): the state transition function,
// the reward function and the environment each draw from their own
// RandomState(seed), in the order of basicgym/envs/simulator/function.py
// and synthetic.py.
func New(seed uint32) *Env {
	e := &Env{}
	// StateTransitionFunction: state_coef (5x5), action_coef (5x3),
	// state_action_coef (5x3), row-major.
	g := newMT19937(seed).normals(StateDim*StateDim + 2*StateDim*ActionDim)
	for i := range StateDim {
		for j := range StateDim {
			e.a[i][j] = g[i*StateDim+j]
		}
	}
	g = g[StateDim*StateDim:]
	for i := range StateDim {
		for j := range ActionDim {
			e.b[i][j] = g[i*ActionDim+j]
			e.c[i][j] = g[StateDim*ActionDim+i*ActionDim+j]
		}
	}
	// RewardFunction: state_coef (5), action_coef (3), state_action_coef (5x3).
	g = newMT19937(seed).normals(StateDim + ActionDim + StateDim*ActionDim)
	copy(e.thetaS[:], g[:StateDim])
	copy(e.thetaA[:], g[StateDim:StateDim+ActionDim])
	g = g[StateDim+ActionDim:]
	for i := range StateDim {
		for j := range ActionDim {
			e.mr[i][j] = g[i*ActionDim+j]
		}
	}
	// BasicEnv: action_context (10x3).
	g = newMT19937(seed).normals(NumActions * ActionDim)
	for k := range NumActions {
		for j := range ActionDim {
			e.context[k][j] = g[k*ActionDim+j]
		}
	}
	// Per-action terms, computed once.
	for k := range NumActions {
		var u [ActionDim]float64
		for j := range ActionDim {
			u[j] = e.context[k][j] / ActionDim
		}
		for j := range ActionDim {
			e.rewardA[k] += e.thetaA[j] * u[j]
		}
		for i := range StateDim {
			for j := range ActionDim {
				e.rewardSA[k][i] += e.mr[i][j] * u[j]
				e.stepCU[k][i] += e.b[i][j] * u[j]
				e.stepScalar[k][i] += e.c[i][j] * u[j]
			}
		}
	}
	return e
}

// Context returns the context vector c_a of action a (a copy).
func (e *Env) Context(a int) []float64 {
	c := e.context[a]
	return c[:]
}

// Reset draws a start state uniformly on the unit sphere (a standard
// normal vector, normalised).
func (e *Env) Reset(rng *rand.Rand) []float64 {
	s := make([]float64, StateDim)
	for {
		norm := 0.0
		for i := range s {
			s[i] = rng.NormFloat64()
			norm += s[i] * s[i]
		}
		if norm > 0 {
			norm = math.Sqrt(norm)
			for i := range s {
				s[i] /= norm
			}
			return s
		}
	}
}

// Reward returns r(s, a), the reward of action a in state s.
func (e *Env) Reward(s []float64, a int) float64 {
	e.check(s, a)
	r := e.rewardA[a]
	for i := range StateDim {
		x := s[i] / StateDim
		r += x * (e.thetaS[i] + e.rewardSA[a][i])
	}
	return r
}

// Step returns the next state after action a in state s (newly allocated)
// and the reward r(s, a). It does not modify s.
func (e *Env) Step(s []float64, a int) ([]float64, float64) {
	r := e.Reward(s, a)
	var x [StateDim]float64
	scalar := 0.0
	for i := range StateDim {
		x[i] = s[i] / StateDim
		scalar += e.stepScalar[a][i] * x[i]
	}
	next := make([]float64, StateDim)
	norm := 0.0
	for i := range StateDim {
		y := e.stepCU[a][i] + scalar
		for j := range StateDim {
			y += e.a[i][j] * x[j]
		}
		next[i] = y
		norm += y * y
	}
	norm = math.Sqrt(norm)
	for i := range next {
		next[i] /= norm
	}
	return next, r
}

func (e *Env) check(s []float64, a int) {
	if len(s) != StateDim || a < 0 || a >= NumActions {
		panic(fmt.Sprintf("synthetic: state of length %d, action %d", len(s), a))
	}
}
