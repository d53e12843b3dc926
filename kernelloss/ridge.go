package kernelloss

import (
	"fmt"
	"math"
)

// RidgeFlow minimises the squared flow residual of the logged pairs plus
// a ridge weighted by the data distribution,
//
//	||B u - c||^2 + lambda sum_p u(p)^2 / d_D(p),   (B u)(p) = gamma pi~(p) (M' u)~(s_p) - u(p),   c(p) = -(1 - gamma) pi~(p) d0~(s_p),
//
// (M' u the states the pairs' masses lead to, ~ the move of the states
// never left), gamma < 1, with lambda = ridge mean_p diag(B^T B)_pp /
// mean_p (1/d_D(p)), relative to the loss's mean curvature (the mode of
// the total mass has curvature about (1 - gamma)^2 of the mean, so that
// ridges above about (1 - gamma)^2 / 100 visibly shrink the flow). In w = u / d_D the ridge is
// lambda E_D[w^2]: this is the closed form of DualDICE's saddle point with
// the ridge lambda |nu|^2 / 2 on its dual variable (see ratio.DualDICE);
// as ridge tends to 0 the solution tends to Flow's.
//
// The normal equations are solved by conjugate gradients with the Jacobi
// preconditioner (projected on the constraint for gamma = 1), started at
// u = d_D, to a relative residual of tol (0: 1e-11).
func (ch *Chain) RidgeFlow(ridge, tol float64, maxIter int) (*Flow, error) {
	if !(ridge > 0) || math.IsInf(ridge, 0) {
		return nil, fmt.Errorf("ridge %v, want a finite value > 0", ridge)
	}
	if ch.gamma == 1 {
		return nil, fmt.Errorf("a ridge needs gamma < 1 (for gamma = 1 the normalisation fixes the scale and the pooled flow is solved exactly)")
	}
	pp := ch.pp
	np, n := len(pp.State), len(ch.States)
	g := ch.gamma
	y := make([]float64, n)
	z := make([]float64, n)
	// b applies B, bt B^T.
	b := func(dst, u []float64) {
		ch.toStates(y, u)
		ch.toPairs(dst, y)
		for p := range dst {
			dst[p] = g*dst[p] - u[p]
		}
	}
	bt := func(dst, r []float64) {
		ch.toPairsT(z, r)
		ch.toStatesT(dst, z)
		for p := range dst {
			dst[p] = g*dst[p] - r[p]
		}
	}
	// Jacobi scaling by the diagonal of B^T B + lambda Omega, whose
	// column norms are approximated without the moves of the states never
	// left: gamma^2 sum_s P(s|p)^2 pi2~(s) - 2 gamma pi~(p) P(s_p|p) + 1.
	pi2 := make([]float64, n)
	for p, s := range pp.State {
		pi2[ch.idx[s]] += ch.Pooled[p] * ch.Pooled[p]
	}
	diag := make([]float64, np)
	for p, s := range pp.State {
		d := 1.0
		i := ch.idx[s]
		if !ch.Restart[i] {
			for k := pp.Start[p]; k < pp.Start[p+1]; k++ {
				j, q := ch.next[k], ch.prob[k]
				d += g * g * q * q * pi2[j]
				if j == i {
					d -= 2 * g * ch.Pooled[p] * q
				}
			}
		}
		diag[p] = math.Max(d, 1e-12)
	}
	var md, mo float64
	for p, d := range diag {
		md += d
		mo += 1 / pp.Weight[p]
	}
	lam := ridge * md / mo
	dinv := make([]float64, np)
	for p, d := range diag {
		dinv[p] = 1 / math.Sqrt(d+lam/pp.Weight[p])
	}
	// c and the right-hand side B^T c.
	c := make([]float64, np)
	ch.toPairs(c, ch.d0)
	for p := range c {
		c[p] *= -(1 - g)
	}
	rhs := make([]float64, np)
	bt(rhs, c)
	bu := make([]float64, np)
	u := make([]float64, np)
	mul := func(dst, yy []float64) {
		for p := range u {
			u[p] = yy[p] * dinv[p]
		}
		b(bu, u)
		bt(dst, bu)
		for p := range dst {
			dst[p] = (dst[p] + lam*u[p]/pp.Weight[p]) * dinv[p]
		}
	}
	for p := range rhs {
		rhs[p] *= dinv[p]
	}
	yy := make([]float64, np)
	for p := range yy {
		yy[p] = pp.Weight[p] / dinv[p]
	}
	it, res, err := cg(mul, rhs, nil, yy, tol, maxIter)
	if err != nil {
		return nil, err
	}
	f := &Flow{U: make([]float64, np), Iterations: it, Residual: res, Lambda: lam}
	for p := range yy {
		f.U[p] = yy[p] * dinv[p]
	}
	f.Loss = ch.flowLoss(f.U)
	return f, nil
}

// cg minimises y^T A y / 2 - b^T y from y (in place), subject to
// c^T y = c^T y_start if c is not nil, by conjugate gradients (projected
// on c^T v = 0); mul applies A. It stops when the (projected) residual is
// at most tol times its largest value over the start and the projected
// b, checks the true residual, and returns the iterations and the final
// relative residual.
func cg(mul func(dst, x []float64), b, c, y []float64, tol float64, maxIter int) (int, float64, error) {
	n := len(y)
	if tol == 0 {
		tol = 1e-11
	}
	if maxIter == 0 {
		maxIter = max(1000, 20*n)
	}
	cc := 0.0
	if c != nil {
		cc = Dot(c, c)
	}
	project := func(v []float64) {
		if c != nil {
			a := Dot(c, v) / cc
			for i := range v {
				v[i] -= a * c[i]
			}
		}
	}
	r := make([]float64, n)
	g := make([]float64, n)
	p := make([]float64, n)
	q := make([]float64, n)
	residual := func() float64 {
		mul(r, y)
		for i := range r {
			r[i] = b[i] - r[i]
		}
		copy(g, r)
		project(g)
		return math.Sqrt(Dot(g, g))
	}
	pb := append([]float64(nil), b...)
	project(pb)
	ref := math.Max(residual(), math.Sqrt(Dot(pb, pb)))
	if ref == 0 {
		return 0, 0, nil
	}
	it := 0
	for range 5 {
		copy(p, g)
		rg := Dot(r, g)
		for ; it < maxIter && math.Sqrt(Dot(g, g)) > tol*ref; it++ {
			mul(q, p)
			pq := Dot(p, q)
			if !(pq > 0) {
				break
			}
			alpha := rg / pq
			for i := range y {
				y[i] += alpha * p[i]
				r[i] -= alpha * q[i]
			}
			copy(g, r)
			project(g)
			rg1 := Dot(r, g)
			beta := rg1 / rg
			rg = rg1
			for i := range p {
				p[i] = g[i] + beta*p[i]
			}
		}
		if res := residual() / ref; res <= 10*tol {
			return it, res, nil
		} else if it >= maxIter {
			return it, res, fmt.Errorf("conjugate gradients stopped at relative residual %.3g after %d iterations", res, it)
		}
	}
	return it, residual() / ref, nil
}
