package nn

import "math"

// Adam is the Adam optimiser (Kingma and Ba, 2015) for a parameter vector:
//
//	m = b1 m + (1-b1) g,   v = b2 v + (1-b2) g^2
//	theta -= LR * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + Eps)
//
// Zero fields take the defaults LR = 1e-3, Beta1 = 0.9, Beta2 = 0.999,
// Eps = 1e-8.
type Adam struct {
	LR, Beta1, Beta2, Eps float64

	m, v   []float64
	b1t    float64 // Beta1^t
	b2t    float64 // Beta2^t
	nsteps int
}

// Step applies one update to params given the gradient grad. The moment
// estimates are created on the first call, sized to params; later calls
// must pass slices of the same length. It allocates nothing after the
// first call.
func (o *Adam) Step(params, grad []float64) {
	if len(params) != len(grad) {
		panic("nn: Adam.Step length mismatch")
	}
	if o.m == nil {
		o.m = make([]float64, len(params))
		o.v = make([]float64, len(params))
		o.b1t, o.b2t = 1, 1
	}
	if len(o.m) != len(params) {
		panic("nn: Adam.Step with a different parameter count")
	}
	lr, b1, b2, eps := o.LR, o.Beta1, o.Beta2, o.Eps
	if lr == 0 {
		lr = 1e-3
	}
	if b1 == 0 {
		b1 = 0.9
	}
	if b2 == 0 {
		b2 = 0.999
	}
	if eps == 0 {
		eps = 1e-8
	}
	o.nsteps++
	o.b1t *= b1
	o.b2t *= b2
	c1, c2 := 1/(1-o.b1t), 1/(1-o.b2t)
	for i, g := range grad {
		mi := b1*o.m[i] + (1-b1)*g
		vi := b2*o.v[i] + (1-b2)*g*g
		o.m[i], o.v[i] = mi, vi
		params[i] -= lr * (mi * c1) / (math.Sqrt(vi*c2) + eps)
	}
}

// Steps returns the number of updates applied so far.
func (o *Adam) Steps() int { return o.nsteps }

// Reset forgets the moment estimates and the step count.
func (o *Adam) Reset() { o.m, o.v, o.nsteps = nil, nil, 0 }
