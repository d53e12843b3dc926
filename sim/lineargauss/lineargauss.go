package lineargauss

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

const logSqrt2Pi = 0.91893853320467274178 // log(sqrt(2 pi))

// Reward is the quadratic reward
//
//	r(s, u) = s' SS s + S' s + u' UU u + U' u + Const.
//
// Nil matrices and vectors are zero; a linear reward leaves SS and UU nil.
type Reward struct {
	SS    *mat.SymDense
	S     []float64
	UU    *mat.SymDense
	U     []float64
	Const float64
}

// System is the linear-Gaussian system
//
//	s_{t+1} = A s_t + B u_t + w_t,   w_t ~ N(0, Noise),   s_0 ~ N(InitMean, InitCov),
//
// with reward r(s_t, u_t) (Reward). The observation is the state itself.
// Build it with NewSystem; it is safe for concurrent use.
type System struct {
	d, m   int
	a, b   *mat.Dense
	noise  *mat.SymDense
	init   Gaussian
	reward Reward
	aRow   []float64 // A row-major, for Step
	bRow   []float64 // B row-major
	noiseL []float64 // lower Cholesky factor of Noise, row-major
	initL  []float64 // lower Cholesky factor of InitCov
	rssRow []float64 // Reward.SS row-major or nil
	ruuRow []float64 // Reward.UU row-major or nil
}

var _ sim.Continuous = (*System)(nil)

// NewSystem returns the system with the given matrices: A is d x d, B is
// d x m, Noise and InitCov are d x d positive definite, InitMean has
// length d, and the reward's terms have matching sizes. The matrices are
// copied.
func NewSystem(a, b *mat.Dense, noise *mat.SymDense, initMean []float64, initCov *mat.SymDense, r Reward) (*System, error) {
	d, dc := a.Dims()
	if d != dc || d == 0 {
		return nil, fmt.Errorf("lineargauss: A is %dx%d, want square", d, dc)
	}
	br, m := b.Dims()
	if br != d || m == 0 {
		return nil, fmt.Errorf("lineargauss: B is %dx%d, want %dx(m>0)", br, m, d)
	}
	if noise.SymmetricDim() != d || initCov.SymmetricDim() != d || len(initMean) != d {
		return nil, fmt.Errorf("lineargauss: noise %d, initial mean %d and covariance %d, want dimension %d",
			noise.SymmetricDim(), len(initMean), initCov.SymmetricDim(), d)
	}
	if (r.SS != nil && r.SS.SymmetricDim() != d) || (r.S != nil && len(r.S) != d) ||
		(r.UU != nil && r.UU.SymmetricDim() != m) || (r.U != nil && len(r.U) != m) {
		return nil, fmt.Errorf("lineargauss: reward terms do not match state dimension %d and action dimension %d", d, m)
	}
	s := &System{d: d, m: m, a: mat.DenseCopyOf(a), b: mat.DenseCopyOf(b),
		noise: mat.NewSymDense(d, nil), reward: copyReward(r)}
	s.noise.CopySym(noise)
	var err error
	if s.noiseL, err = cholLower(noise); err != nil {
		return nil, fmt.Errorf("lineargauss: noise covariance: %w", err)
	}
	init, err := NewGaussian(initMean, initCov)
	if err != nil {
		return nil, fmt.Errorf("lineargauss: initial distribution: %w", err)
	}
	s.init = init
	s.initL = init.l
	s.aRow = rowMajor(s.a)
	s.bRow = rowMajor(s.b)
	if r.SS != nil {
		s.rssRow = rowMajor(r.SS)
	}
	if r.UU != nil {
		s.ruuRow = rowMajor(r.UU)
	}
	for _, v := range append(append(append([]float64{}, s.aRow...), s.bRow...), initMean...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("lineargauss: non-finite entry %v", v)
		}
	}
	return s, nil
}

func copyReward(r Reward) Reward {
	c := Reward{Const: r.Const, S: append([]float64(nil), r.S...), U: append([]float64(nil), r.U...)}
	if r.SS != nil {
		c.SS = mat.NewSymDense(r.SS.SymmetricDim(), nil)
		c.SS.CopySym(r.SS)
	}
	if r.UU != nil {
		c.UU = mat.NewSymDense(r.UU.SymmetricDim(), nil)
		c.UU.CopySym(r.UU)
	}
	return c
}

func rowMajor(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := range r {
		for j := range c {
			out = append(out, m.At(i, j))
		}
	}
	return out
}

// cholLower returns the lower Cholesky factor of a positive definite
// matrix, row-major.
func cholLower(s *mat.SymDense) ([]float64, error) {
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		return nil, fmt.Errorf("matrix is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	return rowMajor(&l), nil
}

// StateDim returns d.
func (s *System) StateDim() int { return s.d }

// ObsDim returns d: the state is observed.
func (s *System) ObsDim() int { return s.d }

// ActionDim returns m.
func (s *System) ActionDim() int { return s.m }

// A returns a copy of the state matrix.
func (s *System) A() *mat.Dense { return mat.DenseCopyOf(s.a) }

// B returns a copy of the input matrix.
func (s *System) B() *mat.Dense { return mat.DenseCopyOf(s.b) }

// Noise returns a copy of the transition noise covariance.
func (s *System) Noise() *mat.SymDense { return symCopy(s.noise) }

// Init returns the reset distribution N(InitMean, InitCov).
func (s *System) Init() Gaussian { return s.init }

// Reward returns a copy of the reward.
func (s *System) Reward() Reward { return copyReward(s.reward) }

// Reset draws s_0 ~ N(InitMean, InitCov): d standard normals z, then
// InitMean + L z with L the lower Cholesky factor of InitCov.
func (s *System) Reset(rng *rand.Rand) []float64 {
	return s.init.Rand(rng)
}

// Step returns A s + B u + w with w ~ N(0, Noise) (d standard normals
// through the lower Cholesky factor) and the reward r(s, u).
func (s *System) Step(rng *rand.Rand, state, action []float64) ([]float64, float64) {
	d, m := s.d, s.m
	if len(state) != d || len(action) != m {
		panic(fmt.Sprintf("lineargauss: state %d and action %d, want %d and %d", len(state), len(action), d, m))
	}
	next := make([]float64, d)
	z := make([]float64, d)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	for i := range d {
		v := 0.0
		for j := range d {
			v += s.aRow[i*d+j] * state[j]
		}
		for j := range m {
			v += s.bRow[i*m+j] * action[j]
		}
		for j := 0; j <= i; j++ {
			v += s.noiseL[i*d+j] * z[j]
		}
		next[i] = v
	}
	return next, s.RewardAt(state, action)
}

// RewardAt returns r(s, u).
func (s *System) RewardAt(state, action []float64) float64 {
	r := s.reward.Const + quadRow(s.rssRow, state) + quadRow(s.ruuRow, action)
	for i, v := range s.reward.S {
		r += v * state[i]
	}
	for i, v := range s.reward.U {
		r += v * action[i]
	}
	return r
}

// quadRow returns x' Q x for row-major Q (zero if Q is nil).
func quadRow(q, x []float64) float64 {
	if q == nil {
		return 0
	}
	n := len(x)
	r := 0.0
	for i := range n {
		for j := range n {
			r += x[i] * q[i*n+j] * x[j]
		}
	}
	return r
}

// Observe returns a copy of the state.
func (s *System) Observe(state []float64) []float64 { return append([]float64(nil), state...) }

// Policy is the linear-Gaussian policy u = K s + C + v, v ~ N(0, Cov),
// untruncated, with exact log-density
//
//	log pi(u|s) = -(m/2) log(2 pi) - (1/2) log det Cov - (1/2) |L^{-1}(u - K s - C)|^2,
//
// L the lower Cholesky factor of Cov. Build it with NewPolicy; it is safe
// for concurrent use.
type Policy struct {
	d, m int
	k    *mat.Dense
	c    []float64
	cov  *mat.SymDense
	kRow []float64
	l    []float64 // lower Cholesky factor of Cov, row-major
	half float64   // (m/2) log(2 pi) + (1/2) log det Cov
}

var _ policy.Continuous = (*Policy)(nil)

// NewPolicy returns the policy u = K s + c + N(0, cov): K is m x d, c has
// length m, cov is m x m positive definite.
func NewPolicy(k *mat.Dense, c []float64, cov *mat.SymDense) (*Policy, error) {
	m, d := k.Dims()
	if len(c) != m || cov.SymmetricDim() != m {
		return nil, fmt.Errorf("lineargauss: policy gain is %dx%d, offset %d, covariance %d", m, d, len(c), cov.SymmetricDim())
	}
	l, err := cholLower(cov)
	if err != nil {
		return nil, fmt.Errorf("lineargauss: policy covariance: %w", err)
	}
	p := &Policy{d: d, m: m, k: mat.DenseCopyOf(k), c: append([]float64(nil), c...), cov: symCopy(cov),
		kRow: rowMajor(k), l: l}
	p.half = float64(m) * logSqrt2Pi
	for i := range m {
		p.half += math.Log(l[i*m+i])
	}
	return p, nil
}

func symCopy(s *mat.SymDense) *mat.SymDense {
	c := mat.NewSymDense(s.SymmetricDim(), nil)
	c.CopySym(s)
	return c
}

// K returns a copy of the gain.
func (p *Policy) K() *mat.Dense { return mat.DenseCopyOf(p.k) }

// C returns a copy of the offset.
func (p *Policy) C() []float64 { return append([]float64(nil), p.c...) }

// Cov returns a copy of the action noise covariance.
func (p *Policy) Cov() *mat.SymDense { return symCopy(p.cov) }

// ActionDim returns m.
func (p *Policy) ActionDim() int { return p.m }

// ObsDim returns d.
func (p *Policy) ObsDim() int { return p.d }

// MeanAction returns K s + c.
func (p *Policy) MeanAction(obs []float64) []float64 {
	if len(obs) != p.d {
		panic(fmt.Sprintf("lineargauss: observation of length %d, want %d", len(obs), p.d))
	}
	mu := make([]float64, p.m)
	for i := range p.m {
		v := p.c[i]
		for j := range p.d {
			v += p.kRow[i*p.d+j] * obs[j]
		}
		mu[i] = v
	}
	return mu
}

// LogProb returns log N(u; K s + c, Cov).
func (p *Policy) LogProb(obs, u []float64) float64 {
	if len(u) != p.m {
		panic(fmt.Sprintf("lineargauss: action of length %d, want %d", len(u), p.m))
	}
	mu := p.MeanAction(obs)
	for i := range mu {
		mu[i] = u[i] - mu[i]
	}
	return -p.half - 0.5*forwardSolveSq(p.l, mu)
}

// forwardSolveSq returns |L^{-1} x|^2 for lower-triangular row-major L,
// overwriting x with L^{-1} x.
func forwardSolveSq(l, x []float64) float64 {
	n := len(x)
	sq := 0.0
	for i := range n {
		v := x[i]
		for j := range i {
			v -= l[i*n+j] * x[j]
		}
		v /= l[i*n+i]
		x[i] = v
		sq += v * v
	}
	return sq
}

// Sample draws u = K s + c + L z with z standard normal.
func (p *Policy) Sample(rng *rand.Rand, obs []float64) []float64 {
	mu := p.MeanAction(obs)
	z := make([]float64, p.m)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	for i := range mu {
		for j := 0; j <= i; j++ {
			mu[i] += p.l[i*p.m+j] * z[j]
		}
	}
	return mu
}
