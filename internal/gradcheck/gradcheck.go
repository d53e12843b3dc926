// Package gradcheck checks hand-written gradients against central finite
// differences, for the tests of packages nn and ratio.
package gradcheck

import "math"

// FiniteDifferences returns the central differences
// (f(p+h e_i) - f(p-h e_i)) / 2h for every element p_i of p, with
// h = 1e-5 max(1, |p_i|) (about the cube root of the machine epsilon,
// balancing truncation and rounding). f reads p, which is perturbed in
// place and restored.
func FiniteDifferences(p []float64, f func() float64) []float64 {
	fd := make([]float64, len(p))
	for i := range p {
		v := p[i]
		h := 1e-5 * max(1, math.Abs(v))
		p[i] = v + h
		up := f()
		p[i] = v - h
		down := f()
		p[i] = v
		fd[i] = (up - down) / (2 * h)
	}
	return fd
}

// Compare returns ||g - fd|| / ||g|| and the largest |g_i - fd_i| / |g_i|
// over |g_i| >= 1e-3 max|g| (smaller entries are dominated by the
// rounding noise of fd and covered by the first).
func Compare(g, fd []float64) (vec, elem float64) {
	var num, den, gmax float64
	for i := range g {
		num += (g[i] - fd[i]) * (g[i] - fd[i])
		den += g[i] * g[i]
		gmax = max(gmax, math.Abs(g[i]))
	}
	for i := range g {
		if math.Abs(g[i]) >= 1e-3*gmax {
			elem = max(elem, math.Abs(g[i]-fd[i])/math.Abs(g[i]))
		}
	}
	return math.Sqrt(num / den), elem
}
