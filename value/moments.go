package value

// addATB adds X^T R to C, where X is an L x p matrix (row-major, stride
// p), R an L x q matrix (stride q) and C a p x q matrix (stride q):
//
//	C[i][k] += sum_{l < L} X[l][i] R[l][k].
//
// p must be even and q a multiple of 4 (callers pad with zero columns).
// It is the inner loop of the linear learner's moment matrices, sum_j
// phi_j u_j^T over the logged transitions: gonum's Dgemm reads a
// transposed left operand at about a third of the speed of this 2 x 4
// register-blocked loop (3 against 7.5 GFLOP/s on one core of the
// machine it was written on), and the moments are where LSTD-Q spends its
// time. Each C[i][k] gets sum_l in increasing l, accumulated from +0,
// then added to C: the order depends only on L, so the result does not
// depend on how the steps were split between calls of equal L.
func addATB(L, p, q int, x, r, c []float64) {
	if L == 0 {
		return
	}
	if p%2 != 0 || q%4 != 0 || len(x) < L*p || len(r) < L*q || len(c) < p*q {
		panic("value: addATB shapes")
	}
	for i := 0; i < p; i += 2 {
		for k := 0; k < q; k += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13 float64
			xo, ro := i, k
			for range L {
				xs := x[xo : xo+2 : xo+2]
				rs := r[ro : ro+4 : ro+4]
				a0, a1 := xs[0], xs[1]
				b0, b1, b2, b3 := rs[0], rs[1], rs[2], rs[3]
				c00 += a0 * b0
				c01 += a0 * b1
				c02 += a0 * b2
				c03 += a0 * b3
				c10 += a1 * b0
				c11 += a1 * b1
				c12 += a1 * b2
				c13 += a1 * b3
				xo += p
				ro += q
			}
			r0 := c[i*q+k : i*q+k+4 : i*q+k+4]
			r1 := c[(i+1)*q+k : (i+1)*q+k+4 : (i+1)*q+k+4]
			r0[0] += c00
			r0[1] += c01
			r0[2] += c02
			r0[3] += c03
			r1[0] += c10
			r1[1] += c11
			r1[2] += c12
			r1[3] += c13
		}
	}
}
