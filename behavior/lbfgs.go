package behavior

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// lbfgs minimises a smooth convex function from x (in place) by limited-
// memory BFGS (Nocedal and Wright, Numerical Optimization, 2nd ed.,
// Algorithm 7.4, with the scaling H0 = s.y / y.y of Eq. 7.20) and a
// backtracking line search on the Armijo condition (Eq. 3.4, c1 = 1e-4).
// fg returns f(x) and writes its gradient into g. It stops when the
// largest gradient component falls below gtol, or when a step no longer
// lowers f; it returns an error if that leaves the gradient above
// 1000 gtol or after maxIter iterations.
//
// (gonum's optimize.LBFGS would pull golang.org/x/tools into the module
// through its CMA-ES's import of stat/distmv.)
func lbfgs(fg func(x, g []float64) float64, x []float64, gtol float64, maxIter int) error {
	const memory, c1 = 10, 1e-4
	n := len(x)
	g := make([]float64, n)
	f := fg(x, g)
	var s, y [][]float64
	var rho []float64
	dir, xNew, gNew := make([]float64, n), make([]float64, n), make([]float64, n)
	alpha := make([]float64, memory)
	for it := 0; ; it++ {
		gmax := floats.Norm(g, math.Inf(1))
		if gmax < gtol {
			return nil
		}
		if it == maxIter {
			return fmt.Errorf("no convergence after %d iterations (gradient %.3g)", maxIter, gmax)
		}
		// Two-loop recursion: dir = -H g.
		copy(dir, g)
		for i := len(s) - 1; i >= 0; i-- {
			alpha[i] = rho[i] * floats.Dot(s[i], dir)
			floats.AddScaled(dir, -alpha[i], y[i])
		}
		if k := len(s) - 1; k >= 0 {
			floats.Scale(floats.Dot(s[k], y[k])/floats.Dot(y[k], y[k]), dir)
		} else {
			floats.Scale(1/math.Max(1, gmax), dir) // a first step of length at most 1
		}
		for i := range s {
			b := rho[i] * floats.Dot(y[i], dir)
			floats.AddScaled(dir, alpha[i]-b, s[i])
		}
		floats.Scale(-1, dir)
		slope := floats.Dot(g, dir)
		if !(slope < 0) { // not a descent direction: restart from the gradient
			s, y, rho = s[:0], y[:0], rho[:0]
			floats.ScaleTo(dir, -1/math.Max(1, gmax), g)
			slope = floats.Dot(g, dir)
		}
		step, fNew := 1.0, 0.0
		for {
			floats.AddScaledTo(xNew, x, step, dir)
			fNew = fg(xNew, gNew)
			if fNew <= f+c1*step*slope {
				break
			}
			step /= 2
			if step < 1e-20 {
				if gmax < 1000*gtol { // as close as float64 lets us get
					return nil
				}
				return fmt.Errorf("the line search failed (gradient %.3g)", gmax)
			}
		}
		sk, yk := make([]float64, n), make([]float64, n)
		floats.SubTo(sk, xNew, x)
		floats.SubTo(yk, gNew, g)
		if sy := floats.Dot(sk, yk); sy > 0 {
			if len(s) == memory {
				s, y, rho = s[1:], y[1:], rho[1:]
			}
			s, y, rho = append(s, sk), append(y, yk), append(rho, 1/sy)
		}
		copy(x, xNew)
		copy(g, gNew)
		if f-fNew <= 1e-15*math.Abs(f) && gmax < 1000*gtol {
			f = fNew
			return nil
		}
		f = fNew
	}
}
