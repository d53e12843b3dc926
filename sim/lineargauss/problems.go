package lineargauss

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Problem is a ready-made off-policy evaluation problem: a system, a
// target policy pi and a behavior policy pi0. The system's reset
// distribution is the behavior's stationary distribution d_pi0, so every
// state logged under the behavior, at every step, is distributed as d_pi0
// exactly, and the stationary ratio w = d_pi/d_pi0 (Ratio) is the exact
// weight of every logged state in the average-reward setting.
type Problem struct {
	System   *System
	Target   *Policy
	Behavior *Policy
}

// Ratio returns the exact stationary density ratio d_pi/d_pi0.
func (p *Problem) Ratio() (Ratio, error) { return p.System.StationaryRatio(p.Target, p.Behavior) }

// newProblem builds a Problem whose reset distribution is the behavior's
// stationary distribution.
func newProblem(a, b *mat.Dense, noise *mat.SymDense, r Reward, target, behavior *Policy) (*Problem, error) {
	// A first system with a placeholder reset gives the stationary law.
	d, _ := a.Dims()
	tmp, err := NewSystem(a, b, noise, make([]float64, d), noise, r)
	if err != nil {
		return nil, err
	}
	st, err := tmp.Stationary(behavior)
	if err != nil {
		return nil, err
	}
	sys, err := NewSystem(a, b, noise, st.mean, st.cov, r)
	if err != nil {
		return nil, err
	}
	return &Problem{System: sys, Target: target, Behavior: behavior}, nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("lineargauss: built-in problem: %v", err))
	}
	return v
}

// Problem1D returns a scalar problem:
//
//	s' = 0.9 s + 0.5 u + w,  w ~ N(0, 0.3^2),
//	r(s, u) = -(s - 0.5)^2 - 0.1 u^2 = -s^2 + s - 0.25 - 0.1 u^2,
//	target    pi:  u = -0.8 s + 0.3 + N(0, 0.4^2),
//	behavior  pi0: u = -0.4 s       + N(0, 0.6^2).
//
// Closed loops: s' = 0.5 s + 0.15 + N(0, 0.13) under pi and
// s' = 0.7 s + N(0, 0.18) under pi0, so
//
//	d_pi  = N(0.3, 0.13/0.75)  = N(0.3, 0.17333...),
//	d_pi0 = N(0,   0.18/0.51)  = N(0,   0.35294...),
//	w(s)  = N(s; 0.3, 0.17333...) / N(s; 0, 0.35294...),
//	E_{d_pi0}[w^2] = 1.3756... (effective sample size 73%),
//	average reward of pi  = -0.24079...,
//	average reward of pi0 = -0.64459...
//
// (tests assert every number above).
func Problem1D() *Problem {
	one := func(v float64) *mat.Dense { return mat.NewDense(1, 1, []float64{v}) }
	var1 := func(v float64) *mat.SymDense { return mat.NewSymDense(1, []float64{v}) }
	target := must(NewPolicy(one(-0.8), []float64{0.3}, var1(0.16)))
	behavior := must(NewPolicy(one(-0.4), []float64{0}, var1(0.36)))
	r := Reward{SS: var1(-1), S: []float64{1}, UU: var1(-0.1), Const: -0.25}
	return must(newProblem(one(0.9), one(0.5), var1(0.09), r, target, behavior))
}

// Problem2D returns a two-dimensional problem, a lightly damped oscillator
// pushed by a scalar force:
//
//	s' = [[1, 0.1], [-0.1, 0.9]] s + [0, 0.5]' u + w,  w ~ N(0, diag(0.02, 0.05)),
//	r(s, u) = -(s_1 - 0.3)^2 - 0.5 s_2^2 - 0.1 u^2,
//	target    pi:  u = -0.6 s_1 - 0.4 s_2 + 0.2 + N(0, 0.3^2),
//	behavior  pi0: u = -0.2 s_1 - 0.2 s_2       + N(0, 0.5^2).
//
// The exact stationary laws, ratio moments and average rewards are given
// by System.Stationary, Ratio.SecondMoment and System.AverageReward; the
// tests pin their values.
func Problem2D() *Problem {
	a := mat.NewDense(2, 2, []float64{1, 0.1, -0.1, 0.9})
	b := mat.NewDense(2, 1, []float64{0, 0.5})
	noise := mat.NewSymDense(2, []float64{0.02, 0, 0, 0.05})
	target := must(NewPolicy(mat.NewDense(1, 2, []float64{-0.6, -0.4}), []float64{0.2}, mat.NewSymDense(1, []float64{0.09})))
	behavior := must(NewPolicy(mat.NewDense(1, 2, []float64{-0.2, -0.2}), []float64{0}, mat.NewSymDense(1, []float64{0.25})))
	r := Reward{
		SS:    mat.NewSymDense(2, []float64{-1, 0, 0, -0.5}),
		S:     []float64{0.6, 0},
		UU:    mat.NewSymDense(1, []float64{-0.1}),
		Const: -0.09,
	}
	return must(newProblem(a, b, noise, r, target, behavior))
}
