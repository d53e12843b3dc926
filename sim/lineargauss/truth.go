package lineargauss

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Gaussian is the multivariate normal N(mean, cov) with cov positive
// definite. Build it with NewGaussian.
type Gaussian struct {
	mean []float64
	cov  *mat.SymDense
	l    []float64 // lower Cholesky factor of cov, row-major
	half float64   // (d/2) log(2 pi) + (1/2) log det cov
}

// NewGaussian returns N(mean, cov); cov must be positive definite.
func NewGaussian(mean []float64, cov *mat.SymDense) (Gaussian, error) {
	d := len(mean)
	if cov.SymmetricDim() != d {
		return Gaussian{}, fmt.Errorf("lineargauss: mean of length %d, covariance %dx%d", d, cov.SymmetricDim(), cov.SymmetricDim())
	}
	l, err := cholLower(cov)
	if err != nil {
		return Gaussian{}, fmt.Errorf("lineargauss: covariance: %w", err)
	}
	g := Gaussian{mean: append([]float64(nil), mean...), cov: symCopy(cov), l: l}
	g.half = float64(d) * logSqrt2Pi
	for i := range d {
		g.half += math.Log(l[i*d+i])
	}
	return g, nil
}

// Dim returns the dimension.
func (g Gaussian) Dim() int { return len(g.mean) }

// Mean returns a copy of the mean.
func (g Gaussian) Mean() []float64 { return append([]float64(nil), g.mean...) }

// Cov returns a copy of the covariance.
func (g Gaussian) Cov() *mat.SymDense { return symCopy(g.cov) }

// LogPDF returns log N(x; mean, cov).
func (g Gaussian) LogPDF(x []float64) float64 {
	if len(x) != len(g.mean) {
		panic(fmt.Sprintf("lineargauss: point of length %d, want %d", len(x), len(g.mean)))
	}
	r := make([]float64, len(x))
	for i := range r {
		r[i] = x[i] - g.mean[i]
	}
	return -g.half - 0.5*forwardSolveSq(g.l, r)
}

// Rand draws mean + L z with z standard normal (d draws) and L the lower
// Cholesky factor of cov.
func (g Gaussian) Rand(rng *rand.Rand) []float64 {
	d := len(g.mean)
	z := make([]float64, d)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	x := append([]float64(nil), g.mean...)
	for i := range d {
		for j := 0; j <= i; j++ {
			x[i] += g.l[i*d+j] * z[j]
		}
	}
	return x
}

// closedLoop returns the closed-loop system under p,
//
//	s' = M s + b + e,  M = A + B K,  b = B c,  e ~ N(0, W),  W = Noise + B Cov B',
//
// and an error unless the spectral radius of M is below 1.
func (s *System) closedLoop(p *Policy) (m *mat.Dense, b []float64, w *mat.SymDense, err error) {
	if p.d != s.d || p.m != s.m {
		return nil, nil, nil, fmt.Errorf("lineargauss: policy maps %d states to %d actions, system has %d and %d", p.d, p.m, s.d, s.m)
	}
	m = mat.NewDense(s.d, s.d, nil)
	m.Mul(s.b, p.k)
	m.Add(m, s.a)
	bv := mat.NewVecDense(s.d, nil)
	bv.MulVec(s.b, mat.NewVecDense(s.m, append([]float64(nil), p.c...)))
	var bcb mat.Dense
	bcb.Product(s.b, p.cov, s.b.T())
	w = mat.NewSymDense(s.d, nil)
	for i := range s.d {
		for j := i; j < s.d; j++ {
			w.SetSym(i, j, s.noise.At(i, j)+0.5*(bcb.At(i, j)+bcb.At(j, i)))
		}
	}
	if rho := spectralRadius(m); !(rho < 1) {
		return nil, nil, nil, fmt.Errorf("lineargauss: closed loop A + B K has spectral radius %v >= 1: no stationary distribution", rho)
	}
	return m, bv.RawVector().Data, w, nil
}

func spectralRadius(m *mat.Dense) float64 {
	var eig mat.Eigen
	if !eig.Factorize(m, mat.EigenNone) {
		return math.NaN()
	}
	rho := 0.0
	for _, v := range eig.Values(nil) {
		rho = math.Max(rho, cmplx.Abs(v))
	}
	return rho
}

// SolveLyapunov returns the solution S of the discrete Lyapunov equation
//
//	S = M S M' + W,
//
// the stationary covariance of s' = M s + e, e ~ N(0, W). It solves the
// Kronecker form (I - M (x) M) vec(S) = vec(W) directly, which suits the
// small dimensions of this package, and returns an error unless the
// spectral radius of M is below 1.
func SolveLyapunov(m *mat.Dense, w *mat.SymDense) (*mat.SymDense, error) {
	d, dc := m.Dims()
	if d != dc || w.SymmetricDim() != d {
		return nil, fmt.Errorf("lineargauss: Lyapunov equation with M %dx%d and W %d", d, dc, w.SymmetricDim())
	}
	if rho := spectralRadius(m); !(rho < 1) {
		return nil, fmt.Errorf("lineargauss: Lyapunov equation: spectral radius of M is %v >= 1", rho)
	}
	n := d * d
	k := mat.NewDense(n, n, nil)
	for i := range d {
		for j := range d {
			for p := range d {
				for q := range d {
					v := -m.At(i, p) * m.At(j, q)
					if i == p && j == q {
						v++
					}
					k.Set(i*d+j, p*d+q, v)
				}
			}
		}
	}
	rhs := mat.NewVecDense(n, nil)
	for i := range d {
		for j := range d {
			rhs.SetVec(i*d+j, w.At(i, j))
		}
	}
	var x mat.VecDense
	if err := x.SolveVec(k, rhs); err != nil {
		return nil, fmt.Errorf("lineargauss: Lyapunov equation: %w", err)
	}
	s := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			s.SetSym(i, j, 0.5*(x.AtVec(i*d+j)+x.AtVec(j*d+i)))
		}
	}
	return s, nil
}

// Stationary returns the stationary distribution d_pi of the states under
// p, the Gaussian N(mu, S) with
//
//	mu = (I - M)^{-1} B c,   S = M S M' + W,
//
// M = A + B K and W = Noise + B Cov B' (closed loop s' = M s + B c + e). It
// returns an error if M has spectral radius >= 1.
func (s *System) Stationary(p *Policy) (Gaussian, error) {
	m, b, w, err := s.closedLoop(p)
	if err != nil {
		return Gaussian{}, err
	}
	var iMinusM mat.Dense
	iMinusM.Sub(eye(s.d), m)
	var mu mat.VecDense
	if err := mu.SolveVec(&iMinusM, mat.NewVecDense(s.d, b)); err != nil {
		return Gaussian{}, fmt.Errorf("lineargauss: stationary mean: %w", err)
	}
	cov, err := SolveLyapunov(m, w)
	if err != nil {
		return Gaussian{}, err
	}
	return NewGaussian(mu.RawVector().Data, cov)
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

// ExpectedReward returns E[r(s, u)] for s ~ N(mu, S) and u ~ p(.|s):
// with the action's mean nu = K mu + c and covariance Su = K S K' + Cov,
//
//	E r = tr(SS S) + mu' SS mu + S' mu + tr(UU Su) + nu' UU nu + U' nu + Const.
func (s *System) ExpectedReward(dist Gaussian, p *Policy) float64 {
	return s.expectedReward(dist.mean, dist.cov, p)
}

func (s *System) expectedReward(mu []float64, cov mat.Symmetric, p *Policy) float64 {
	r := s.reward
	e := r.Const
	if r.SS != nil {
		e += traceProd(r.SS, cov) + quadForm(r.SS, mu)
	}
	for i, v := range r.S {
		e += v * mu[i]
	}
	nu := p.MeanAction(mu)
	if r.UU != nil {
		var su mat.Dense
		su.Product(p.k, cov, p.k.T())
		su.Add(&su, p.cov)
		e += traceProd(r.UU, &su) + quadForm(r.UU, nu)
	}
	for i, v := range r.U {
		e += v * nu[i]
	}
	return e
}

func traceProd(a, b mat.Matrix) float64 {
	n, _ := a.Dims()
	t := 0.0
	for i := range n {
		for j := range n {
			t += a.At(i, j) * b.At(j, i)
		}
	}
	return t
}

func quadForm(q mat.Matrix, x []float64) float64 {
	r := 0.0
	for i := range x {
		for j := range x {
			r += x[i] * q.At(i, j) * x[j]
		}
	}
	return r
}

// AverageReward returns the long-run average reward of p,
// E_{s ~ d_pi, u ~ pi}[r(s, u)], in closed form (ExpectedReward under the
// stationary distribution).
func (s *System) AverageReward(p *Policy) (float64, error) {
	st, err := s.Stationary(p)
	if err != nil {
		return 0, err
	}
	return s.ExpectedReward(st, p), nil
}

// Value returns the normalised T-step value of p from the reset
// distribution,
//
//	R^T = sum_{t<T} gamma_t E[r_t],   gamma_t = gamma^t / sum_{s<T} gamma^s,
//
// exactly, by propagating the state's mean and covariance:
// m_{t+1} = M m_t + B c, S_{t+1} = M S_t M' + W. gamma = 1 gives the
// T-step average reward, which tends to AverageReward as T grows. Unlike
// AverageReward it does not need a stable closed loop.
func (s *System) Value(p *Policy, gamma float64, T int) (float64, error) {
	if !(gamma > 0 && gamma <= 1) {
		return 0, fmt.Errorf("lineargauss: discount %v outside (0, 1]", gamma)
	}
	if T <= 0 {
		return 0, fmt.Errorf("lineargauss: horizon %d", T)
	}
	if p.d != s.d || p.m != s.m {
		return 0, fmt.Errorf("lineargauss: policy maps %d states to %d actions, system has %d and %d", p.d, p.m, s.d, s.m)
	}
	m := mat.NewDense(s.d, s.d, nil)
	m.Mul(s.b, p.k)
	m.Add(m, s.a)
	bc := mat.NewVecDense(s.d, nil)
	bc.MulVec(s.b, mat.NewVecDense(s.m, append([]float64(nil), p.c...)))
	var w mat.Dense
	w.Product(s.b, p.cov, s.b.T())
	w.Add(&w, s.noise)

	mu := mat.NewVecDense(s.d, append([]float64(nil), s.init.mean...))
	cov := mat.DenseCopyOf(s.init.cov)
	sum, norm, g := 0.0, 0.0, 1.0
	for range T {
		sum += g * s.expectedReward(mu.RawVector().Data, symView(cov), p)
		norm += g
		g *= gamma
		var nm mat.VecDense
		nm.MulVec(m, mu)
		nm.AddVec(&nm, bc)
		mu = &nm
		var nc mat.Dense
		nc.Product(m, cov, m.T())
		nc.Add(&nc, &w)
		cov = &nc
	}
	v := sum / norm
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("lineargauss: value is %v (the closed loop diverges)", v)
	}
	return v, nil
}

// symView returns the symmetric part of a square matrix.
func symView(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	return s
}

// Ratio is the stationary density ratio w(s) = d_pi(s) / d_pi0(s) of two
// Gaussian stationary distributions, the quantity the paper's estimator
// learns (Section 3, w_{pi/pi0}).
type Ratio struct {
	// Target is d_pi, Behavior is d_pi0.
	Target, Behavior Gaussian
}

// StationaryRatio returns w = d_target / d_behavior.
func (s *System) StationaryRatio(target, behavior *Policy) (Ratio, error) {
	t, err := s.Stationary(target)
	if err != nil {
		return Ratio{}, fmt.Errorf("target: %w", err)
	}
	b, err := s.Stationary(behavior)
	if err != nil {
		return Ratio{}, fmt.Errorf("behavior: %w", err)
	}
	return Ratio{Target: t, Behavior: b}, nil
}

// LogW returns log w(x) = log N(x; mu_pi, S_pi) - log N(x; mu_pi0, S_pi0).
func (r Ratio) LogW(x []float64) float64 { return r.Target.LogPDF(x) - r.Behavior.LogPDF(x) }

// W returns w(x).
func (r Ratio) W(x []float64) float64 { return math.Exp(r.LogW(x)) }

// SecondMoment returns E_{d_pi0}[w(s)^2] = int d_pi^2 / d_pi0, so that
// 1/SecondMoment is the effective-sample-size fraction of stationary
// behavior states reweighted to the target. With P1 = S_pi^{-1},
// P0 = S_pi0^{-1}, P = 2 P1 - P0 and h = 2 P1 mu_pi - P0 mu_pi0,
//
//	log E[w^2] = (1/2) log det S_pi0 - log det S_pi - (1/2) log det P
//	             + (1/2) h' P^{-1} h - mu_pi' P1 mu_pi + (1/2) mu_pi0' P0 mu_pi0.
//
// It is infinite (returned as +Inf) unless P is positive definite.
func (r Ratio) SecondMoment() float64 {
	var p1, p0 mat.Dense
	if err := p1.Inverse(r.Target.cov); err != nil {
		return math.NaN()
	}
	if err := p0.Inverse(r.Behavior.cov); err != nil {
		return math.NaN()
	}
	d := r.Target.Dim()
	var pd mat.Dense
	pd.Scale(2, &p1)
	pd.Sub(&pd, &p0)
	p := symView(&pd)
	var ch mat.Cholesky
	if !ch.Factorize(p) {
		return math.Inf(1)
	}
	m1 := mat.NewVecDense(d, r.Target.Mean())
	m0 := mat.NewVecDense(d, r.Behavior.Mean())
	var h, t mat.VecDense
	h.MulVec(&p1, m1)
	h.ScaleVec(2, &h)
	t.MulVec(&p0, m0)
	h.SubVec(&h, &t)
	var ph mat.VecDense
	if err := ch.SolveVecTo(&ph, &h); err != nil {
		return math.NaN()
	}
	logDet := func(g Gaussian) float64 { return 2 * (g.half - float64(d)*logSqrt2Pi) }
	lv := 0.5*logDet(r.Behavior) - logDet(r.Target) - 0.5*ch.LogDet() +
		0.5*mat.Dot(&h, &ph) - mat.Inner(m1, &p1, m1) + 0.5*mat.Inner(m0, &p0, m0)
	return math.Exp(lv)
}
