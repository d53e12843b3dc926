package ratio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/minimax"
	"github.com/ihope-ope/ihope/value"
)

// PairKernel holds the settings of the closed-form fits of MWL and
// DualDICE on real-valued states and discrete actions (see MWL). The zero
// value is ready to use.
type PairKernel struct {
	// Seed seeds the draws (the bandwidth sample, the centres of the
	// bumps and the kernel's frequencies).
	Seed uint64
	// KernelFeatures is D_k, the random Fourier features of the state
	// kernel per action (rounded up to an even number). If 0, 64: on the
	// discrete-action linear-Gaussian problem 64 and 128 gave the same
	// RMSE to 1% (n = 80, 320, 8 seeds), and the pass over the data costs
	// D_k (m + 1) NumActions per transition.
	KernelFeatures int
	// Centres is m, the number of bumps of w per action. If 0, 64.
	Centres int
	// Bandwidth is the kernel bandwidth h in scaled units. If 0, the
	// median heuristic.
	Bandwidth float64
	// BandwidthSample is the number of next states whose pairwise
	// distances give the median heuristic. If 0, 1000.
	BandwidthSample int
	// Ridge is the relative ridge nu. If 0, DefaultPairRidge is used. It
	// must not be negative.
	Ridge float64
	// CrossValidate chooses nu instead by Kernel's rule (5-fold
	// cross-validation of the held-out U-statistic of the loss over the
	// grid 1e-6 ... 100, one-standard-error rule); measured worse (see
	// MWL).
	CrossValidate bool
	// NonNegative constrains the coefficients, and so w, to be
	// non-negative (as ratio.Kernel's are); measured worse (see MWL).
	NonNegative bool
	// Workers is the number of goroutines of the passes over the data.
	// If 0, GOMAXPROCS. It does not change the result.
	Workers int
}

// DefaultPairRidge is the relative ridge of the kernel fits of MWL and
// DualDICE, chosen by measurement (see MWL).
const DefaultPairRidge = 1e-6

// pairKernelStream is the second word of the PCG state of the draws of
// the state-action kernel fits ("pair-krn").
const pairKernelStream = 0x706169722d6b726e

// PairKernelModel is a learned state-action ratio of real-valued states
// and discrete actions,
//
//	w(s, a) = Coef[a (m+1)] + sum_j Coef[a (m+1) + j + 1] exp(-||x - c_j||^2 / (2 Widths[j]^2)),   x = (s - Mean)/Scale.
type PairKernelModel struct {
	Mean, Scale     []float64
	NumActions      int
	Bandwidth       float64
	Centres, Widths []float64
	Coef            []float64
	KernelFeatures  int

	// Ridge is the relative ridge used and Lambda the absolute one; Grid,
	// HeldOutLoss and HeldOutSE the cross-validation's record (nil when
	// Ridge was fixed), Folds the folds that held data.
	Ridge, Lambda                float64
	Grid, HeldOutLoss, HeldOutSE []float64
	Folds                        int

	// Transitions is the number of logged transitions the fit used and
	// Skipped those without the target's distribution at the next state.
	Transitions, Skipped int
	// MeanW is E_D[w] over the transitions; Loss the V-statistic of the
	// kernel loss at the solution; Negative the transitions with w < 0.
	MeanW    float64
	Loss     float64
	Negative int
}

// MeanRatio returns E_D[w].
func (m *PairKernelModel) MeanRatio() float64 { return m.MeanW }

func (m *PairKernelModel) bumps() *bumps {
	return &bumps{dim: len(m.Mean), centres: m.Centres, inv: invWidths(m.Widths)}
}

// StepRatios returns w(s_j, a_j) for every step j of d.
func (m *PairKernelModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	if d.StateDim != len(m.Mean) || d.ActionDim != 0 || d.NumActions != m.NumActions {
		return nil, fmt.Errorf("ratio: logs of %d-dimensional states and %d actions, the model's are %d and %d",
			d.StateDim, d.NumActions, len(m.Mean), m.NumActions)
	}
	phi := m.bumps()
	k := phi.size()
	n := d.NumSteps()
	out := make([]float64, n)
	const chunk = 1024
	nChunks := (n + chunk - 1) / chunk
	minimax.Parallel(runtime.GOMAXPROCS(0), func(p int) {
		x := make([]float64, len(m.Mean))
		f := make([]float64, k)
		for c := p; c < nChunks; c += minimax.Groups {
			for j := c * chunk; j < min(n, (c+1)*chunk); j++ {
				for i, v := range d.ObsAt(j) {
					x[i] = (v - m.Mean[i]) / m.Scale[i]
				}
				phi.features(x, f)
				a := int(d.Action[j])
				out[j] = minimax.Dot(f, m.Coef[a*k:(a+1)*k])
			}
		}
	})
	return out, nil
}

// Warnings says when w is negative at logged transitions and when the
// cross-validation chose the largest ridge.
func (m *PairKernelModel) Warnings() []string {
	var out []string
	if m.Negative > 0 {
		out = append(out, fmt.Sprintf("the learned ratio w is negative at %d of the %d logged transitions (w is linear in its features, not constrained to w >= 0; a few are noise in the tails)",
			m.Negative, m.Transitions))
	}
	if len(m.Grid) > 0 && m.Ridge == m.Grid[len(m.Grid)-1] {
		out = append(out, fmt.Sprintf("the cross-validation chose the largest ridge of its grid (%g): w is shrunk towards a function of the action alone", m.Ridge))
	}
	if m.Skipped > 0 {
		out = append(out, fmt.Sprintf("%d transitions without the target's distribution at the next state were left out", m.Skipped))
	}
	return out
}

// pairData are the logged transitions and start states of a kernel fit,
// scaled.
type pairData struct {
	dim, nA   int
	s, next   []float64 // n x dim
	a         []int32
	piNext    []float64 // n x nA
	fold      []int8    // transitions, then starts
	s0, pi0   []float64 // per non-empty episode
	n, starts int
	skipped   int
}

// newPairData collects the transitions of d (those whose next state and
// target distribution there are known) and the episodes' start states,
// with the folds of Kernel's cross-validation.
func newPairData(d *dataset.Dataset, mean, scale []float64, cv bool) *pairData {
	dim, nA := d.StateDim, d.NumActions
	pd := &pairData{dim: dim, nA: nA}
	nonEmpty := 0
	for e := range d.NumEpisodes() {
		if d.Len(e) > 0 {
			nonEmpty++
		}
	}
	byEpisode := nonEmpty >= kernelFolds
	scaled := func(dst, s []float64) []float64 {
		for k, v := range s {
			dst = append(dst, (v-mean[k])/scale[k])
		}
		return dst
	}
	var fold0 []int8
	k := 0
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		T := hi - lo
		if T == 0 {
			continue
		}
		fold := func(t int) int8 {
			if !cv {
				return 0
			}
			if byEpisode {
				return int8(k % kernelFolds)
			}
			return int8(t * kernelFolds / T)
		}
		pd.s0 = scaled(pd.s0, d.ObsAt(lo))
		pd.pi0 = append(pd.pi0, d.TargetProbsAt(lo)...)
		fold0 = append(fold0, fold(0))
		for j := lo; j < hi; j++ {
			next, ok := d.NextObs(e, j)
			if !ok {
				continue
			}
			pn, ok := d.NextTargetProbs(e, j)
			if !ok {
				pd.skipped++
				continue
			}
			pd.s = scaled(pd.s, d.ObsAt(j))
			pd.next = scaled(pd.next, next)
			pd.a = append(pd.a, d.Action[j])
			pd.piNext = append(pd.piNext, pn...)
			pd.fold = append(pd.fold, fold(j-lo))
		}
		k++
	}
	pd.n, pd.starts = len(pd.a), len(fold0)
	pd.fold = append(pd.fold, fold0...)
	return pd
}

// checkPairLogs checks that d can be fitted by a state-action kernel
// learner: real states, discrete actions, the target's distributions.
func checkPairLogs(name string, d *dataset.Dataset, gamma float64, target value.Target) error {
	switch {
	case !(gamma > 0 && gamma <= 1):
		return fmt.Errorf("ratio: %s: discount %v outside (0, 1]", name, gamma)
	case d == nil || d.StateDim <= 0:
		return fmt.Errorf("ratio: %s: the kernel fit needs real-valued states", name)
	case d.ActionDim != 0 || d.NumActions <= 0 || target.Continuous != nil:
		return fmt.Errorf("ratio: %s needs discrete actions (the target's whole distribution at every next state)", name)
	case target.Policy != nil:
		return fmt.Errorf("ratio: %s: a tabular target policy cannot act on real-valued states; give the target_prob_k columns", name)
	case !d.HasTargetProbs():
		return fmt.Errorf("ratio: %s needs the target's whole action distribution: target_prob_0, target_prob_1, ... columns", name)
	}
	// The states, next states and rewards must be finite; the behavior's
	// probabilities are never read.
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			next, ok := d.NextObs(e, j)
			if !finiteAll(d.ObsAt(j)) || ok && !finiteAll(next) || math.IsNaN(d.Reward[j]) || math.IsInf(d.Reward[j], 0) {
				return fmt.Errorf("ratio: %s: episode %q step %d: state, next state or reward not finite", name, d.IDs[e], j-lo)
			}
			if a := d.Action[j]; a < 0 || int(a) >= d.NumActions {
				return fmt.Errorf("ratio: %s: episode %q step %d: action %d outside 0..%d", name, d.IDs[e], j-lo, a, d.NumActions-1)
			}
		}
	}
	return nil
}

func finiteAll(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// pairPenalty says how a kernel fit penalises w: MWL's ridge on the
// bumps' coefficients (the per-action constants free), or DualDICE's
// E_D[w^2].
type pairPenalty int

const (
	penaltyBumps pairPenalty = iota
	penaltySecondMoment
)

// fitPairKernel is the closed-form fit shared by MWL and DualDICE on real
// states (see MWL for the loss).
func fitPairKernel(name string, d *dataset.Dataset, gamma float64, target value.Target, l PairKernel, pen pairPenalty) (*PairKernelModel, error) {
	if err := checkPairLogs(name, d, gamma, target); err != nil {
		return nil, err
	}
	dk, m, workers := l.KernelFeatures, l.Centres, l.Workers
	if dk < 0 || m < 0 || workers < 0 || l.BandwidthSample < 0 || !(l.Ridge >= 0) || math.IsInf(l.Ridge, 0) ||
		!(l.Bandwidth >= 0) || math.IsInf(l.Bandwidth, 0) {
		return nil, fmt.Errorf("ratio: %s: settings %+v, want finite values >= 0", name, l)
	}
	if dk == 0 {
		dk = 64
	}
	dk += dk % 2
	if m == 0 {
		m = 64
	}
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sample := l.BandwidthSample
	if sample == 0 {
		sample = 1000
	}
	rng := rand.New(rand.NewPCG(l.Seed, pairKernelStream))
	mean, scale := minimax.Scaling(d)
	pd := newPairData(d, mean, scale, l.CrossValidate)
	if pd.n < 2 {
		return nil, fmt.Errorf("ratio: %s: %d transitions, need at least 2", name, pd.n)
	}
	h := l.Bandwidth
	if h == 0 {
		var err error
		tr := &transitions{d: pd.dim, next: pd.next, dummy: make([]bool, pd.n)}
		if h, err = medianBandwidth(rng, tr, sample); err != nil {
			return nil, fmt.Errorf("ratio: %s: all sampled next states coincide; set the bandwidth", name)
		}
	}
	phi := newBumps(rng, d, mean, scale, m, h)
	psi := newFourier(rng, pd.dim, dk, h, []float64{1})
	k, nA := phi.size(), pd.nA
	D, P := nA*psi.dim(), nA*k
	folds := pairKernelSums(pd, gamma, psi, phi, workers)
	all := minimax.Total(folds)
	cbar, second := pairMoments(pd, phi, workers)

	var penalty, constraint []float64
	switch pen {
	case penaltyBumps:
		penalty = make([]float64, P*P)
		for j := range P {
			if j%k != 0 {
				penalty[j*P+j] = 1
			}
		}
	case penaltySecondMoment:
		// E_D[w^2], plus a jitter of 1e-6 of its mean diagonal on every
		// coefficient: bumps that overlap are nearly collinear on the
		// data, and the directions that change w nowhere on them are
		// seen neither by the loss nor by E_D[w^2].
		penalty = second
		tr := 0.0
		for j := range P {
			tr += second[j*P+j]
		}
		for j := range P {
			penalty[j*P+j] += 1e-6 * tr / float64(P)
		}
	}
	if gamma == 1 {
		constraint = cbar
	}
	model := &PairKernelModel{Mean: mean, Scale: scale, NumActions: nA, Bandwidth: h, Centres: phi.centres,
		Widths: phi.widths, KernelFeatures: D, Transitions: pd.n, Skipped: pd.skipped}
	nu := l.Ridge
	if nu == 0 {
		nu = DefaultPairRidge
	}
	if l.CrossValidate {
		cv, err := minimax.CrossValidate(all, folds, constraint, penalty, kernelRidges, !l.NonNegative, 1e-2)
		if err != nil {
			return nil, fmt.Errorf("ratio: %s: %w", name, err)
		}
		nu, model.Folds, model.Grid, model.HeldOutLoss, model.HeldOutSE = cv.Ridge, cv.Folds, cv.Grid, cv.Loss, cv.SE
	}
	qp, err := minimax.NewQP(all, constraint, penalty)
	if err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	if model.Coef, _, err = qp.Solve(nu, !l.NonNegative, nil); err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	model.Ridge, model.Lambda = nu, nu*qp.Scale
	model.Loss = all.VLoss(model.Coef)
	model.MeanW = minimax.Dot(cbar, model.Coef)
	w, err := model.StepRatios(d)
	if err != nil {
		return nil, err
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if _, ok := d.NextObs(e, j); ok && w[j] < 0 {
				model.Negative++
			}
		}
	}
	return model, nil
}

// pairKernelSums accumulates the sums of MWL's kernel loss per fold:
// transition i (rho = 1) has the test vector
// l_i = gamma psi(s'_i, pi) - psi(s_i, a_i), whose block b is
// gamma pi(b|s'_i) psi(x'_i) - 1[b = a_i] psi(x_i), and the coefficient
// vector h_i = phi(s_i, a_i), the bumps of x_i in block a_i; for
// gamma < 1 every start state adds a term of weight
// rho = (1 - gamma) n / m with l = psi(s_0, pi), h = 0 and c = 1.
func pairKernelSums(pd *pairData, gamma float64, psi *fourier, phi *bumps, workers int) []*minimax.Sums {
	dk, k, nA, dim := psi.dim(), phi.size(), pd.nA, pd.dim
	D, P := nA*dk, nA*k
	rho0 := 0.0
	if gamma < 1 {
		rho0 = (1 - gamma) * float64(pd.n) / float64(pd.starts)
	}
	return minimax.AccumulateFolds(pd.fold, kernelFolds, D, P, workers, func() func(a *minimax.Sums, rows []int) {
		ch := minimax.NewChunk(minimax.ChunkLen, D, k)
		ps, pn := make([]float64, dk), make([]float64, dk)
		f := make([]float64, k)
		return func(a *minimax.Sums, rows []int) {
			for act := range nA {
				r := 0
				for _, i := range rows {
					if i >= pd.n {
						if act > 0 || rho0 == 0 {
							continue
						}
						// A start: U += rho0 psi(s_0, pi).
						e := i - pd.n
						psi.features(pd.s0[e*dim:(e+1)*dim], pn)
						sq := 0.0
						for b := range nA {
							pb := pd.pi0[e*nA+b]
							for q, v := range pn {
								a.U[b*dk+q] += rho0 * pb * v
							}
							sq += pb * pb
						}
						a.Z += rho0
						a.Z2 += rho0 * rho0
						a.H0 += rho0 * rho0 * sq
						continue
					}
					if int(pd.a[i]) != act {
						continue
					}
					psi.features(pd.s[i*dim:(i+1)*dim], ps)
					psi.features(pd.next[i*dim:(i+1)*dim], pn)
					phi.features(pd.s[i*dim:(i+1)*dim], f)
					row := ch.L[r*D : (r+1)*D]
					sq := 0.0
					for b := range nA {
						g := gamma * pd.piNext[i*nA+b]
						blk := row[b*dk : (b+1)*dk]
						for q, v := range pn {
							blk[q] = g * v
						}
						if b == act {
							for q, v := range ps {
								blk[q] -= v
							}
						}
						sq += minimax.Dot(blk, blk)
					}
					nl := math.Sqrt(sq)
					copy(ch.G[r*k:(r+1)*k], f)
					for q, v := range f {
						ch.R[r*k+q] = nl * v
					}
					ch.C[r], ch.RC[r] = 0, 0
					a.Z++
					a.Z2++
					r++
				}
				a.AccumulateBlock(ch, r, act*k, k)
			}
		}
	})
}

// pairMoments returns cbar = E_D[phi(s, a)] and the second moment
// E_D[phi(s, a) phi(s, a)^T] (block diagonal, row-major P x P) over the
// transitions.
func pairMoments(pd *pairData, phi *bumps, workers int) (cbar, second []float64) {
	k, nA, dim := phi.size(), pd.nA, pd.dim
	P := nA * k
	sums := make([][]float64, minimax.Groups)
	const chunk = 512
	nChunks := (pd.n + chunk - 1) / chunk
	minimax.Parallel(workers, func(g int) {
		acc := make([]float64, P*P+P)
		buf := make([]float64, chunk*k)
		for c := g; c < nChunks; c += minimax.Groups {
			lo, hi := c*chunk, min(pd.n, (c+1)*chunk)
			for act := range nA {
				r := 0
				for i := lo; i < hi; i++ {
					if int(pd.a[i]) != act {
						continue
					}
					f := buf[r*k : (r+1)*k]
					phi.features(pd.s[i*dim:(i+1)*dim], f)
					for q, v := range f {
						acc[P*P+act*k+q] += v
					}
					r++
				}
				if r > 0 {
					blas64.Syrk(blas.Trans, 1, blas64.General{Rows: r, Cols: k, Stride: k, Data: buf[:r*k]}, 1,
						blas64.Symmetric{N: k, Stride: P, Data: acc[act*k*P+act*k:], Uplo: blas.Upper})
				}
			}
		}
		sums[g] = acc
	})
	tot := make([]float64, P*P+P)
	for _, s := range sums {
		for i, v := range s {
			tot[i] += v
		}
	}
	inv := 1 / float64(pd.n)
	second, cbar = tot[:P*P], tot[P*P:]
	for i := range P {
		for j := i; j < P; j++ {
			second[i*P+j] *= inv
			second[j*P+i] = second[i*P+j]
		}
		cbar[i] *= inv
	}
	return cbar, second
}
