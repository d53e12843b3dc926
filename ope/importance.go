package ope

import "github.com/ihope-ope/ihope/dataset"

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

// Estimate returns the trajectory-wise IS estimate, the fold of its sums
// (TrajectorySums) over d's episodes.
func (e *TrajectoryIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return importanceEstimate(e, d, gamma)
}

// Estimate returns the trajectory-wise WIS estimate, the fold of its sums
// (TrajectorySums) over d's episodes.
func (e *TrajectoryWIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return importanceEstimate(e, d, gamma)
}

// Estimate returns the step-wise IS estimate, the fold of its sums
// (StepwiseISSums) over d's episodes.
func (e *StepwiseIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return importanceEstimate(e, d, gamma)
}

// Estimate returns the step-wise WIS estimate, the fold of its sums
// (StepwiseWISSums) over d's episodes.
func (e *StepwiseWIS) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	return importanceEstimate(e, d, gamma)
}

// importanceEstimate is foldEstimate after the IS family's own checks:
// behavior probabilities, and several episodes (checkSeveral).
func importanceEstimate(e Summer, d *dataset.Dataset, gamma float64) (Result, error) {
	return foldEstimate(e, d, gamma, Horizon, func(d *dataset.Dataset) error {
		if err := checkBehavior(e.Name(), d); err != nil {
			return err
		}
		return checkSeveral(e.Name(), whyIS, d)
	})
}
