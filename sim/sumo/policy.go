package sumo

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Policy is a stochastic policy over the joint actions of a network's
// lights, given the state vector (the detector counts).
type Policy interface {
	// NumActions is the number of joint actions, 4^lights.
	NumActions() int
	// Probs writes pi(a|obs) for every action a into p (length
	// NumActions).
	Probs(obs, p []float64)
}

// NumFeatures is the length of one row of LinearSoftmax.Weights: the 8
// counts of a light and a constant.
const NumFeatures = ObsPerLight + 1

// LinearSoftmax is the paper's traffic policy (Appendix D: "a linear
// policy with the final softmax layer"), mixed with a little of the
// uniform policy so that every action has a positive probability. Each
// light acts independently on its own 8 counts with the same weights:
//
//	z_a  = sum_k W[a][k] obs_l[k] / Scale + W[a][8]      (a = 0..3)
//	q(a) = (1 - Epsilon) exp(z_a) / sum_b exp(z_b) + Epsilon / 4
//	pi(a_0, ..., a_{L-1} | obs) = prod_l q_l(a_l)
//
// where obs_l is light l's part of the state. The softmax subtracts the
// largest logit, so no weight overflows it.
type LinearSoftmax struct {
	// Lights is the number of lights the policy controls.
	Lights int `json:"lights"`
	// Weights is the 4 x 9 matrix W, row-major: one row per phase, the
	// 8 count weights and the constant.
	Weights []float64 `json:"weights"`
	// Scale divides the counts before the weights apply.
	Scale float64 `json:"scale"`
	// Epsilon is the weight of the uniform policy in the mixture, in
	// (0, 1].
	Epsilon float64 `json:"epsilon"`
}

// Default policy settings of the shipped policies.
const (
	DefaultScale   = 10
	DefaultEpsilon = 0.05
)

// NewLinearSoftmax returns the policy with the given weights (4 x 9,
// row-major; copied) for lights lights, or an error if the settings are
// invalid.
func NewLinearSoftmax(lights int, weights []float64, scale, epsilon float64) (*LinearSoftmax, error) {
	p := &LinearSoftmax{Lights: lights, Weights: append([]float64(nil), weights...), Scale: scale, Epsilon: epsilon}
	return p, p.Validate()
}

// Uniform returns the policy that picks every joint action of lights
// lights with the same probability (zero weights).
func Uniform(lights int) *LinearSoftmax {
	return &LinearSoftmax{Lights: lights, Weights: make([]float64, NumPhases*NumFeatures), Scale: 1, Epsilon: 1}
}

// Validate checks the settings: 1 to 4 lights, 36 finite weights, a
// positive scale and epsilon in (0, 1].
func (p *LinearSoftmax) Validate() error {
	switch {
	case p.Lights < 1 || p.Lights > 4:
		return fmt.Errorf("sumo: policy for %d lights, want 1 to 4", p.Lights)
	case len(p.Weights) != NumPhases*NumFeatures:
		return fmt.Errorf("sumo: policy has %d weights, want %d", len(p.Weights), NumPhases*NumFeatures)
	case !(p.Scale > 0) || math.IsInf(p.Scale, 0):
		return fmt.Errorf("sumo: policy scale %v, want > 0", p.Scale)
	case !(p.Epsilon > 0 && p.Epsilon <= 1):
		return fmt.Errorf("sumo: policy epsilon %v, want (0, 1]", p.Epsilon)
	}
	for i, w := range p.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("sumo: policy weight %d is %v", i, w)
		}
	}
	return nil
}

// WithLights returns a copy of the policy for another number of lights
// (the weights are shared by all lights, so a policy trained on one
// intersection drives every light of a grid).
func (p *LinearSoftmax) WithLights(lights int) *LinearSoftmax {
	q := *p
	q.Lights = lights
	q.Weights = append([]float64(nil), p.Weights...)
	return &q
}

// NumActions returns 4^Lights.
func (p *LinearSoftmax) NumActions() int { return pow4(p.Lights) }

// LightProbs writes q_l, the action probabilities of light l, into q.
func (p *LinearSoftmax) LightProbs(obs []float64, l int, q *[NumPhases]float64) {
	x := obs[ObsPerLight*l : ObsPerLight*(l+1)]
	var z [NumPhases]float64
	zmax := math.Inf(-1)
	for a := range NumPhases {
		w := p.Weights[a*NumFeatures : (a+1)*NumFeatures]
		s := w[ObsPerLight]
		for k, v := range x {
			s += w[k] * v / p.Scale
		}
		z[a] = s
		zmax = max(zmax, s)
	}
	sum := 0.0
	for a := range z {
		z[a] = math.Exp(z[a] - zmax)
		sum += z[a]
	}
	for a := range z {
		q[a] = (1-p.Epsilon)*z[a]/sum + p.Epsilon/NumPhases
	}
}

// Probs writes the joint action probabilities into out.
func (p *LinearSoftmax) Probs(obs, out []float64) {
	p.check(obs)
	out[0] = 1
	n := 1
	var q [NumPhases]float64
	for l := range p.Lights {
		p.LightProbs(obs, l, &q)
		// Digit l of the action varies slowest among the first
		// 4^(l+1) entries: out[a + n*b] = out[a] * q[b].
		for b := NumPhases - 1; b >= 0; b-- {
			for a := 0; a < n; a++ {
				out[a+n*b] = out[a] * q[b]
			}
		}
		n *= NumPhases
	}
}

// LogProb returns log pi(action|obs).
func (p *LinearSoftmax) LogProb(obs []float64, action int) float64 {
	p.check(obs)
	var q [NumPhases]float64
	lp := 0.0
	for l := range p.Lights {
		p.LightProbs(obs, l, &q)
		lp += math.Log(q[action%NumPhases])
		action /= NumPhases
	}
	return lp
}

// Sample draws a joint action, light by light.
func (p *LinearSoftmax) Sample(rng *rand.Rand, obs []float64) int {
	p.check(obs)
	var q [NumPhases]float64
	action, mul := 0, 1
	for l := range p.Lights {
		p.LightProbs(obs, l, &q)
		u := rng.Float64()
		a := NumPhases - 1
		acc := 0.0
		for b, v := range q {
			acc += v
			if u < acc {
				a = b
				break
			}
		}
		action += a * mul
		mul *= NumPhases
	}
	return action
}

func (p *LinearSoftmax) check(obs []float64) {
	if len(obs) != ObsPerLight*p.Lights {
		panic(fmt.Sprintf("sumo: state of length %d for a policy of %d lights", len(obs), p.Lights))
	}
}

// WriteJSON writes the policy as JSON.
func (p *LinearSoftmax) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadLinearSoftmax reads a policy written by WriteJSON and validates it.
func ReadLinearSoftmax(r io.Reader) (*LinearSoftmax, error) {
	var p LinearSoftmax
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("sumo: read policy: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}
