package ope

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

// Reweighter is implemented by estimators that can evaluate many
// reweightings of one dataset's episodes quickly, as the episode bootstrap
// needs. Prepare does the per-step work once (log-weights, exponentials,
// transition indices) and returns a function that gives the estimate on
// the dataset in which episode i appears mult[i] times; the function must
// be safe for concurrent use. Prepare returns a nil function and no error
// when the estimator has no fast path for its current settings (a density
// ratio with a learner other than ratio.Tabular): the caller then builds
// each resample and calls Estimate.
//
// The function returns ErrReweight when it cannot evaluate a resample
// accurately (for example when every weight of the resample underflows
// relative to the whole dataset's largest); the caller then builds the
// resample and calls Estimate.
type Reweighter interface {
	Prepare(d *dataset.Dataset, gamma float64) (func(mult []int) (float64, error), error)
}

// ErrReweight asks the caller to evaluate a resample with Estimate.
var ErrReweight = errors.New("ope: resample needs a full evaluation")

// underflowMargin is how far (in nats) a resample's largest log-weight may
// fall below the dataset's before precomputed exponentials lose accuracy.
const underflowMargin = 600

var (
	_ Reweighter = (*Naive)(nil)
	_ Reweighter = (*TrajectoryIS)(nil)
	_ Reweighter = (*TrajectoryWIS)(nil)
	_ Reweighter = (*StepwiseIS)(nil)
	_ Reweighter = (*StepwiseWIS)(nil)
	_ Reweighter = DensityRatio{}
)

func sumMult(mult []int) int {
	m := 0
	for _, c := range mult {
		m += c
	}
	return m
}

// Prepare implements Reweighter.
func (e *Naive) Prepare(d *dataset.Dataset, gamma float64) (func([]int) (float64, error), error) {
	if _, err := e.Estimate(d, gamma); err != nil {
		return nil, err
	}
	a, err := absorbing(e.Name(), d, gamma, Horizon)
	if err != nil {
		return nil, err
	}
	d = a.d
	vals := make([]float64, d.NumEpisodes())
	for i := range vals {
		vals[i], _ = episodeValue(e.Name(), d, i, gamma)
	}
	return func(mult []int) (float64, error) {
		s := 0.0
		for i, c := range mult {
			s += float64(c) * vals[i]
		}
		return s / float64(sumMult(mult)), nil
	}, nil
}

// Prepare implements Reweighter.
func (e *TrajectoryIS) Prepare(d *dataset.Dataset, gamma float64) (func([]int) (float64, error), error) {
	return prepareTrajectory(e, d, gamma, false)
}

// Prepare implements Reweighter.
func (e *TrajectoryWIS) Prepare(d *dataset.Dataset, gamma float64) (func([]int) (float64, error), error) {
	return prepareTrajectory(e, d, gamma, true)
}

// prepareTrajectory keeps each episode's log-weight L_i and value V_i; a
// resample's estimate is then O(episodes).
func prepareTrajectory(e Estimator, d *dataset.Dataset, gamma float64, selfNormalised bool) (func([]int) (float64, error), error) {
	if _, err := e.Estimate(d, gamma); err != nil {
		return nil, err
	}
	a, err := absorbing(e.Name(), d, gamma, Horizon)
	if err != nil {
		return nil, err
	}
	d = a.d
	m := d.NumEpisodes()
	logW := make([]float64, m)
	vals := make([]float64, m)
	maxW := math.Inf(-1)
	for i := range m {
		logW[i], vals[i], _ = walkEpisode(e.Name(), d, i, gamma, nil)
		maxW = math.Max(maxW, logW[i])
	}
	ew := make([]float64, m) // exp(L_i - maxW)
	for i := range ew {
		ew[i] = math.Exp(logW[i] - maxW)
	}
	return func(mult []int) (float64, error) {
		top := math.Inf(-1)
		var sw, swv float64
		for i, c := range mult {
			if c == 0 {
				continue
			}
			top = math.Max(top, logW[i])
			sw += float64(c) * ew[i]
			swv += float64(c) * ew[i] * vals[i]
		}
		if math.IsInf(top, -1) || top < maxW-underflowMargin {
			return 0, ErrReweight // all weights zero or underflowing: let Estimate decide
		}
		if selfNormalised {
			return swv / sw, nil
		}
		return scaledMean(e.Name(), swv, maxW, sumMult(mult))
	}, nil
}

// Prepare implements Reweighter.
func (e *StepwiseIS) Prepare(d *dataset.Dataset, gamma float64) (func([]int) (float64, error), error) {
	return prepareStepwise(e, d, gamma, false)
}

// Prepare implements Reweighter.
func (e *StepwiseWIS) Prepare(d *dataset.Dataset, gamma float64) (func([]int) (float64, error), error) {
	return prepareStepwise(e, d, gamma, true)
}

// prepareStepwise keeps, for every step, exp(log w_{0:t} - M_t) with M_t
// the dataset's largest log-weight at step t, and gamma^i_t r^i_t.
func prepareStepwise(e Estimator, d *dataset.Dataset, gamma float64, selfNormalised bool) (func([]int) (float64, error), error) {
	if _, err := e.Estimate(d, gamma); err != nil {
		return nil, err
	}
	a, err := absorbing(e.Name(), d, gamma, Horizon)
	if err != nil {
		return nil, err
	}
	d = a.d
	name := e.Name()
	m := d.NumEpisodes()
	n := d.NumSteps()
	L := d.MaxLen()
	cum := make([]float64, n)
	start := d.Start
	for i := range m {
		walkEpisode(name, d, i, gamma, cum[start[i]:start[i+1]])
	}
	maxT := make([]float64, L)
	for t := range maxT {
		maxT[t] = math.Inf(-1)
	}
	for i := range m {
		for t, c := range cum[start[i]:start[i+1]] {
			maxT[t] = math.Max(maxT[t], c)
		}
	}
	ew := make([]float64, n) // exp(log w_{0:t} - maxT[t])
	gr := make([]float64, n) // gamma^i_t, then gamma^i_t r_t
	gt := make([]float64, n) // gamma^i_t
	rew := make([]float64, n)
	for i := range m {
		g, _ := discountStart(gamma, start[i+1]-start[i])
		for j := start[i]; j < start[i+1]; j++ {
			t := j - start[i]
			ew[j] = math.Exp(cum[j] - maxT[t])
			gt[j] = g
			gr[j] = g * d.Reward[j]
			rew[j] = d.Reward[j]
			g *= gamma
		}
	}
	if !selfNormalised {
		// (1/m) sum_i c_i sum_t exp(cum) gamma_t r_t with a common shift:
		// shift by max over t of maxT[t].
		top := math.Inf(-1)
		for _, x := range maxT {
			top = math.Max(top, x)
		}
		per := make([]float64, m)  // sum_t exp(cum - top) gamma_t r_t
		peak := make([]float64, m) // max_t cum - top, -Inf for a zero-weight episode
		for i := range m {
			peak[i] = math.Inf(-1)
			for t := range cum[start[i]:start[i+1]] {
				j := start[i] + t
				per[i] += math.Exp(cum[j]-top) * gr[j]
				peak[i] = math.Max(peak[i], cum[j]-top)
			}
		}
		if math.IsInf(top, -1) {
			// Every weight is zero: Estimate returns 0 on any resample.
			return func([]int) (float64, error) { return 0, nil }, nil
		}
		return func(mult []int) (float64, error) {
			s := 0.0
			best := math.Inf(-1)
			for i, c := range mult {
				if c > 0 {
					best = math.Max(best, peak[i])
					s += float64(c) * per[i]
				}
			}
			if !math.IsInf(best, -1) && best < -underflowMargin {
				return 0, ErrReweight // every weight of the resample underflows
			}
			return scaledMean(name, s, top, sumMult(mult))
		}, nil
	}
	// Step-wise WIS (see StepwiseWIS): sum_t c_t num_t / den_t over the
	// resample, with gamma^i_t exp(log w - maxT[t]) precomputed.
	for j := range ew {
		ew[j] *= gt[j]
	}
	return func(mult []int) (float64, error) {
		sums := make([]float64, 3*L)
		den, num, c := sums[:L], sums[L:2*L], sums[2*L:]
		mm := 0
		for i, cnt := range mult {
			if cnt == 0 {
				continue
			}
			mm += cnt
			fc := float64(cnt)
			for t := range ew[start[i]:start[i+1]] {
				j := start[i] + t
				den[t] += fc * ew[j]
				num[t] += fc * ew[j] * rew[j]
				c[t] += fc * gt[j]
			}
		}
		v := 0.0
		for t := range den {
			if c[t] == 0 {
				continue
			}
			if !(den[t] > 0) {
				return 0, ErrReweight // zero or underflowed Z_t: let Estimate decide
			}
			v += c[t] / float64(mm) * num[t] / den[t]
		}
		return v, nil
	}, nil
}

// Prepare implements Reweighter. With ratio.Tabular the transitions are
// indexed once (ratio.Reweighting) and every resample solves for its own
// w; other learners have no fast path.
func (e DensityRatio) Prepare(d *dataset.Dataset, gamma float64) (func([]int) (float64, error), error) {
	learner, ok := e.Learner.(ratio.Tabular)
	if !ok {
		return nil, nil
	}
	name := e.Name()
	if err := checkGamma(gamma); err != nil {
		return nil, err
	}
	if err := checkBehavior(name, d); err != nil {
		return nil, err
	}
	a, err := absorbingLongRun(name, d, gamma)
	if err != nil {
		return nil, err
	}
	d = a.d
	rw, err := ratio.NewReweighting(d, gamma)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	q, err := discountedRatios(d, gamma) // gamma^t beta, scaled
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	state, reward, start := d.State, d.Reward, d.Start
	return func(mult []int) (float64, error) {
		c, err := rw.Counts(mult)
		if err != nil {
			return 0, err
		}
		m, err := learner.Solve(c)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		var num, den float64
		for i, cnt := range mult {
			if cnt == 0 {
				continue
			}
			var a, b float64
			for j := start[i]; j < start[i+1]; j++ {
				v := m.W[state[j]] * q[j]
				a += v * reward[j]
				b += v
			}
			num += float64(cnt) * a
			den += float64(cnt) * b
		}
		if !(den > 0) {
			return 0, ErrReweight
		}
		return num / den, nil
	}, nil
}
