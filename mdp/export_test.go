package mdp

import "github.com/ihope-ope/ihope/policy"

// Chain exposes the policy's Markov chain to the external tests
// (taxi_test.go), which cannot be internal: sim/taxi imports mdp.
type Chain struct{ c *chain }

func NewChain(m Finite, pi policy.Discrete) Chain { return Chain{newChain(m, pi)} }

// Visitation solves for d_pi by dense LU (dense) or by iteration.
func (c Chain) Visitation(d0 []float64, gamma float64, dense bool) ([]float64, error) {
	return c.c.visitation(d0, gamma, dense)
}

// Residual is ||d - (1-gamma) d0 - gamma d P_pi||_1.
func (c Chain) Residual(d, d0 []float64, gamma float64) float64 { return c.c.residual(d, d0, gamma) }

// Reward is r_pi . d.
func (c Chain) Reward(d []float64) float64 { return c.c.reward(d) }

var L1Dist = l1dist
