package ratio

import (
	"fmt"
	"math"
	"runtime"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
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
//
// For real actions (ActionDim > 0) there is one block, w(s, a) =
// Coef[0] + sum_j Coef[j + 1] exp(-||z - c_j||^2 / (2 Widths[j]^2)), z
// the scaled (state, action) vector, Mean and Scale of length
// StateDim + ActionDim.
type PairKernelModel struct {
	Mean, Scale     []float64
	NumActions      int
	ActionDim       int
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
	// kernel loss at the solution; Negative the transitions with w < 0,
	// and NegativeMass their share of the total |w| over the transitions.
	MeanW        float64
	Loss         float64
	Negative     int
	NegativeMass float64
}

// MeanRatio returns E_D[w].
func (m *PairKernelModel) MeanRatio() float64 { return m.MeanW }

func (m *PairKernelModel) bumps() *bumps {
	return &bumps{dim: len(m.Mean), centres: m.Centres, inv: invWidths(m.Widths)}
}

// StepRatios returns w(s_j, a_j) for every step j of d.
func (m *PairKernelModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	if d.StateDim+d.ActionDim != len(m.Mean) || d.ActionDim != m.ActionDim || d.NumActions != m.NumActions {
		return nil, fmt.Errorf("ratio: logs of %d-dimensional states, %d actions and %d-dimensional actions, the model's are %d, %d and %d",
			d.StateDim, d.NumActions, d.ActionDim, len(m.Mean)-m.ActionDim, m.NumActions, m.ActionDim)
	}
	phi := m.bumps()
	k := phi.size()
	n := d.NumSteps()
	out := make([]float64, n)
	const chunk = 1024
	nChunks := (n + chunk - 1) / chunk
	kernelloss.Parallel(runtime.GOMAXPROCS(0), func(p int) {
		x := make([]float64, len(m.Mean))
		f := make([]float64, k)
		for c := p; c < nChunks; c += kernelloss.Groups {
			for j := c * chunk; j < min(n, (c+1)*chunk); j++ {
				for i, v := range d.ObsAt(j) {
					x[i] = (v - m.Mean[i]) / m.Scale[i]
				}
				a := 0
				if m.ActionDim > 0 {
					for i, v := range d.ActionVecAt(j) {
						k := d.StateDim + i
						x[k] = (v - m.Mean[k]) / m.Scale[k]
					}
				} else {
					a = int(d.Action[j])
				}
				phi.features(x, f)
				out[j] = kernelloss.Dot(f, m.Coef[a*k:(a+1)*k])
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
		out = append(out, negativeWarning(m.Negative, m.Transitions, m.NegativeMass, "transitions", "w is linear in its features, not constrained to w >= 0"))
	}
	if len(m.Grid) > 0 && m.Ridge == m.Grid[len(m.Grid)-1] {
		out = append(out, fmt.Sprintf("the cross-validation chose the largest ridge of its grid (%g): w is shrunk towards a function of the action alone", m.Ridge))
	}
	if m.Skipped > 0 {
		out = append(out, fmt.Sprintf("%d transitions without the target's distribution at the next state were left out", m.Skipped))
	}
	return out
}

// checkPairLogs checks that d can be fitted by a state-action kernel
// learner: real states, and discrete actions with the target's
// distributions or real actions with the target's draws (returned).
func checkPairLogs(name string, d *dataset.Dataset, gamma float64, target value.Target) (value.ActionDraws, error) {
	var draws value.ActionDraws
	switch {
	case !(gamma > 0 && gamma <= 1):
		return draws, fmt.Errorf("ratio: %s: discount %v outside (0, 1]", name, gamma)
	case d == nil || d.StateDim <= 0:
		return draws, fmt.Errorf("ratio: %s: the kernel fit needs real-valued states", name)
	case d.ActionDim > 0:
		var err error
		if draws, err = value.NewActionDraws(name, d, target); err != nil {
			return draws, fmt.Errorf("ratio: %w", err)
		}
	case d.NumActions <= 0 || target.Continuous != nil:
		return draws, fmt.Errorf("ratio: %s needs discrete actions with the target's whole distribution at every next state, or real actions with the target's draws", name)
	case target.Policy != nil:
		return draws, fmt.Errorf("ratio: %s: a tabular target policy cannot act on real-valued states; give the target_prob_k columns", name)
	case !d.HasTargetProbs():
		return draws, fmt.Errorf("ratio: %s needs the target's whole action distribution: target_prob_0, target_prob_1, ... columns", name)
	}
	for e := range d.NumEpisodes() {
		if err := checkPairEpisode(name, d, e); err != nil {
			return draws, err
		}
	}
	return draws, nil
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
// states (see MWL for the loss), in the two passes of
// pairkernel_stream.go: the first fixes the scaling, the bandwidth, the
// centres and the frequencies, the second sums the loss's moments.
func fitPairKernel(name string, d *dataset.Dataset, gamma float64, target value.Target, l PairKernel, pen pairPenalty) (*PairKernelModel, error) {
	draws, err := checkPairLogs(name, d, gamma, target)
	if err != nil {
		return nil, err
	}
	set, err := l.settings(name)
	if err != nil {
		return nil, err
	}
	prep, err := l.NewPrep(name, gamma)
	if err != nil {
		return nil, err
	}
	f, err := kernelloss.FirstPass(d, prep.Add, prep.Features)
	if err != nil {
		return nil, err
	}
	f.draws = draws
	m, err := f.momentsOf(d, set.workers)
	if err != nil {
		return nil, err
	}
	model, err := fitPairMoments(name, l, pen, f, m)
	if err != nil {
		return nil, err
	}
	w, err := model.StepRatios(d)
	if err != nil {
		return nil, err
	}
	transition := make([]bool, len(w))
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			_, transition[j] = d.NextObs(e, j)
		}
	}
	model.Negative, model.NegativeMass = countNegative(w, func(j int) bool { return transition[j] })
	return model, nil
}

// fitPairMoments is the final solve of the kernel fit on the sums of
// the second pass: with n transitions and m start states, the start
// terms get the weight rho0 = (1 - gamma) n / m (their share of the
// loss, Eq. (2)'s (1 - gamma) E_d0 against E_D's 1/n per transition);
// the penalty is MWL's ridge on the bumps' coefficients or DualDICE's
// E_D[w^2]; for gamma = 1 the constraint E_D[w] = cbar^T theta = 1.
func fitPairMoments(name string, l PairKernel, pen pairPenalty, f *PairKernelFeatures, m *PairKernelMoments) (*PairKernelModel, error) {
	if _, err := l.settings(name); err != nil {
		return nil, err
	}
	if m.Transitions < 2 {
		return nil, fmt.Errorf("ratio: %s: %d transitions, need at least 2", name, m.Transitions)
	}
	phi, psi := f.maps()
	k, nA := phi.size(), f.blocks()
	D, P := nA*psi.dim(), nA*k
	n := float64(m.Transitions)
	starts := 0.0
	for _, v := range m.StartN {
		starts += v
	}
	rho0 := 0.0
	if f.Gamma < 1 && starts > 0 {
		rho0 = (1 - f.Gamma) * n / starts
	}
	folds := make([]*kernelloss.Quadratic, len(m.Folds))
	for i, s := range m.Folds {
		c := kernelloss.NewQuadratic(D, P)
		c.Add(s)
		if rho0 > 0 {
			for q, v := range m.Start[i] {
				c.U[q] += rho0 * v
			}
			c.Z += rho0 * m.StartN[i]
			c.Z2 += rho0 * rho0 * m.StartN[i]
			c.H0 += rho0 * rho0 * m.StartSq[i]
		}
		folds[i] = c
	}
	all := kernelloss.Total(folds)
	inv := 1 / n
	cbar, second := make([]float64, P), make([]float64, P*P)
	for i, v := range m.PhiSum {
		cbar[i] = v * inv
	}
	for a := range nA {
		blk := m.Second[a*k*k : (a+1)*k*k]
		for i := range k {
			for j := i; j < k; j++ {
				v := blk[i*k+j] * inv
				second[(a*k+i)*P+a*k+j] = v
				second[(a*k+j)*P+a*k+i] = v
			}
		}
	}

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
	if f.Gamma == 1 {
		constraint = cbar
	}
	model := &PairKernelModel{Mean: f.Mean, Scale: f.Scale, NumActions: f.NumActions, ActionDim: f.ActionDim, Bandwidth: f.Bandwidth, Centres: f.Centres,
		Widths: f.Widths, KernelFeatures: D, Transitions: m.Transitions, Skipped: m.Skipped}
	nu := l.Ridge
	if nu == 0 {
		nu = DefaultPairRidge
	}
	if l.CrossValidate {
		cv, err := kernelloss.CrossValidate(all, folds, constraint, penalty, kernelRidges, !l.NonNegative, 1e-2)
		if err != nil {
			return nil, fmt.Errorf("ratio: %s: %w", name, err)
		}
		nu, model.Folds, model.Grid, model.HeldOutLoss, model.HeldOutSE = cv.Ridge, cv.Folds, cv.Grid, cv.Loss, cv.SE
	}
	qp, err := kernelloss.NewQP(all, constraint, penalty)
	if err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	if model.Coef, _, err = qp.Solve(nu, !l.NonNegative, nil); err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	model.Ridge, model.Lambda = nu, nu*qp.Scale
	model.Loss = all.VLoss(model.Coef)
	model.MeanW = kernelloss.Dot(cbar, model.Coef)
	return model, nil
}
