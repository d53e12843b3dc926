package ratio

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
)

// Kernel learns the density ratio w(s) = d_pi(s)/d_pi0(s) of real-valued
// states deterministically ("bch-kernel"): w is linear in a fixed feature
// map, so the paper's RKHS loss (Theorem 2) is a quadratic form in its
// coefficients, minimised exactly instead of by stochastic gradients.
//
// The loss. States are scaled per dimension, x = (s - mean)/sd over the
// logged states, as Neural does, and k is the Gaussian kernel
// exp(-||x - y||^2 / (2 h^2)) with h the median pairwise distance of (up
// to BandwidthSample) scaled next states (the median heuristic of the
// paper and of Neural). For transitions i with weights rho_i (see below)
// and Delta_i = w(s_i) beta_i - w(s'_i), beta_i = pi(a_i|s_i)/pi0(a_i|s_i),
// the loss is the V-statistic
//
//	D(w) = (1/Z^2) sum_{i,j} rho_i rho_j Delta_i Delta_j k(s'_i, s'_j),   Z = sum_i rho_i.
//
// Computed exactly it costs O(n^2) kernel evaluations (n = 150,000 on
// Pendulum); with KernelFeatures = D_k random Fourier features,
// k(x, y) ~ psi(x)^T psi(y) with psi(x) = sqrt(2/D_k) (cos(omega_l^T x),
// sin(omega_l^T x))_{l < D_k/2}, omega_l ~ N(0, I/h^2) (Rahimi and Recht
// 2007; the cosine-sine pairs have the smaller variance, Sutherland and
// Schneider 2015, and psi(x)^T psi(x) = 1 = k(x, x) exactly), it is
//
//	D(w) ~ || (1/Z) sum_i rho_i Delta_i psi(s'_i) ||^2,
//
// one pass over the data.
//
// The ratio. w(s) = phi(x)^T theta with phi = (1, phi_1, ..., phi_m) a
// constant and m = Centres Gaussian bumps
//
//	phi_j(x) = exp(-||x - c_j||^2 / (2 h_j^2)),   h_j = h/2 (j odd), h/4 (j even),
//
// centred at m logged states drawn without replacement (j = 1..m; the
// bottom-m sample of kernel_stream.go, ordered by key), and
// theta >= 0, so that w >= 0 everywhere: a non-negative mixture of bumps,
// the model of KLIEP (Sugiyama et al. 2008). Then Delta_i = g_i^T theta + c_i with
// g_i = beta_i phi(x_i) - phi(x'_i), c_i = 0, and
//
//	D(theta) = || M theta - b ||^2,   M = (1/Z) sum_i rho_i psi(x'_i) g_i^T,   b = -(1/Z) sum_i rho_i c_i psi(x'_i),
//
// a D_k x (m+1) least-squares problem (b = 0 for gamma = 1).
//
// The discounted case (0 < gamma < 1, Algorithm 2 and the Appendix): step
// t of an episode has rho = gamma^(t+1), and every episode adds one dummy
// transition into its first state s_0 with rho = 1 and Delta = 1 - w(s_0),
// that is g = -phi(x_0), c = 1, s' = s_0: the affine part of the loss is
// b, as in the tabular solve. For gamma = 1 every transition has rho = 1
// (Algorithm 1).
//
// The discounted loss's kernel. For gamma < 1 k is instead the equal
// mixture of the Gaussian kernels of bandwidths h/2 and h/4, the widths of
// w's bumps (its random features: half the frequency pairs drawn at each
// bandwidth). Why: in the discounted loss the start (the dummies) holds a
// share 1 - gamma of the weight, and on Pendulum (n = 150, T = 1000,
// alpha = 1, gamma = 0.99, truth -1.451) the median-bandwidth kernel
// cannot tell the discounted ratio from one that piles w onto the upright
// states the target reaches later: data seeds 1-4 gave -0.70, -1.40,
// -0.89 and -0.88 (mean |error| over seeds 1-8 0.62, step-wise WIS 0.54),
// and four times the episodes did not help (seed 1: -0.69 at n = 600). At the fit, the V-statistic was three times
// below its own diagonal (the fit matches noise) and below its value at a
// Monte Carlo ratio (24 x 24 bins of (theta, theta-dot), 1,500 rollouts
// of each policy, whose weights give -1.31 to -1.35 on the same log): the loss was
// flat in the directions that matter, so the solution followed the noise.
// No ridge (1e-6 ... 100) fixed it; neither did 512 centres, 4,096
// features, or centres drawn from the discounted occupancy. Test
// functions as narrow as the bumps did (data seeds 1-8; mean |error|):
//
//	loss kernel bandwidths   h      h/3    h, h/2, h/4   h/2, h/4
//	Pendulum, gamma 0.99     0.62   0.23*  0.33          0.28
//
// (* seeds 1-4 only). On the linear-Gaussian systems at gamma = 0.99 the
// correlation of w with the closed-form ratio rises (2-d, n = 80: 0.965
// to 0.986; 1-d: 0.967 to 0.997); the value errors stay small (0.020 to
// 0.010 in 2-d, 0.012 to 0.026 in 1-d). For gamma = 1 the narrow kernels
// did worse on Pendulum (mean |error| against the long-run truth over
// seeds 1-4: 0.80 with h, 1.02 with h/2 and h/4), so the average loss
// keeps h.
//
// The solve. Kernel returns the minimiser of
//
//	D(theta) + lambda sum_{j >= 1} theta_j^2   subject to   cbar^T theta = 1,  theta >= 0,
//
// cbar being the gamma^t-weighted mean of phi over the logged states s_t
// (the normalisation E_{d_pi0}[w] = 1 of the paper; cbar_0 = 1). The
// constant is not penalised, so that a large ridge shrinks w towards 1
// (the ratio of two equal policies), not towards a kernel density
// estimate. This small quadratic programme (m + 1 unknowns, the data enter
// only through the (m+1) x (m+1) matrix M^T M and M^T b) is solved exactly
// by a primal active-set method (Nocedal and Wright 2006, Algorithm 16.3)
// started at w = 1: every step solves the KKT system of the free
// coefficients F,
//
//	[ Q_FF  cbar_F ] [ theta_F ]   [ (M^T b)_F ]
//	[ cbar_F^T  0  ] [   mu    ] = [     1     ],   Q = M^T M + lambda diag(0, 1, ..., 1),
//
// in closed form (Cholesky factor of Q_FF and the Schur complement of the
// normalisation: theta_F = Q_FF^-1 ((M^T b)_F - mu cbar_F)), then either
// stops at the first coefficient that would turn negative or, at the
// optimum of F, frees the coefficient whose multiplier is most negative.
// With Signed the sign constraint is dropped and the solution is that one
// KKT system for all coefficients.
//
// The ridge. lambda = nu * mean_{j >= 1} (M^T M)_jj, so that nu is scale
// free. nu is chosen from the grid 1e-6, 1e-5, ..., 100 by 5-fold
// cross-validation: an episode's fold is a fixed hash of its id modulo 5,
// so that a machine holding part of the log knows it (with fewer than 5
// episodes, every episode is cut into 5 blocks of consecutive steps, a
// dummy going with its episode's first block), the model is
// fitted on four folds and scored on the fifth by the U-statistic of the
// loss (the diagonal i = j left out, unbiased for the population loss
// whatever the spread of w),
//
//	U = (||S theta + u||^2 - sum_i rho_i^2 Delta_i^2) / (Z^2 - sum_i rho_i^2),
//
// S and u being Z M and -Z b of the held-out fold. The largest nu whose mean
// held-out loss is within one standard error (over the folds) of the
// smallest is kept (the one-standard-error rule, Hastie, Tibshirani and
// Friedman 2009, Section 7.10), then the model is refitted on all data.
// The folds need no second pass: the sums M, b and the U-statistic's terms
// are accumulated per fold in the one pass over the data, and a training
// set's sums are the total minus its fold's. (A single held-out split,
// tried first, was too noisy: its choice jumped between the ends of the
// grid from one seed to the next.) Ridge, if set, fixes nu instead.
//
// Why this feature map. Measured during development on the
// linear-Gaussian systems of package lineargauss (Problem1D, Problem2D;
// n = 80 episodes of T = 200 steps logged from the behavior's stationary
// law, seeds 1-10; mean |error| of the estimate against System.Value, and
// mean Pearson correlation of w with the closed-form ratio at the logged
// states), all with D_k = 256, 128 features besides the constant and the
// cross-validation above:
//
//	                                       1-d, gamma 1    1-d, 0.99       2-d, gamma 1    2-d, 0.99
//	                                       |err|  corr     |err|  corr     |err|  corr     |err|  corr
//	step-wise WIS                          0.144           0.113           0.074           0.038
//	random Fourier features, signed        0.014  0.994    0.017  0.993    0.049  0.944    0.067  0.929
//	bumps of width h, signed               0.009  0.999    0.013  0.998    0.041  0.930    0.085  0.905
//	bumps of width h, theta >= 0           0.005  0.999    0.007  0.999    0.165  0.764    0.143  0.787
//	bumps of width h/2, theta >= 0         0.009  0.998    0.016  0.997    0.037  0.967    0.025  0.957
//	bumps of width h/4, theta >= 0         0.006  0.949    0.007  0.942    0.018  0.962    0.028  0.949
//	bumps of widths h/2, h/4, theta >= 0   0.008  0.967    0.010  0.975    0.014  0.982    0.028  0.972
//
// ("signed": theta free; the random Fourier features are those of k, 64
// frequencies.)
// On Pendulum (n = 150 episodes of T = 1000 steps, alpha = 1, seeds 1-4;
// errors against the Monte Carlo truth -0.182; step-wise WIS -0.84, -0.90,
// -1.15, -1.46) the signed fits miss by -1.59, -0.61, -1.00, -0.42 (random
// Fourier features) and -1.31, -1.02, -1.05, -0.34 (bumps of width h):
// with free signs the loss is driven far below its value at any sensible
// ratio by fits that are negative at a fifth of the states (Pendulum's
// policy ratios reach 1,700). The non-negative bumps miss by -1.17,
// -0.70, -0.82, -0.49 (width h/2), -1.23, -0.13, -0.22, -0.53 (h/4) and
// -1.19, -0.41, -0.29, -0.49 (h/2 and h/4); the neural learner by -0.17
// and -0.08 on seeds 1-2. So w is a non-negative mixture of bumps at two
// widths: the sign constraint is what makes the fits sensible (and makes
// the estimator's weights a convex combination), bumps as wide as the
// loss's kernel cannot follow the 2-d ratio, width h/2 alone misses
// Pendulum and width h/4 alone gives rough 1-d ratios. (The plain minimum
// of the held-out loss instead of the one-standard-error rule picked the
// smallest ridge in most seeds: errors as small (0.005, 0.006, 0.013, 0.022
// above), but rougher w, correlation 0.89-0.95.)
//
// A known limit: a target far more concentrated than the behavior. The
// bumps' widths follow h, the spread of the logged (behavior's) states,
// so a ratio peaked on a region narrower than h/4 cannot be represented.
// On an unseen 2-d nonlinear world (x' = clip(x + 0.1 sin x + 0.3u +
// 0.1y + 0.3 eps, 5), reward -x^2, a target that holds x near 0, 800
// episodes of 100 steps; long-run truth -0.6963) the fit gave -1.457 and
// -1.122 on two logs (gamma = 0.95: -2.673, -2.575 against -1.6775). The
// loss is not at fault: at a Monte Carlo ratio (50 x 30 bins) its
// V-statistic is 5.5e-6 against 3.2e-5 at the fit, and that ratio's
// weights give -0.699; but the best non-negative mixture of these bumps
// approximating it gives -1.582. Narrower bumps (h/8 and h/16, 256
// centres) gave -0.09 on both logs but moved cart-pole's errors from 0.27
// and 0.21 to 0.10 and 0.30 (gamma 1); choosing the widths by the held-out
// loss as the ridge is chosen always picked the narrowest, where the
// held-out U-statistic turned negative (pairs of steps of one episode
// share w(s_t+1) with opposite signs and reward rough ratios), and cut
// the correlation with the closed-form ratio on the linear-Gaussian
// systems from 0.98 to 0.70. So the widths stay; mwl (a ratio of
// state-action pairs) was within 0.14 there.
//
// Two passes, and determinism. Fit makes the two passes over the data that
// a stream of shards makes (kernel_stream.go, package stream): the first
// gathers the states' mean and variance (Welford's update, merged by Chan,
// Golub and LeVeque's formula), the number of episodes and two bottom-k
// samples, the bandwidth sample of next states and the centres: every step
// gets a key, a hash of Seed, its episode's id and t, and a sample is the
// k steps of smallest key (uniform without replacement, and the same in
// whatever order or on however many machines the steps are seen). The
// frequencies come from rand.NewPCG(Seed, s) with a fixed stream s. The
// second pass sums the loss per fold, in a fixed number of partial sums in
// a fixed order whatever the number of goroutines: the same data and
// settings give bit-identical models on a machine, with any GOMAXPROCS, and
// a stream over shards gives the same model up to the order of summation.
//
// The zero value is ready to use.
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Theorems 2-3, Algorithms 1-2 and Appendix
//	"Algorithm Details"; Rahimi and Recht (2007), Random features for
//	large-scale kernel machines; Sutherland and Schneider (2015), On the
//	error of random Fourier features; Sugiyama, Suzuki, Nakajima, Kashima,
//	von Buenau, Kawanabe (2008), Direct importance estimation for covariate
//	shift adaptation (KLIEP); Nocedal and Wright (2006), Numerical
//	Optimization, Section 16.5; Hastie, Tibshirani, Friedman (2009), The
//	Elements of Statistical Learning, Section 7.10.
type Kernel struct {
	// Seed seeds the draws of Fit (the keys of the bandwidth sample and
	// of the centres of the bumps, the folds and the kernel's
	// frequencies). The zero seed is a seed like any other: the default
	// draw is fixed.
	Seed uint64

	// KernelFeatures is D_k, the number of random Fourier features of the
	// loss's kernel (rounded up to an even number). If 0, 256 is used.
	KernelFeatures int

	// Centres is m, the number of bumps of w (at most the number of
	// logged steps). If 0, 128 is used.
	Centres int

	// Bandwidth is the kernel bandwidth h in scaled units. If 0, the
	// median heuristic is used.
	Bandwidth float64

	// BandwidthSample is the number of next states whose pairwise
	// distances give the median heuristic. If 0, 1000 is used.
	BandwidthSample int

	// Ridge fixes nu, the ridge relative to the mean diagonal of M^T M.
	// If 0, it is chosen by cross-validation. It must not be negative.
	Ridge float64

	// LeastLoss chooses the ridge of least mean held-out loss instead of
	// the largest within one standard error of it (the default; see the
	// 20-seed comparison in docs/methods.md: neither rule is better on
	// every world).
	LeastLoss bool

	// Signed drops the constraint theta >= 0: the minimiser is then one
	// KKT solve and w may be negative (KernelModel.Negative counts where).
	Signed bool

	// Workers is the number of goroutines of the pass over the data. If
	// 0, GOMAXPROCS is used. It does not change the result.
	Workers int
}

// kernelStream is the second word of the PCG state of Fit's generator
// ("bch-krn" in ASCII), so that its draws never coincide with another use
// of the same seed.
const kernelStream = 0x6263682d6b726e

// kernelRidges is the grid of relative ridges nu of the cross-validation.
var kernelRidges = []float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100}

// kernelWidths are the widths of the bumps relative to h, dealt to the
// centres in turn.
var kernelWidths = []float64{0.5, 0.25}

// kernelFolds is the number of cross-validation folds.
const kernelFolds = 5

type kernelSettings struct {
	dk, m           int
	bandwidth       float64
	bandwidthSample int
	workers         int
}

func (l Kernel) settings() (kernelSettings, error) {
	s := kernelSettings{dk: l.KernelFeatures, m: l.Centres, bandwidth: l.Bandwidth,
		bandwidthSample: l.BandwidthSample, workers: l.Workers}
	if s.dk < 0 || s.m < 0 || s.bandwidthSample < 0 || s.workers < 0 {
		return s, fmt.Errorf("ratio: kernel features %d, centres %d, bandwidth sample %d, workers %d, want >= 0",
			s.dk, s.m, s.bandwidthSample, s.workers)
	}
	if s.dk == 0 {
		s.dk = 256
	}
	s.dk += s.dk % 2
	if s.m == 0 {
		s.m = 128
	}
	if s.bandwidthSample == 0 {
		s.bandwidthSample = 1000
	}
	if s.bandwidthSample < 2 {
		return s, fmt.Errorf("ratio: bandwidth sample %d, want >= 2", s.bandwidthSample)
	}
	if s.workers == 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
	if !(s.bandwidth >= 0) || math.IsInf(s.bandwidth, 0) {
		return s, fmt.Errorf("ratio: bandwidth %v, want a finite value >= 0", s.bandwidth)
	}
	if !(l.Ridge >= 0) || math.IsInf(l.Ridge, 0) {
		return s, fmt.Errorf("ratio: ridge %v, want a finite value >= 0", l.Ridge)
	}
	return s, nil
}

// Name returns "kernel".
func (Kernel) Name() string { return "kernel" }

// KernelModel is a learned density ratio of real-valued states,
//
//	w(s) = Coef[0] + sum_j Coef[j+1] exp(-||x - c_j||^2 / (2 Widths[j]^2)),   x = (s - Mean)/Scale.
type KernelModel struct {
	// Mean and Scale scale a state into x, per dimension.
	Mean, Scale []float64

	// Bandwidth is h, the median-heuristic bandwidth in scaled units
	// (the scale of the bumps' widths), and LossBandwidths the
	// bandwidths of the Gaussian kernels whose equal mixture is the
	// loss's kernel: {h} for gamma = 1, {h/2, h/4} (the bumps' widths)
	// for gamma < 1 (see Kernel).
	Bandwidth      float64
	LossBandwidths []float64

	// Centres holds the centres c_j (scaled, one row of Dim() values
	// each) and Widths their widths.
	Centres, Widths []float64

	// Coef is theta: the constant, then one coefficient per centre.
	Coef []float64

	// KernelFeatures is D_k, the random Fourier features of the loss.
	KernelFeatures int

	// Ridge is the relative ridge nu used and Lambda the penalty lambda
	// it gave on all data.
	Ridge, Lambda float64

	// Grid lists the relative ridges tried, HeldOutLoss the mean
	// held-out U-statistic of each over the folds and HeldOutSE its
	// standard error (nil when Ridge was fixed or there were fewer than
	// two folds).
	Grid, HeldOutLoss, HeldOutSE []float64

	// Folds is the number of cross-validation folds that held data.
	Folds int

	// Transitions is the number of transitions of the loss (dummies
	// included) and Steps the number of logged steps.
	Transitions, Steps int

	// Support is the number of centres with a positive coefficient, and
	// Iterations the number of active-set steps of the final solve.
	Support, Iterations int

	// Loss is D(theta) on all data at the solution (the V-statistic,
	// without the penalty).
	Loss float64

	// Negative is the number of logged steps with w(s) < 0 (always 0
	// unless the fit was Signed), and NegativeMass their share of the
	// total |w| over the logged steps.
	Negative     int
	NegativeMass float64
}

// Dim returns the state dimension the model expects.
func (m *KernelModel) Dim() int { return len(m.Mean) }

// bumps returns the model's feature map phi.
func (m *KernelModel) bumps() *bumps {
	return &bumps{dim: len(m.Mean), centres: m.Centres, inv: invWidths(m.Widths)}
}

// Ratio returns the learned w(s) for one state, NaN if obs does not have
// the model's dimension.
func (m *KernelModel) Ratio(obs []float64) float64 {
	d := len(m.Mean)
	if len(obs) != d {
		return math.NaN()
	}
	x := make([]float64, d)
	for k, v := range obs {
		x[k] = (v - m.Mean[k]) / m.Scale[k]
	}
	f := make([]float64, len(m.Coef))
	m.bumps().features(x, f)
	return kernelloss.Dot(f, m.Coef)
}

// StepRatios returns w(s_t) for every step of d, in step order.
func (m *KernelModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	if d.StateDim != len(m.Mean) {
		return nil, fmt.Errorf("ratio: states of dimension %d, the model's are %d", d.StateDim, len(m.Mean))
	}
	phi := m.bumps()
	n := d.NumSteps()
	out := make([]float64, n)
	const chunk = 1024
	nChunks := (n + chunk - 1) / chunk
	kernelloss.Parallel(runtime.GOMAXPROCS(0), func(p int) {
		x := make([]float64, len(m.Mean))
		f := make([]float64, len(m.Coef))
		for c := p; c < nChunks; c += kernelloss.Groups {
			for j := c * chunk; j < min(n, (c+1)*chunk); j++ {
				for k, v := range d.ObsAt(j) {
					x[k] = (v - m.Mean[k]) / m.Scale[k]
				}
				phi.features(x, f)
				out[j] = kernelloss.Dot(f, m.Coef)
			}
		}
	})
	return out, nil
}

// Warnings says in plain words when a signed fit is negative at logged
// states, and when the cross-validation chose the largest ridge of its
// grid.
func (m *KernelModel) Warnings() []string {
	var out []string
	if m.Negative > 0 {
		out = append(out, negativeWarning(m.Negative, m.Steps, m.NegativeMass, "states", "a signed fit: its weights are not constrained to w >= 0; drop Signed, or raise Ridge"))
	}
	if len(m.Grid) > 0 && m.Ridge == m.Grid[len(m.Grid)-1] {
		out = append(out, fmt.Sprintf("the cross-validation chose the largest ridge of its grid (%g): the held-out loss found no ratio better than a nearly flat one, so w is shrunk towards 1 and the estimate towards the behavior's own average reward",
			m.Ridge))
	}
	return out
}

// Fit learns w from the logged transitions of d with discount gamma in
// (0, 1]. It needs real-valued states (d.StateDim > 0). The model is a
// *KernelModel.
func (l Kernel) Fit(d *dataset.Dataset, gamma float64) (Model, error) {
	return l.fit(d, gamma, nil)
}

// WithValue implements ValueTested: the loss gains the fitted value as
// one more test, in MWL's form (the moment whose zero makes the ratio's
// estimate equal v's; valueTest.coef), its coefficients scaled to unit
// root mean square (valueTest.forKernel), in memory.
func (l Kernel) WithValue(v, next []float64) (Learner, bool) {
	vt, ok := newValueTest(v, next)
	if !ok {
		return l, false
	}
	return kernelValueTested{l, vt}, true
}

// kernelValueTested is a Kernel learner with a value test function.
type kernelValueTested struct {
	k  Kernel
	vt *valueTest
}

// Name returns "kernel".
func (l kernelValueTested) Name() string { return l.k.Name() }

// Fit learns w as Kernel.Fit does, with the value test function.
func (l kernelValueTested) Fit(d *dataset.Dataset, gamma float64) (Model, error) {
	return l.k.fit(d, gamma, l.vt)
}

func (l Kernel) fit(d *dataset.Dataset, gamma float64, vt *valueTest) (Model, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: discount %v outside (0, 1]", gamma)
	}
	if d == nil || d.StateDim <= 0 {
		return nil, errors.New("ratio: the kernel learner needs real-valued states (StateDim > 0)")
	}
	set, err := l.settings()
	if err != nil {
		return nil, err
	}
	if err := checkNeuralData(d); err != nil {
		return nil, err
	}
	// The two passes of kernel_stream.go, in memory: the first fixes the
	// scaling, the bandwidth, the centres and the frequencies, the second
	// sums the loss per fold.
	prep, err := l.NewPrep(d.StateDim, gamma)
	if err != nil {
		return nil, err
	}
	f, err := kernelloss.FirstPass(d, prep.Add, prep.Features)
	if err != nil {
		return nil, err
	}
	phi, psi := f.maps()
	if vt != nil {
		f.test = vt.forKernel(gamma, StartMean(d, vt.v)) // the second pass's loss, as a stream's with KernelFeatures.WithValue
	}
	kd := kernelTransitions(d, f)
	if kd.len() < 2 {
		return nil, fmt.Errorf("ratio: %d transitions, need at least 2", kd.len())
	}
	cbar := stateMean(d, gamma, f.Mean, f.Scale, phi, set.workers)
	folds := accumulate(kd, psi, phi, set.workers)
	model := &KernelModel{Mean: f.Mean, Scale: f.Scale, Bandwidth: f.Bandwidth, LossBandwidths: f.LossBandwidths,
		Centres: f.Centres, Widths: f.Widths, KernelFeatures: psi.dim(), Transitions: kd.len(), Steps: d.NumSteps()}
	if err := l.solveSums(model, folds, cbar); err != nil {
		return nil, err
	}
	if l.Signed {
		w, err := model.StepRatios(d)
		if err != nil {
			return nil, err
		}
		model.Negative, model.NegativeMass = countNegative(w, nil)
	}
	return model, nil
}

// countNegative returns how many of the w[j] with use(j) (all if use is
// nil) are negative, and their share of the total |w[j]|.
func countNegative(w []float64, use func(j int) bool) (n int, mass float64) {
	var neg, abs float64
	for j, v := range w {
		if use != nil && !use(j) {
			continue
		}
		abs += math.Abs(v)
		if v < 0 {
			n++
			neg -= v
		}
	}
	if abs > 0 {
		mass = neg / abs
	}
	return n, mass
}

// fourier is the random Fourier feature map psi of a Gaussian kernel (or
// an equal mixture of Gaussian kernels) with cosine-sine pairs (see
// Kernel).
type fourier struct {
	in, m int
	omega []float64 // m x in
	scale float64
}

// newFourier draws the frequencies of features/2 cosine-sine pairs; pair
// l has bandwidth h scales[l mod len(scales)], so that psi(x)^T psi(y)
// approximates the equal mixture of the Gaussian kernels of bandwidths
// h scales[j] (the spectral density of a mixture is the mixture of the
// spectral densities; dealing the pairs in turn stratifies the draw).
// With scales = {1} the draws are those of the single kernel.
func newFourier(rng *rand.Rand, in, features int, h float64, scales []float64) *fourier {
	m := features / 2
	f := &fourier{in: in, m: m, omega: make([]float64, m*in), scale: math.Sqrt(1 / float64(m))}
	for l := range m {
		hl := h * scales[l%len(scales)]
		for k := range in {
			f.omega[l*in+k] = rng.NormFloat64() / hl
		}
	}
	return f
}

func (f *fourier) dim() int { return 2 * f.m }

func (f *fourier) features(x, out []float64) {
	for j := range f.m {
		s, c := math.Sincos(kernelloss.Dot(f.omega[j*f.in:(j+1)*f.in], x))
		out[j] = f.scale * c
		out[f.m+j] = f.scale * s
	}
}

// bumps is the feature map phi of w: the constant 1, then a Gaussian bump
// per centre.
type bumps struct {
	dim     int
	centres []float64 // m x dim
	widths  []float64
	inv     []float64 // 1/(2 width^2)
}

// scaled returns h times every entry of s.
func scaled(h float64, s []float64) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = h * v
	}
	return out
}

func invWidths(w []float64) []float64 {
	inv := make([]float64, len(w))
	for j, v := range w {
		inv[j] = 1 / (2 * v * v)
	}
	return inv
}

// size returns the number of features, 1 + the number of centres.
func (b *bumps) size() int { return len(b.inv) + 1 }

func (b *bumps) features(x, out []float64) {
	out[0] = 1
	for j, inv := range b.inv {
		c := b.centres[j*b.dim : (j+1)*b.dim]
		s := 0.0
		for k, v := range x {
			s += (v - c[k]) * (v - c[k])
		}
		out[j+1] = math.Exp(-s * inv)
	}
}

// kernelData is the set of transitions of the loss, scaled, with the
// dummies and weights of the discounted case and the fold of each.
type kernelData struct {
	dim     int
	s, next []float64 // n x dim
	beta    []float64
	rho     []float64
	dummy   []bool
	fold    []int8
	// test, if not nil, is the value test's coefficient of every term
	// (valueTest.coef; 0 for a dummy).
	test []float64
}

func (kd *kernelData) len() int { return len(kd.rho) }

// kernelTransitions lists the transitions of d, scaled: step t with a
// next state has rho = gamma^(t+1), and for gamma < 1 every episode starts
// with a dummy transition into its first state of weight 1. The folds are
// f's (KernelFeatures.foldOf, kernelloss.FoldOf): an episode's is a hash
// of its id, or with fewer than kernelFolds non-empty episodes step t of
// an episode of T steps is in fold floor(kernelFolds t / T).
//
// With a value test (f's, Kernel.WithValue), every transition also holds
// the test's entry: the fitted value at its next state (at s_0 for a
// dummy) over the test's scale, 0 where the value is not finite.
func kernelTransitions(d *dataset.Dataset, f *KernelFeatures) *kernelData {
	gamma, mean, scale, vt := f.Gamma, f.Mean, f.Scale, f.test
	dim := d.StateDim
	kd := &kernelData{dim: dim}
	sx := make([]float64, dim)
	nx := make([]float64, dim)
	scaleTo := func(dst, s []float64) {
		for k, v := range s {
			dst[k] = (v - mean[k]) / scale[k]
		}
	}
	add := func(s, next []float64, beta, rho float64, dummy bool, fold int) {
		kd.s = append(kd.s, s...)
		kd.next = append(kd.next, next...)
		kd.beta = append(kd.beta, beta)
		kd.rho = append(kd.rho, rho)
		kd.dummy = append(kd.dummy, dummy)
		kd.fold = append(kd.fold, int8(fold))
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		T := hi - lo
		if T == 0 {
			continue
		}
		idh := fnv1a(d.IDs[e])
		fold := func(t int) int { return f.foldOf(idh, t, T) }
		if gamma < 1 {
			scaleTo(sx, d.ObsAt(lo))
			add(sx, sx, 0, 1, true, fold(0))
			if vt != nil {
				kd.test = append(kd.test, 0)
			}
		}
		g := gamma // gamma^(t+1)
		for j := lo; j < hi; j++ {
			if next, ok := d.NextObs(e, j); ok && g > 0 {
				scaleTo(sx, d.ObsAt(j))
				scaleTo(nx, next)
				beta := math.Exp(d.LogTarget[j] - d.LogBehavior[j])
				add(sx, nx, beta, g, false, fold(j-lo))
				if vt != nil {
					kd.test = append(kd.test, vt.coef(d, e, j, gamma, beta))
				}
			}
			g *= gamma
		}
	}
	return kd
}

// stateMean returns cbar, the gamma^t-weighted mean of phi over the logged
// states (an episode's last step in an absorbing state kept for ever
// weighs its tail, Dataset.DiscountTail).
func stateMean(d *dataset.Dataset, gamma float64, mean, scale []float64, phi *bumps, workers int) []float64 {
	dw := phi.size()
	n := d.NumSteps()
	g := d.Discounts(gamma)
	const chunk = 1024
	nChunks := (n + chunk - 1) / chunk
	sums := make([][]float64, kernelloss.Groups)
	kernelloss.Parallel(workers, func(p int) {
		s := make([]float64, dw+1) // sum g phi, then sum g
		x := make([]float64, d.StateDim)
		f := make([]float64, dw)
		for c := p; c < nChunks; c += kernelloss.Groups {
			for j := c * chunk; j < min(n, (c+1)*chunk); j++ {
				for k, v := range d.ObsAt(j) {
					x[k] = (v - mean[k]) / scale[k]
				}
				phi.features(x, f)
				for i, v := range f {
					s[i] += g[j] * v
				}
				s[dw] += g[j]
			}
		}
		sums[p] = s
	})
	out := make([]float64, dw+1)
	for _, s := range sums {
		for i, v := range s {
			out[i] += v
		}
	}
	for i := range dw {
		out[i] /= out[dw]
	}
	return out[:dw]
}

// setLossRow completes row r of ch, one term of the loss with weight rho
// whose test vector (lossVector) is in ch.L: the row is scaled by rho, and
// Delta is 1 - w(s_0) for a dummy (fs nil) or beta w(s) - w(s') for a
// step, from the bumps' features fs of s and fn of s'. It adds the term's
// weight to a's normalisers. The in-memory accumulation and the second
// pass over a stream (kernel_stream.go) both build their rows with it.
// The test vector has unit norm (lossVector), so rho |l| is rho.
func setLossRow(a *kernelloss.Quadratic, ch *kernelloss.Chunk, r int, rho, beta float64, fs, fn []float64) {
	dk, dw := len(ch.L)/len(ch.C), len(fn)
	pr := ch.L[r*dk : (r+1)*dk]
	for q := range pr {
		pr[q] *= rho
	}
	gr, rr := ch.G[r*dw:(r+1)*dw], ch.R[r*dw:(r+1)*dw]
	if fs == nil { // Delta = 1 - w(s_0)
		for q := range gr {
			gr[q] = -fn[q]
		}
		ch.C[r] = 1
	} else { // Delta = beta w(s) - w(s')
		for q := range gr {
			gr[q] = beta*fs[q] - fn[q]
		}
		ch.C[r] = 0
	}
	for q := range rr {
		rr[q] = rho * gr[q]
	}
	ch.RC[r] = rho * ch.C[r]
	a.Z += rho
	a.Z2 += rho * rho
	a.H0 += ch.RC[r] * ch.RC[r]
}

// StartMean returns the mean of v (a value at every step of d) over the
// first steps of d's episodes where it is finite, 0 if none is: the
// value model's answer, over 1 - gamma, that the kernel's value test
// reads (KernelFeatures.WithValue).
func StartMean(d *dataset.Dataset, v []float64) float64 {
	sum, n := 0.0, 0
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		if lo < hi && lo < len(v) && !math.IsNaN(v[lo]) && !math.IsInf(v[lo], 0) {
			sum += v[lo]
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// forKernel returns the value test as the kernel loss reads it
// (setValueRow), with start the mean value at the episodes' first states
// (StartMean): scaled by the root mean square of its coefficients
// (gamma v(s'_j) - v(s_j) + (1 - gamma) start) / gamma over the steps
// where they are finite, so that the test's entries weigh as one of the
// kernel's directions (k(x, x) = 1), as Neural's unit-diagonal entries
// do. Scaled by v's own root mean square (about 1/(1 - gamma) times
// larger), the test moved discounted Pendulum's estimate (seed 1) from
// +0.43 to +0.16 of the truth; so scaled, to +0.04. Where no
// coefficient is finite and non-zero it keeps vt's scale.
func (vt *valueTest) forKernel(gamma, start float64) *valueTest {
	out := &valueTest{v: vt.v, next: vt.next, scale: vt.scale, start: start}
	ss, n := 0.0, 0
	for j, x := range vt.v {
		u := (gamma*vt.next[j] - x + (1-gamma)*start) / gamma
		if !math.IsNaN(u) && !math.IsInf(u, 0) {
			ss += u * u
			n++
		}
	}
	if n > 0 && ss > 0 && !math.IsInf(ss, 0) {
		out.scale = math.Sqrt(ss / float64(n))
	}
	return out
}

// coef is the value test's coefficient of w(s_j) in the transition term
// of step j, of episode e of d, in the kernel loss (vt from forKernel),
// for setValueRow:
//
//	beta_j (gamma v(s'_j) - v(s_j) + (1 - gamma) start) / (gamma scale),
//
// times the estimate's tail weight at an absorbing episode's last step.
// With the transition's weight rho = gamma^(t+1) the test's moment is
//
//	sum_t gamma^t beta_t w(s_t) (gamma v(s_(t+1)) - v(s_t) + (1 - gamma) start),
//
// MWL's (Uehara et al. 2020, eq. 4, whose estimate's error is the loss
// at f = V, their Lemma 1) in the self-normalised form of the ratio's
// estimate: where it is zero and v is the target's value, the estimate
// (the rewards under the same weights, normalised) is (1 - gamma) start,
// v's own answer, up to the temporal-difference noise the weights
// average. The kernel's own test functions read the backward form of Liu
// et al. (2018); at f = v that form differs from this one by
// sum_t gamma^t w_t (beta_t - 1) v(s_t), zero in expectation but, with
// |v| about 1/(1 - gamma) times the rewards, noise larger than the error
// sought (discounted Pendulum, seed 1: a fit holding the backward moment
// erred by +0.43, this one by +0.04). MWL's own d0 form (v(s_0) in place
// of the normaliser) is exact only for episodes long enough that
// gamma^T vanishes: on the point mass (T = 100, gamma^T = 0.37) it
// pulled the estimate towards truth / (1 - gamma^T).
func (vt *valueTest) coef(d *dataset.Dataset, e, j int, gamma, beta float64) float64 {
	u := beta * finiteOr0((gamma*vt.next[j]-vt.v[j]+(1-gamma)*vt.start)/(gamma*vt.scale))
	if _, hi := d.Span(e); j == hi-1 {
		u *= d.DiscountTail(e, gamma) // the estimate's weight of the state kept for ever
	}
	return u
}

// setValueRow writes row r of ch: the value test's entry of a
// transition's loss term of weight rho, Delta = u w(x) with u its
// coefficient (valueTest.coef), from the bumps' features fs of x. The row
// tests the entry after the random features only. It adds nothing to the
// sums' weights Z, Z2 (it is the same term as the row before it, whose
// test vector it completes) nor to H0 (it has no constant).
func setValueRow(ch *kernelloss.Chunk, r int, rho, u float64, fs []float64) {
	dk, dw := len(ch.L)/len(ch.C), len(fs)
	pr := ch.L[r*dk : (r+1)*dk]
	clear(pr)
	pr[dk-1] = rho
	gr, rr := ch.G[r*dw:(r+1)*dw], ch.R[r*dw:(r+1)*dw]
	for k, x := range fs {
		gr[k] = u * x
		rr[k] = rho * gr[k]
	}
	ch.C[r], ch.RC[r] = 0, 0
}

// lossVector writes to row the loss's test vector of a term whose scaled
// next state is x: the random features psi(x), of unit norm, and, if
// tested, a 0 after them (the value test's entry, which setValueRow's row
// holds). The in-memory accumulation and the stream's second pass both
// form their rows with it.
func lossVector(psi *fourier, x, row []float64, tested bool) {
	if !tested {
		psi.features(x, row)
		return
	}
	psi.features(x, row[:len(row)-1])
	row[len(row)-1] = 0
}

// accumulate returns the sums of the transitions of every fold, in one
// pass over the data: l_i = psi(x'_i) (and the value test's entry, with
// one), h_i = beta_i phi(x_i) - phi(x'_i) and c_i = 0 for a transition,
// h_i = -phi(x_0) and c_i = 1 for a dummy.
func accumulate(kd *kernelData, psi *fourier, phi *bumps, workers int) []*kernelloss.Quadratic {
	dk, dw := psi.dim(), phi.size()
	if kd.test != nil {
		dk++ // the value test's entry, after the random features
	}
	tested := kd.test != nil
	return kernelloss.AccumulateFolds(kd.fold, kernelFolds, dk, dw, workers, func() func(a *kernelloss.Quadratic, rows []int) {
		fs := make([]float64, dw) // phi(x_i)
		fn := make([]float64, dw) // phi(x'_i)
		capacity := kernelloss.ChunkLen
		if tested {
			capacity *= 2 // a term's second row holds the value test (setValueRow)
		}
		ch := kernelloss.NewChunk(capacity, dk, dw)
		return func(a *kernelloss.Quadratic, rows []int) {
			prev := -1 // the previous row, whose phi(x') is in fn
			n := 0
			for _, i := range rows {
				rho, beta := kd.rho[i], kd.beta[i]
				s, next := kd.s[i*kd.dim:(i+1)*kd.dim], kd.next[i*kd.dim:(i+1)*kd.dim]
				lossVector(psi, next, ch.L[n*dk:(n+1)*dk], tested)
				if !kd.dummy[i] {
					// Along an episode x_i is the previous x': reuse its features.
					if prev >= 0 && slices.Equal(s, kd.next[prev*kd.dim:(prev+1)*kd.dim]) {
						copy(fs, fn)
					} else {
						phi.features(s, fs)
					}
				}
				phi.features(next, fn)
				prev = i
				var from []float64 // nil for the dummy: Delta = 1 - w(s_0)
				if !kd.dummy[i] {
					from = fs
				}
				setLossRow(a, ch, n, rho, beta, from, fn)
				n++
				if tested && from != nil {
					setValueRow(ch, n, rho, kd.test[i], from)
					n++
				}
			}
			a.Accumulate(ch, n)
		}
	})
}

// negativeWarning says that a signed ratio is negative at n of the total
// logged units (what names them, why explains the sign), their negative
// values mass of the total |w|, in words that scale with both: up to 5%
// of the units may be noise in the tails; beyond, no density ratio is
// negative, and a fit negative at 12-44% of the transitions (minimax
// weights on nonlinear worlds) moved its estimate away from the truth
// even on the target's own logs. But where the target rarely goes the
// true ratio is near 0, and a linear fit dips a little below it there:
// an audit's nearly deterministic target had w about 0.02-0.05 at two
// thirds of the logged pairs, and mwl, the most accurate estimator
// there, was negative at 30-37% of them on every run. So beyond 5% of
// the units the warning is strong only when their values carry more
// than 5% of the total |w|; below, it says they are small.
func negativeWarning(n, total int, mass float64, what, why string) string {
	share := float64(n) / float64(max(total, 1))
	switch {
	case share <= 0.05:
		return fmt.Sprintf("the learned ratio w is negative at %d of the %d logged %s (%s); so few may be noise in the tails", n, total, what, why)
	case mass <= 0.05:
		return fmt.Sprintf("the learned ratio w is negative at %d of the %d logged %s, %.1f%% of them (%s), but small there: they carry %.1f%% of the total |w|, values near 0 where the target rarely goes, which move the estimate little", n, total, what, 100*share, why, 100*mass)
	}
	return fmt.Sprintf("the learned ratio w is negative at %d of the %d logged %s, %.1f%% of them, carrying %.1f%% of the total |w| (%s): no density ratio is negative, so w is poorly determined by the data and its estimate may be far off", n, total, what, 100*share, 100*mass, why)
}
