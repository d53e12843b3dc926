package kernelloss

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// GMRES solves A x = b by restarted GMRES (Saad and Schultz 1986) with
// the Jacobi preconditioner diag applied on the right, so that the
// residual it monitors is the true one, starting from x, restarted every
// restart steps. It stops when ||b - A x||_2 <= tol ||b||_2, recomputing
// the residual from A at every restart; it returns the number of Krylov
// steps and the final relative residual, and an error if maxIter steps do
// not reach the tolerance.
//
// The chains solved with it are sparse (Taxi: 2000 states, about 30,000
// entries from a log of 80,000 steps), where a dense LU factorisation
// (mdp.Visitation's method) costs O(n^3), about 0.7 s; GMRES needs a
// few dozen matrix-vector products.
func GMRES(apply func(dst, x []float64), diag, b, x []float64, tol float64, restart, maxIter int) (iters int, res float64, err error) {
	n := len(b)
	bnorm := floats.Norm(b, 2)
	if bnorm == 0 {
		clear(x)
		return 0, 0, nil
	}
	m := min(restart, n)
	basis := make([][]float64, m+1)
	for i := range basis {
		basis[i] = make([]float64, n)
	}
	h := make([][]float64, m+1) // Hessenberg matrix, column by column h[j][i]
	for j := range h {
		h[j] = make([]float64, m+1)
	}
	cs, sn, g, y := make([]float64, m), make([]float64, m), make([]float64, m+1), make([]float64, m)
	z, w := make([]float64, n), make([]float64, n)
	residual := func() float64 {
		apply(w, x)
		for i := range w {
			basis[0][i] = b[i] - w[i]
		}
		return floats.Norm(basis[0], 2)
	}
	beta := residual()
	for iters < maxIter {
		if beta <= tol*bnorm {
			return iters, beta / bnorm, nil
		}
		floats.Scale(1/beta, basis[0])
		clear(g)
		g[0] = beta
		k := 0
		for k < m && iters < maxIter {
			iters++
			floats.DivTo(z, basis[k], diag)
			apply(w, z)
			col := h[k]
			for i := 0; i <= k; i++ { // modified Gram-Schmidt
				col[i] = floats.Dot(w, basis[i])
				floats.AddScaled(w, -col[i], basis[i])
			}
			col[k+1] = floats.Norm(w, 2)
			breakdown := col[k+1] == 0 // x is exact in the Krylov space
			if !breakdown {
				floats.ScaleTo(basis[k+1], 1/col[k+1], w)
			}
			for i := 0; i < k; i++ { // earlier rotations
				col[i], col[i+1] = cs[i]*col[i]+sn[i]*col[i+1], -sn[i]*col[i]+cs[i]*col[i+1]
			}
			r := math.Hypot(col[k], col[k+1])
			cs[k], sn[k] = col[k]/r, col[k+1]/r
			col[k], col[k+1] = r, 0
			g[k+1] = -sn[k] * g[k]
			g[k] *= cs[k]
			k++
			if breakdown || math.Abs(g[k]) <= 0.5*tol*bnorm {
				break
			}
		}
		// Solve the k x k triangular system and update x += D^-1 V y.
		for i := k - 1; i >= 0; i-- {
			s := g[i]
			for j := i + 1; j < k; j++ {
				s -= h[j][i] * y[j]
			}
			y[i] = s / h[i][i]
		}
		clear(z)
		for i := range k {
			floats.AddScaled(z, y[i], basis[i])
		}
		for i := range x {
			x[i] += z[i] / diag[i]
		}
		prev := beta
		beta = residual()
		if !(beta < prev) && beta > tol*bnorm {
			return iters, beta / bnorm, fmt.Errorf("GMRES stagnates at relative residual %.3g (ill-conditioned system)", beta/bnorm)
		}
	}
	if beta <= tol*bnorm {
		return iters, beta / bnorm, nil
	}
	return iters, beta / bnorm, fmt.Errorf("GMRES did not converge in %d steps (relative residual %.3g)", iters, beta/bnorm)
}
