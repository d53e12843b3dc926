package kernelloss

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Groups is the fixed number of partial sums a pass over the data is
// accumulated into (chunk c into group c mod Groups, in order of c),
// whatever the number of goroutines, so that the sums are bit-identical
// on any GOMAXPROCS.
const Groups = 8

// Parallel runs f(p) for every p < Groups on min(workers, Groups)
// goroutines.
func Parallel(workers int, f func(p int)) {
	workers = max(1, min(workers, Groups))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := w; p < Groups; p += workers {
				f(p)
			}
		}()
	}
	wg.Wait()
}

// Dot returns x . y (len(y) >= len(x)).
func Dot(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// Quadratic holds the sufficient statistics of a quadratic loss over a set of
// terms i with weights rho_i. Term i has a test vector l_i (D entries), a
// coefficient vector h_i (P entries) and a constant c_i; its residual is
// Delta_i = h_i^T theta + c_i and the loss is the squared norm of the
// weighted mean of l_i Delta_i,
//
//	L(theta) = || S theta + u ||^2 / z^2,   S = sum_i rho_i l_i h_i^T,  u = sum_i rho_i c_i l_i,  z = sum_i rho_i,
//
// the V-statistic of a kernel loss whose kernel is k(i, j) = l_i^T l_j
// (random features). For its U-statistic (the diagonal i = j left out)
// they also hold z2 = sum rho_i^2, H = sum rho_i^2 |l_i|^2 h_i h_i^T (upper
// triangle), hv = sum rho_i^2 |l_i|^2 c_i h_i and h0 = sum rho_i^2 |l_i|^2 c_i^2.
//
// The density ratio of the paper (ratio.Kernel: l_i the features of s'_i,
// h_i = beta_i phi(s_i) - phi(s'_i)), minimax weight learning (l_i the
// difference of the test features gamma psi(s'_i, pi) - psi(s_i, a_i),
// h_i the ratio's features) and minimax Q-learning (l_i = psi(s_i, a_i),
// h_i the difference of the value features, c_i = r_i) are all of this
// form.
type Quadratic struct {
	D, P  int
	S, U  []float64 // S is D x P, row-major
	Z, Z2 float64
	H, Hv []float64 // H is P x P, upper triangle
	H0    float64
}

// NewQuadratic returns zero sums of D test and P coefficient entries.
func NewQuadratic(d, p int) *Quadratic {
	return &Quadratic{D: d, P: p, S: make([]float64, d*p), U: make([]float64, d),
		H: make([]float64, p*p), Hv: make([]float64, p)}
}

// Reset zeroes the sums, keeping their storage (a streaming learner
// reuses an episode's sums for the next).
func (k *Quadratic) Reset() {
	clear(k.S)
	clear(k.U)
	clear(k.H)
	clear(k.Hv)
	k.Z, k.Z2, k.H0 = 0, 0, 0
}

// AddScaled adds a times o to k.
func (k *Quadratic) AddScaled(o *Quadratic, a float64) {
	for i, v := range o.S {
		k.S[i] += a * v
	}
	for i, v := range o.U {
		k.U[i] += a * v
	}
	for i, v := range o.H {
		k.H[i] += a * v
	}
	for i, v := range o.Hv {
		k.Hv[i] += a * v
	}
	k.Z += a * o.Z
	k.Z2 += a * o.Z2
	k.H0 += a * o.H0
}

// Add adds o to k.
func (k *Quadratic) Add(o *Quadratic) { k.AddScaled(o, 1) }

// Minus returns k - o.
func (k *Quadratic) Minus(o *Quadratic) *Quadratic {
	out := NewQuadratic(k.D, k.P)
	out.Add(k)
	out.AddScaled(o, -1)
	return out
}

// Total returns the sum of parts.
func Total(parts []*Quadratic) *Quadratic {
	out := NewQuadratic(parts[0].D, parts[0].P)
	for _, p := range parts {
		out.Add(p)
	}
	return out
}

// Chunk is a block of n terms in row form, the input of Accumulate: L
// holds rho_i l_i (n x D), G holds h_i (n x P), R holds rho_i |l_i| h_i
// (n x P), C holds c_i and RC rho_i |l_i| c_i. Accumulate adds them to
// the sums; the caller has already added rho_i to Z, rho_i^2 to Z2 and
// (rho_i |l_i| c_i)^2 to H0.
type Chunk struct {
	L, G, R, C, RC []float64
}

// NewChunk returns scratch for up to n terms of d test and p coefficient
// entries.
func NewChunk(n, d, p int) *Chunk {
	return &Chunk{L: make([]float64, n*d), G: make([]float64, n*p), R: make([]float64, n*p),
		C: make([]float64, n), RC: make([]float64, n)}
}

// Accumulate adds the first n terms of ch to k.
func (k *Quadratic) Accumulate(ch *Chunk, n int) {
	if n == 0 {
		return
	}
	dk, dw := k.D, k.P
	pm := blas64.General{Rows: n, Cols: dk, Stride: dk, Data: ch.L[:n*dk]}
	gm := blas64.General{Rows: n, Cols: dw, Stride: dw, Data: ch.G[:n*dw]}
	rm := blas64.General{Rows: n, Cols: dw, Stride: dw, Data: ch.R[:n*dw]}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, pm, gm, 1, blas64.General{Rows: dk, Cols: dw, Stride: dw, Data: k.S})
	blas64.Gemv(blas.Trans, 1, pm, blas64.Vector{N: n, Inc: 1, Data: ch.C[:n]}, 1, blas64.Vector{N: dk, Inc: 1, Data: k.U})
	blas64.Syrk(blas.Trans, 1, rm, 1, blas64.Symmetric{N: dw, Stride: dw, Data: k.H, Uplo: blas.Upper})
	blas64.Gemv(blas.Trans, 1, rm, blas64.Vector{N: n, Inc: 1, Data: ch.RC[:n]}, 1, blas64.Vector{N: dw, Inc: 1, Data: k.Hv})
}

// Residual returns S theta + u.
func (k *Quadratic) Residual(theta []float64) []float64 {
	r := slices.Clone(k.U)
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: k.D, Cols: k.P, Stride: k.P, Data: k.S},
		blas64.Vector{N: k.P, Inc: 1, Data: theta}, 1, blas64.Vector{N: k.D, Inc: 1, Data: r})
	return r
}

// VLoss returns the V-statistic ||S theta + u||^2 / z^2.
func (k *Quadratic) VLoss(theta []float64) float64 {
	r := k.Residual(theta)
	return Dot(r, r) / (k.Z * k.Z)
}

// ULoss returns the U-statistic
// (||S theta + u||^2 - sum_i rho_i^2 |l_i|^2 Delta_i^2) / (z^2 - z2).
func (k *Quadratic) ULoss(theta []float64) float64 {
	r := k.Residual(theta)
	ht := make([]float64, k.P)
	blas64.Symv(1, blas64.Symmetric{N: k.P, Stride: k.P, Data: k.H, Uplo: blas.Upper},
		blas64.Vector{N: k.P, Inc: 1, Data: theta}, 0, blas64.Vector{N: k.P, Inc: 1, Data: ht})
	diag := k.H0 + Dot(theta, ht) + 2*Dot(k.Hv, theta)
	return (Dot(r, r) - diag) / (k.Z*k.Z - k.Z2)
}

// QP is the quadratic programme of a loss L(theta) = ||M theta - b||^2
// (M = S/z, b = -u/z) with a ridge: minimise
//
//	theta^T (Q + lambda Pen) theta / 2 - q^T theta,   Q = M^T M,  q = M^T b,
//
// subject to a^T theta = 1 if a is not nil (and theta >= 0 when solved
// with signed false). lambda = nu Scale, Scale = sum_{j: Pen_jj > 0} Q_jj /
// sum_j Pen_jj, so that the relative ridge nu is scale free (for
// Pen = diag(0, 1, ..., 1), Scale is the mean of Q_jj over j >= 1).
type QP struct {
	n     int
	q     []float64 // Q, n x n
	mtb   []float64
	a     []float64
	pen   []float64 // n x n
	Scale float64
}

// NewQP returns the programme of the sums k with constraint a (nil: none)
// and penalty pen (n x n, row-major; nil: diag(0, 1, ..., 1)).
func NewQP(k *Quadratic, a, pen []float64) (*QP, error) {
	if !(k.Z > 0) {
		return nil, errors.New("the transitions have no weight")
	}
	n := k.P
	m := mat.NewDense(k.D, n, slices.Clone(k.S))
	m.Scale(1/k.Z, m)
	var q mat.Dense
	q.Mul(m.T(), m)
	b := mat.NewVecDense(k.D, slices.Clone(k.U))
	b.ScaleVec(-1/k.Z, b)
	var mtb mat.VecDense
	mtb.MulVec(m.T(), b)
	return NewQPMatrix(q.RawMatrix().Data, mtb.RawVector().Data, a, pen)
}

// NewQPMatrix returns the programme theta^T (Q + lambda Pen) theta / 2 -
// q^T theta with Q (n x n, row-major) and q given directly (NewQP forms
// them from a loss's sums), constraint a (nil: none) and penalty pen (nil:
// diag(0, 1, ..., 1)). It keeps q; Q and pen are not copied.
func NewQPMatrix(Q, q, a, pen []float64) (*QP, error) {
	n := len(q)
	if len(Q) != n*n || (a != nil && len(a) != n) || (pen != nil && len(pen) != n*n) {
		return nil, fmt.Errorf("kernelloss: a programme of %d coefficients with matrices of the wrong sizes", n)
	}
	if pen == nil {
		pen = make([]float64, n*n)
		for j := 1; j < n; j++ {
			pen[j*n+j] = 1
		}
	}
	qp := &QP{n: n, q: Q, mtb: q, a: a, pen: pen}
	tr := 0.0
	for j := range n {
		if pen[j*n+j] > 0 {
			qp.Scale += qp.q[j*n+j]
			tr += pen[j*n+j]
		}
	}
	if tr > 0 {
		qp.Scale /= tr
	}
	if !(qp.Scale > 0) || math.IsInf(qp.Scale, 0) {
		return nil, fmt.Errorf("the kernel loss has curvature %v", qp.Scale)
	}
	return qp, nil
}

// Solve returns the minimiser for the relative ridge nu and the number of
// active-set steps (1 if signed). With signed false the programme keeps
// theta >= 0 by a primal active-set method (Nocedal and Wright 2006,
// Algorithm 16.3) started from start, a feasible point (a^T start = 1,
// start >= 0), or if start is nil from theta = e_0 / a_0 (theta = 0
// without a constraint): every step solves the KKT system of the free
// coefficients in closed form (Cholesky factor and the Schur complement
// of the constraint), then either stops at the first coefficient that
// would turn negative or, at the optimum of the free set, frees the
// coefficient whose multiplier is most negative.
//
// A loss that is flat along the constraint's direction (Q + lambda Pen
// singular there: with the behavior equal to the target, beta = 1, the
// constant w = theta_0 has zero loss and no ridge) leaves the free
// coefficients' K_FF singular although the constrained programme has one
// minimiser. Solve then solves it again with K_FF + rho a_F a_F^T and q +
// rho a (rho = Scale), which on the constraint set a^T theta = 1 adds
// rho (a^T theta - 1)^2 / 2 = 0 to the objective: the same minimiser and
// multiplier, and a factor that exists whenever K is positive definite on
// the null space of a^T (the augmented Lagrangian, Nocedal and Wright
// 2006, Section 17.3). Only then, so that every other fit keeps its bits.
func (p *QP) Solve(nu float64, signed bool, start []float64) ([]float64, int, error) {
	theta, iter, err := p.solve(nu, signed, start, 0)
	if errors.Is(err, errSingular) && p.a != nil {
		return p.solve(nu, signed, start, p.Scale)
	}
	return theta, iter, err
}

// errSingular is the error of a free set whose K_FF is singular.
var errSingular = errors.New("the kernel loss is singular")

// solve is Solve with the constraint's augmentation rho (0: none).
func (p *QP) solve(nu float64, signed bool, start []float64, rho float64) ([]float64, int, error) {
	n := p.n
	ch := &freeChol{p: p, lam: nu * p.Scale, rho: rho, l: make([]float64, n*n)}
	theta := make([]float64, n)
	if signed {
		for i := range n {
			ch.free = append(ch.free, i)
		}
		if err := ch.factor(); err != nil {
			return nil, 0, err
		}
		fs, _ := ch.kkt()
		return fs, 1, nil
	}
	inFree := make([]bool, n)
	switch {
	case start == nil && p.a == nil:
		// theta = 0, every coefficient bound.
	case start == nil:
		theta[0] = 1 / p.a[0]
		ch.free, inFree[0] = []int{0}, true
	default:
		copy(theta, start)
		for i, v := range theta {
			if v > 0 {
				ch.free, inFree[i] = append(ch.free, i), true
			}
		}
	}
	if err := ch.factor(); err != nil {
		return nil, 0, err
	}
	added := -1
	g := make([]float64, n)
	for iter := 1; iter <= 20*n; iter++ {
		fs, mu := ch.kkt()
		if math.IsNaN(mu) || math.IsInf(mu, 0) {
			return nil, iter, errors.New("the normalisation of the kernel loss is degenerate")
		}
		// Move towards the minimiser on the free set, stopping at the
		// first coefficient that reaches 0.
		alpha, block := 1.0, -1
		for x, i := range ch.free {
			if fs[x] < 0 {
				if t := theta[i] / (theta[i] - fs[x]); t < alpha {
					alpha, block = t, x
				}
			}
		}
		if block >= 0 && alpha <= 0 && ch.free[block] == added {
			// The coefficient just freed cannot grow: its multiplier was
			// rounding noise, and theta is optimal.
			return theta, iter, nil
		}
		added = -1
		for x, i := range ch.free {
			theta[i] += alpha * (fs[x] - theta[i])
		}
		if block >= 0 {
			theta[ch.free[block]] = 0
			keep := ch.free[:0]
			for _, i := range ch.free {
				if theta[i] <= 0 {
					theta[i] = 0
					inFree[i] = false
					continue
				}
				keep = append(keep, i)
			}
			ch.free = keep
			if len(ch.free) == 0 && p.a != nil {
				return nil, iter, errors.New("the active-set method lost every coefficient")
			}
			if err := ch.factor(); err != nil {
				return nil, iter, err
			}
			continue
		}
		// theta minimises over the free set: free the coefficient whose
		// multiplier (Q theta - q + lambda Pen theta + mu a)_j is most
		// negative, or stop.
		scale := 0.0
		for i := range n {
			v := Dot(p.q[i*n:(i+1)*n], theta) - p.mtb[i]
			if ch.lam != 0 {
				v += ch.lam * Dot(p.pen[i*n:(i+1)*n], theta)
			}
			g[i] = v
			scale = math.Max(scale, math.Max(math.Abs(v), math.Abs(p.mtb[i])))
		}
		if c := ch.rho; c != 0 {
			// Flat along the constraint, g and q may vanish at the
			// optimum (w = 1 with beta = 1): measure the multipliers'
			// rounding against the curvature instead.
			for _, v := range theta {
				scale = math.Max(scale, c*math.Abs(v))
			}
		}
		best, bi := -1e-9*scale, -1
		for i := range n {
			z := g[i]
			if p.a != nil {
				z += mu * p.a[i]
			}
			if !inFree[i] && z < best {
				best, bi = z, i
			}
		}
		if bi < 0 {
			return theta, iter, nil
		}

		if err := ch.add(bi); err != nil {
			return nil, iter, err
		}
		inFree[bi] = true
		added = bi
	}
	return nil, 20 * n, errors.New("the active-set method did not converge")
}

// freeChol is the Cholesky factor L of K_FF = (Q + lambda Pen)_FF for the
// free coefficients F of the active-set method, kept up to date as F
// grows (one row per added coefficient, O(|F|^2)) and refactored when it
// shrinks. L is row-major with stride n.
type freeChol struct {
	p    *QP
	lam  float64
	rho  float64 // the constraint's augmentation (Solve)
	free []int
	l    []float64
}

// k returns (Q + lambda Pen + rho a a^T)_ij.
func (c *freeChol) k(i, j int) float64 {
	n := c.p.n
	v := c.p.q[i*n+j]
	if pen := c.p.pen[i*n+j]; pen != 0 {
		v += c.lam * pen
	}
	if c.rho != 0 {
		v += c.rho * c.p.a[i] * c.p.a[j]
	}
	return v
}

// factor computes L for the current free set.
func (c *freeChol) factor() error {
	free := c.free
	c.free = c.free[:0:0]
	for _, i := range free {
		if err := c.add(i); err != nil {
			return err
		}
	}
	return nil
}

// add appends coefficient j to the free set: the new row of L is
// l = L^-1 K_Fj and its diagonal sqrt(K_jj - l^T l).
func (c *freeChol) add(j int) error {
	n, f := c.p.n, len(c.free)
	row := c.l[f*n : f*n+f+1]
	for x, i := range c.free {
		v := c.k(i, j)
		lx := c.l[x*n : x*n+x]
		v -= Dot(lx, row[:x])
		row[x] = v / c.l[x*n+x]
	}
	d := c.k(j, j) - Dot(row[:f], row[:f])
	if !(d > 0) {
		return fmt.Errorf("%w on %d coefficients (raise the ridge)", errSingular, f+1)
	}
	row[f] = math.Sqrt(d)
	c.free = append(c.free, j)
	return nil
}

// solveTo solves L L^T x = b in place.
func (c *freeChol) solveTo(x []float64) {
	n, f := c.p.n, len(c.free)
	for i := range f { // L y = b
		x[i] = (x[i] - Dot(c.l[i*n:i*n+i], x[:i])) / c.l[i*n+i]
	}
	for i := f - 1; i >= 0; i-- { // L^T x = y
		v := x[i]
		for k := i + 1; k < f; k++ {
			v -= c.l[k*n+i] * x[k]
		}
		x[i] = v / c.l[i*n+i]
	}
}

// kkt solves the KKT system of the free coefficients (the others at 0):
// theta_F = K_FF^-1 (q_F - mu a_F) with mu such that a_F^T theta_F = 1
// (mu = 0 without a constraint). It returns theta_F in the order of the
// free set, and mu.
func (c *freeChol) kkt() ([]float64, float64) {
	f := len(c.free)
	u := make([]float64, f)
	for x, i := range c.free {
		u[x] = c.p.mtb[i]
		if c.rho != 0 {
			u[x] += c.rho * c.p.a[i]
		}
	}
	if c.p.a == nil {
		c.solveTo(u)
		return u, 0
	}
	v := make([]float64, f)
	for x, i := range c.free {
		v[x] = c.p.a[i]
	}
	af := slices.Clone(v)
	c.solveTo(u)
	c.solveTo(v)
	mu := (Dot(af, u) - 1) / Dot(af, v)
	for x := range u {
		u[x] -= mu * v[x]
	}
	return u, mu
}

// CV is the outcome of a cross-validation of the relative ridge.
type CV struct {
	// Grid lists the relative ridges tried, Loss the mean held-out
	// U-statistic of each over the folds and SE its standard error (nil
	// with fewer than two folds).
	Grid, Loss, SE []float64
	// Folds is the number of folds that held data, and Ridge the ridge
	// chosen.
	Folds int
	Ridge float64
}

// CrossValidate chooses the relative ridge nu from grid (increasing) by
// K-fold cross-validation: for every fold f with data, the programme of
// all - folds[f] (constraint a, penalty pen) is solved for every ridge,
// from the largest down, each solve started from the previous one, and
// scored by the held-out U-statistic of fold f (a ridge too small for a
// singular loss scores +Inf). The largest ridge whose
// mean held-out loss is within one standard error (over the folds) of
// the smallest is kept (the one-standard-error rule, Hastie, Tibshirani
// and Friedman 2009, Section 7.10). With fewer than two folds holding
// data it returns fallback.
func CrossValidate(all *Quadratic, folds []*Quadratic, a, pen, grid []float64, signed bool, fallback float64) (CV, error) {
	var per [][]float64 // per fold and ridge
	for _, ho := range folds {
		if !(ho.Z > 0) || !(all.Z-ho.Z > 0) {
			continue
		}
		sol, err := NewQP(all.Minus(ho), a, pen)
		if err != nil {
			return CV{}, err
		}
		loss := make([]float64, len(grid))
		var theta []float64
		for k := len(grid) - 1; k >= 0; k-- {
			th, _, err := sol.Solve(grid[k], signed, theta)
			if err != nil { // too small a ridge for a singular loss
				loss[k] = math.Inf(1)
				continue
			}
			theta = th
			loss[k] = ho.ULoss(theta)
		}
		per = append(per, loss)
	}
	cv := CV{Folds: len(per)}
	if len(per) < 2 {
		cv.Ridge = fallback
		return cv, nil
	}
	nf := float64(len(per))
	cv.Grid = slices.Clone(grid)
	cv.Loss = make([]float64, len(grid))
	cv.SE = make([]float64, len(grid))
	best := -1
	for k := range grid {
		m, v := 0.0, 0.0
		for _, f := range per {
			m += f[k]
		}
		m /= nf
		for _, f := range per {
			v += (f[k] - m) * (f[k] - m)
		}
		cv.Loss[k] = m
		cv.SE[k] = math.Sqrt(v / (nf - 1) / nf)
		if math.IsInf(m, 1) {
			cv.SE[k] = math.Inf(1)
		}
		if !math.IsInf(m, 1) && (best < 0 || m < cv.Loss[best]) {
			best = k
		}
	}
	if best < 0 {
		return CV{}, errors.New("the loss is singular at every ridge of the grid")
	}
	cv.Ridge = grid[best]
	for k := len(grid) - 1; k > best; k-- {
		if cv.Loss[k] <= cv.Loss[best]+cv.SE[best] {
			cv.Ridge = grid[k]
			break
		}
	}
	return cv, nil
}

// LeastLoss returns the ridge of the grid whose mean held-out loss is
// the least (the plain minimum, which the one-standard-error rule of
// Ridge moves up the grid), or Ridge where there was no grid.
func (cv CV) LeastLoss() float64 {
	best := -1
	for k, m := range cv.Loss {
		if !math.IsInf(m, 1) && (best < 0 || m < cv.Loss[best]) {
			best = k
		}
	}
	if best < 0 {
		return cv.Ridge
	}
	return cv.Grid[best]
}

// ChunkLen is the number of terms of one chunk of AccumulateFolds.
const ChunkLen = 512

// AccumulateFolds returns the sums of every fold in one pass over the
// terms: fold[i] < nFolds is the fold of term i, and the terms of a fold
// are cut into chunks of ChunkLen consecutive ones, dealt to Groups
// partial sums (in a fixed order, whatever the number of goroutines). For
// every chunk, add adds its terms (rows holds their indices) to a;
// newAdd is called once per group, so that each add may keep its own
// scratch.
func AccumulateFolds(fold []int8, nFolds, d, p, workers int, newAdd func() func(a *Quadratic, rows []int)) []*Quadratic {
	idx := make([][]int, nFolds)
	for i, f := range fold {
		idx[f] = append(idx[f], i)
	}
	type span struct{ fold, lo, hi int }
	var chunks []span
	for f, ix := range idx {
		for lo := 0; lo < len(ix); lo += ChunkLen {
			chunks = append(chunks, span{f, lo, min(len(ix), lo+ChunkLen)})
		}
	}
	groups := make([][]*Quadratic, Groups)
	Parallel(workers, func(g int) {
		acc := make([]*Quadratic, nFolds)
		add := newAdd()
		for c := g; c < len(chunks); c += Groups {
			sp := chunks[c]
			if acc[sp.fold] == nil {
				acc[sp.fold] = NewQuadratic(d, p)
			}
			add(acc[sp.fold], idx[sp.fold][sp.lo:sp.hi])
		}
		groups[g] = acc
	})
	out := make([]*Quadratic, nFolds)
	for f := range out {
		out[f] = NewQuadratic(d, p)
		for _, g := range groups {
			if g[f] != nil {
				out[f].Add(g[f])
			}
		}
	}
	return out
}

// AccumulateBlock adds n terms whose coefficient vectors h_i vanish
// outside the columns [off, off+w): ch.L holds rows rho_i l_i (n x D),
// ch.G rows h_i and ch.R rows rho_i |l_i| h_i restricted to the block
// (n x w), ch.C and ch.RC as for Accumulate.
func (k *Quadratic) AccumulateBlock(ch *Chunk, n, off, w int) {
	if n == 0 {
		return
	}
	dk, p := k.D, k.P
	pm := blas64.General{Rows: n, Cols: dk, Stride: dk, Data: ch.L[:n*dk]}
	gm := blas64.General{Rows: n, Cols: w, Stride: w, Data: ch.G[:n*w]}
	rm := blas64.General{Rows: n, Cols: w, Stride: w, Data: ch.R[:n*w]}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, pm, gm, 1, blas64.General{Rows: dk, Cols: w, Stride: p, Data: k.S[off:]})
	blas64.Gemv(blas.Trans, 1, pm, blas64.Vector{N: n, Inc: 1, Data: ch.C[:n]}, 1, blas64.Vector{N: dk, Inc: 1, Data: k.U})
	blas64.Syrk(blas.Trans, 1, rm, 1, blas64.Symmetric{N: w, Stride: p, Data: k.H[off*p+off:], Uplo: blas.Upper})
	blas64.Gemv(blas.Trans, 1, rm, blas64.Vector{N: n, Inc: 1, Data: ch.RC[:n]}, 1, blas64.Vector{N: w, Inc: 1, Data: k.Hv[off:]})
}

// AccumulateRows adds n terms whose test vectors l_i vanish outside the
// rows [off, off+w) of S: ch.L holds rows rho_i l_i restricted to them
// (n x w), ch.G, ch.R, ch.C and ch.RC are as for Accumulate.
func (k *Quadratic) AccumulateRows(ch *Chunk, n, off, w int) {
	if n == 0 {
		return
	}
	p := k.P
	pm := blas64.General{Rows: n, Cols: w, Stride: w, Data: ch.L[:n*w]}
	gm := blas64.General{Rows: n, Cols: p, Stride: p, Data: ch.G[:n*p]}
	rm := blas64.General{Rows: n, Cols: p, Stride: p, Data: ch.R[:n*p]}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, pm, gm, 1, blas64.General{Rows: w, Cols: p, Stride: p, Data: k.S[off*p:]})
	blas64.Gemv(blas.Trans, 1, pm, blas64.Vector{N: n, Inc: 1, Data: ch.C[:n]}, 1, blas64.Vector{N: w, Inc: 1, Data: k.U[off:]})
	blas64.Syrk(blas.Trans, 1, rm, 1, blas64.Symmetric{N: p, Stride: p, Data: k.H, Uplo: blas.Upper})
	blas64.Gemv(blas.Trans, 1, rm, blas64.Vector{N: n, Inc: 1, Data: ch.RC[:n]}, 1, blas64.Vector{N: p, Inc: 1, Data: k.Hv})
}
