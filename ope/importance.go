package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
)

// TrajectoryIS is trajectory-wise importance sampling, "is-trajectory":
//
//	R = (1/m) sum_i w^i_{0:T_i} sum_{t<T_i} gamma^i_t r^i_t,
//	w^i_{0:T_i} = prod_{t<T_i} pi(a^i_t|s^i_t) / pi0(a^i_t|s^i_t),
//
// with gamma^i_t = gamma^t / sum_{t<T_i} gamma^t normalised over the
// episode's own length T_i. It is unbiased for the mean over episodes of
// R^{T_i}_pi (the paper's R^T_pi when all episodes have length T), and its
// variance grows exponentially with the horizon (Section 2, Appendix B).
//
// The weights are formed in log space: the sum is scaled by the largest
// log-weight among episodes with a non-zero reward sum and that scale is
// put back only at the end, in log form, so a weight such as e^712 that
// overflows on its own still gives the finite estimate it should. An
// estimate beyond float64's range is an error. An episode with a
// zero-probability target action (LogTarget = -Inf) has weight exactly 0
// and contributes 0; if every episode does, the estimate is 0.
//
// Result.Weights are the per-episode weights w^i_{0:T_i} divided by their
// sum (all 0 if every weight is 0).
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Eq. (2) and Appendix A (trajectory-wise, Z_T = m).
type TrajectoryIS struct{}

// TrajectoryWIS is trajectory-wise weighted (self-normalised) importance
// sampling, "wis-trajectory": the TrajectoryIS formula with Z = sum_i
// w^i_{0:T_i} in place of m,
//
//	R = sum_i w^i_{0:T_i} V_i / sum_i w^i_{0:T_i},   V_i = sum_{t<T_i} gamma^i_t r^i_t.
//
// It is biased but consistent and lies between the smallest and largest
// V_i. The weights are exponentiated after subtracting the largest
// log-weight, which cancels in the ratio. If every episode has weight 0
// (each contains an action the target never takes) the estimate is
// undefined and Estimate returns an error.
//
// Result.Weights are the normalised per-episode weights, so that
// Value = sum_i Weights[i] V_i.
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Appendix A (trajectory-wise, Z_T = sum_i w^i_{0:T}).
type TrajectoryWIS struct{}

// StepwiseIS is step-wise (per-decision) importance sampling,
// "is-stepwise": the reward at step t is weighted by the product of the
// ratios up to and including t only,
//
//	R = (1/m) sum_i sum_{t<T_i} gamma^i_t w^i_{0:t} r^i_t,   w^i_{0:t} = prod_{k<=t} beta(a^i_k|s^i_k),
//
// which is unbiased with smaller variance than TrajectoryIS (Precup et
// al. 2000). With episodes of different lengths it is the average over
// episodes of each episode's own unbiased per-decision estimate.
//
// Each term gamma^i_t w^i_{0:t} is kept as a logarithm; the sum is scaled
// by the largest such logarithm among steps with a non-zero reward and
// exponentiated only at the end, so a discount gamma^t that underflows on
// its own (gamma = 0.5, t > 1074) is still paired correctly with a large
// weight. An estimate beyond float64's range is an error.
//
// Result.Weights are the per-step weights gamma^i_t w^i_{0:t} divided by
// their sum, episode after episode in step order (length d.NumSteps()).
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Appendix A (step-wise, Z_t = m).
//	Precup, Sutton, Singh (2000), Eligibility traces for off-policy policy evaluation.
type StepwiseIS struct{}

// StepwiseWIS is step-wise (per-decision) weighted importance sampling,
// "wis-stepwise", the baseline the paper finds strongest among the IS
// variants. For episodes of one length T it is exactly Appendix A's
//
//	R = sum_{t<T} (1/Z_t) sum_i gamma_t w^i_{0:t} r^i_t,   Z_t = sum_i w^i_{0:t}.
//
// Episodes of different lengths: step t is normalised over the episodes
// that reach it, each keeping its own normalised discount gamma^i_t, and
// the step carries the share of discount mass those episodes carry:
//
//	R = sum_t c_t (sum_i gamma^i_t w^i_{0:t} r^i_t) / (sum_i gamma^i_t w^i_{0:t}),
//	c_t = (1/m) sum_{i: T_i > t} gamma^i_t,
//
// the sums over i running over the episodes with T_i > t. With one length
// T this is Appendix A's formula (c_t = gamma_t); the c_t sum to 1, so a
// constant reward is estimated exactly, and with target = behavior the
// estimate is Naive's. (Rescaling the weights to mean 1 per step and then
// applying each episode's own gamma^i_t, an earlier version, does not
// keep these properties when the gamma^i_t differ.)
//
// If at some step t every episode that reaches it has weight 0, Z_t is 0,
// the step-t reward of the target is not identified and Estimate returns
// an error naming t.
//
// Result.Weights are the per-step weights
// c_t gamma^i_t w^i_{0:t} / sum_j gamma^j_t w^j_{0:t}, which sum to 1,
// episode after episode in step order (length d.NumSteps()).
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Appendix A (step-wise, Z_t = sum_i w^i_{0:t}).
//	Precup, Sutton, Singh (2000), Eligibility traces for off-policy policy evaluation.
type StepwiseWIS struct{}

var (
	_ Estimator = (*TrajectoryIS)(nil)
	_ Estimator = (*TrajectoryWIS)(nil)
	_ Estimator = (*StepwiseIS)(nil)
	_ Estimator = (*StepwiseWIS)(nil)
)

// Name returns "is-trajectory".
func (*TrajectoryIS) Name() string { return "is-trajectory" }

// Name returns "wis-trajectory".
func (*TrajectoryWIS) Name() string { return "wis-trajectory" }

// Name returns "is-stepwise".
func (*StepwiseIS) Name() string { return "is-stepwise" }

// Name returns "wis-stepwise".
func (*StepwiseWIS) Name() string { return "wis-stepwise" }

// Estimate returns the trajectory-wise IS estimate.
func (e *TrajectoryIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return trajectoryEstimate(e.Name(), d, gamma, false)
}

// Estimate returns the trajectory-wise WIS estimate.
func (e *TrajectoryWIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return trajectoryEstimate(e.Name(), d, gamma, true)
}

// Estimate returns the step-wise IS estimate.
func (e *StepwiseIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return stepwiseEstimate(e.Name(), d, gamma, false)
}

// Estimate returns the step-wise WIS estimate.
func (e *StepwiseWIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return stepwiseEstimate(e.Name(), d, gamma, true)
}

// trajectoryEstimate computes (1/Z) sum_i w^i_{0:T_i} V_i with Z = m (IS)
// or Z = sum_i w^i_{0:T_i} (WIS).
func trajectoryEstimate(name string, d *dataset.Dataset, gamma float64, selfNormalised bool) (Result, error) {
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	if err := checkBehavior(name, d); err != nil {
		return Result{}, err
	}
	if err := checkSeveral(name, whyIS, d); err != nil {
		return Result{}, err
	}
	a, err := absorbing(name, d, gamma, Horizon)
	if err != nil {
		return Result{}, err
	}
	d = a.d
	m := d.NumEpisodes()
	logW := make([]float64, m) // log w^i_{0:T_i}, then the normalised weights
	vals := make([]float64, m) // V_i
	maxW := math.Inf(-1)       // max_i log w_i
	maxV := math.Inf(-1)       // max_i log w_i over episodes with V_i != 0
	for i := range m {
		l, v, err := walkEpisode(name, d, i, gamma, nil)
		if err != nil {
			return Result{}, err
		}
		logW[i], vals[i] = l, v
		if l > maxW {
			maxW = l
		}
		if l > maxV && v != 0 {
			maxV = l
		}
	}
	if math.IsInf(maxW, -1) {
		if selfNormalised {
			return Result{}, fmt.Errorf("%s: every episode has weight 0 (each logs an action of target probability 0)", name)
		}
		clear(logW)
		return Result{Value: 0, Weights: logW, Estimand: Horizon}, nil
	}

	// Plain IS: (1/m) sum_i exp(L_i) V_i = exp(maxV) (1/m) sum_i exp(L_i - maxV) V_i.
	value := 0.0
	if !selfNormalised && !math.IsInf(maxV, -1) {
		s := 0.0
		for i, v := range vals {
			if v != 0 {
				s += math.Exp(logW[i]-maxV) * v // exp(-Inf) = 0 for zero weights
			}
		}
		var err error
		if value, err = scaledMean(name, s, maxV, m); err != nil {
			return Result{}, err
		}
	}

	// Normalised weights exp(L_i - maxW) / sum_j exp(L_j - maxW).
	z := 0.0
	for i, l := range logW {
		logW[i] = math.Exp(l - maxW)
		z += logW[i]
	}
	w := logW
	for i := range w {
		w[i] /= z
	}
	if selfNormalised {
		for i, v := range vals {
			value += w[i] * v
		}
	}
	return Result{Value: value, Weights: w, Estimand: Horizon}, nil
}

// stepwiseEstimate computes sum_i sum_t gamma^i_t w^i_{0:t} r^i_t / Z_t
// with Z_t = m (IS) or the self-normalisation documented on StepwiseWIS.
func stepwiseEstimate(name string, d *dataset.Dataset, gamma float64, selfNormalised bool) (Result, error) {
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Result{}, err
	}
	if err := checkBehavior(name, d); err != nil {
		return Result{}, err
	}
	if err := checkSeveral(name, whyIS, d); err != nil {
		return Result{}, err
	}
	a, err := absorbing(name, d, gamma, Horizon)
	if err != nil {
		return Result{}, err
	}
	d = a.d
	// buf holds log w^i_{0:t} for every step, episode after episode; it is
	// turned into the weights in place.
	buf := make([]float64, d.NumSteps())
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		if _, _, err := walkEpisode(name, d, i, gamma, buf[lo:hi]); err != nil {
			return Result{}, err
		}
	}
	ess := stepESSOf(d, gamma, buf) // before buf becomes the weights
	var res Result
	if selfNormalised {
		res, err = stepwiseWIS(name, d, gamma, buf)
	} else {
		res, err = stepwiseIS(name, d, gamma, buf)
	}
	if err == nil {
		if w := StepESSWarning(name, ess, d.NumEpisodes()); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	res.Weights = a.stepWeights(res.Weights)
	return res, err
}

// stepwiseIS finishes StepwiseIS from the cumulative log-weights in buf.
func stepwiseIS(name string, d *dataset.Dataset, gamma float64, buf []float64) (Result, error) {
	m := d.NumEpisodes()
	lg := math.Log(gamma)
	// Turn buf into a = log(gamma^i_t w^i_{0:t}) and find the maxima over
	// all steps and over steps with a non-zero reward.
	maxA, maxV := math.Inf(-1), math.Inf(-1)
	for i := range m {
		lo, hi := d.Span(i)
		_, logG0 := discountStart(gamma, hi-lo)
		for k := lo; k < hi; k++ {
			a := buf[k] + logG0 + float64(k-lo)*lg
			buf[k] = a
			if a > maxA {
				maxA = a
			}
			if a > maxV && d.Reward[k] != 0 {
				maxV = a
			}
		}
	}
	if math.IsInf(maxA, -1) {
		clear(buf)
		return Result{Value: 0, Weights: buf, Estimand: Horizon}, nil
	}

	// (1/m) sum exp(a) r = exp(maxV) (1/m) sum exp(a - maxV) r. When
	// maxV = maxA the exponentials are shared with the weights below.
	s := 0.0
	shared := maxV == maxA
	if !shared && !math.IsInf(maxV, -1) {
		for k, r := range d.Reward {
			if r != 0 {
				s += math.Exp(buf[k]-maxV) * r
			}
		}
	}
	z := 0.0
	for k, r := range d.Reward {
		e := math.Exp(buf[k] - maxA)
		buf[k] = e
		z += e
		if shared && r != 0 {
			s += e * r
		}
	}
	inv := 1 / z
	for j := range buf {
		buf[j] *= inv
	}
	value := 0.0
	if !math.IsInf(maxV, -1) {
		var err error
		if value, err = scaledMean(name, s, maxV, m); err != nil {
			return Result{}, err
		}
	}
	return Result{Value: value, Weights: buf, Estimand: Horizon}, nil
}

// stepwiseWIS finishes StepwiseWIS from the cumulative log-weights in buf.
func stepwiseWIS(name string, d *dataset.Dataset, gamma float64, buf []float64) (Result, error) {
	m := d.NumEpisodes()
	L := d.MaxLen()
	maxT := make([]float64, L) // max over alive episodes of log w_{0:t}
	for t := range maxT {
		maxT[t] = math.Inf(-1)
	}
	for i := range m {
		lo, hi := d.Span(i)
		for k := lo; k < hi; k++ {
			if t := k - lo; buf[k] > maxT[t] {
				maxT[t] = buf[k]
			}
		}
	}
	for t, mx := range maxT {
		if math.IsInf(mx, -1) {
			return Result{}, fmt.Errorf("%s: every episode reaching step %d has weight 0 there (target probability 0 for a logged action); Z_%d = 0", name, t, t)
		}
	}
	// buf becomes gamma^i_t exp(log w^i_{0:t} - maxT[t]); den[t] sums it
	// and c[t] sums gamma^i_t over the episodes alive at t.
	sums := make([]float64, 3*L)
	den, num, c := sums[:L], sums[L:2*L], sums[2*L:]
	for i := range m {
		lo, hi := d.Span(i)
		g, _ := discountStart(gamma, hi-lo)
		for k := lo; k < hi; k++ {
			t := k - lo
			e := g * math.Exp(buf[k]-maxT[t])
			buf[k] = e
			den[t] += e
			num[t] += e * d.Reward[k]
			c[t] += g
			g *= gamma
		}
	}
	value := 0.0
	for t := range den {
		c[t] /= float64(m)
		value += c[t] * num[t] / den[t]
		den[t] = c[t] / den[t] // the factor that turns buf into weights
	}
	for i := range m {
		lo, hi := d.Span(i)
		for k := lo; k < hi; k++ {
			buf[k] *= den[k-lo]
		}
	}
	return Result{Value: value, Weights: buf, Estimand: Horizon}, nil
}
