package ratio

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
)

// Marginal learns the time-indexed state ratios of tabular marginalized
// importance sampling (Xie, Ma, Wang 2019, "TMIS"), for the finite-horizon
// estimand:
//
//	w_t(s) = d^pi_t(s) / d^pi0_t(s),   t = 0..H-1,
//
// with d_t the distribution of the state at step t and H the longest
// logged episode. From the log:
//
//	d^pi0_t(s)  = share of the episodes alive at t (with a step t) that are in s at t,
//	d^pi_0      = d^pi0_0,
//	d^pi_{t+1}(s') = sum_s d^pi_t(s) Phat^pi_t(s'|s),
//	Phat^pi_t(s'|s) = (1/n_t(s)) sum_{i alive at t+1, s^i_t = s} beta^i_t 1[s^i_{t+1} = s'],
//
// n_t(s) the number of episodes alive at t+1 that are in s at t and
// beta^i_t = pi(a^i_t|s^i_t) / pi0(a^i_t|s^i_t): the importance-weighted
// empirical transition of step t, kept apart for every t (the chain of a
// finite horizon need not be stationary in t, and the log's start
// distribution is its own). Recursing on state marginals instead of
// multiplying the ratios beta along a trajectory is what makes the
// estimator's mean-squared error polynomial in the horizon instead of
// exponential (Xie et al.'s main theorem).
//
// Episodes of unequal lengths: an episode that ends at step t says
// nothing about step t+1, so it is left out of both d^pi0_{t+1} (the share
// is over the episodes that continue) and Phat^pi_t (n_t(s) counts the
// episodes that continue from s). If no episode continues from a state s
// that carries target mass at t, that mass is dropped: d^pi_{t+1} is left
// as the recursion gives it, not rescaled (with sampled data it does not
// sum to 1 anyway: Phat is an importance-sampling estimate, exact only in
// expectation). The final next state of an episode is not used.
//
// Where d^pi0_t(s) = 0 the ratio is 0; the recursion never puts target
// mass there (Phat^pi_t only leads to states logged at t+1). The
// discount plays no role in w_t: the estimator applies gamma^t; Fit
// accepts any gamma in (0, 1]. Fit needs the behavior's log-probabilities
// (LogBehavior) and the target's (LogTarget) of the logged actions only.
//
// The finite-horizon estimate built on it is
//
//	R = (1/n) sum_i g0_i sum_t gamma^t w_t(s^i_t) beta^i_t r^i_t,   g0_i = 1 / sum_{t<T_i} gamma^t.
//
// References:
//
//	Xie, Ma, Wang (2019), "Towards optimal off-policy evaluation for
//	reinforcement learning with marginalized importance sampling",
//	NeurIPS (the MIS estimator of the state marginals, in its tabular
//	form with the importance-weighted transition above).
type Marginal struct{}

// MarginalModel holds the learned time-indexed ratios w_t(s).
//
// It keeps them in one of two forms, whichever is smaller for the log it
// was fitted on: a dense H x nS table, or for each t only the states
// logged at t (the only ones with a non-zero ratio), in increasing order.
// The sparse form is what a log with few episodes for its horizon and
// state space needs: on the paper's Taxi seed (200 episodes of 400 steps,
// 2000 states) the table would be 6.4 MB for 80,000 steps, the sparse
// form holds at most one entry a step. Both give the same values.
type MarginalModel struct {
	nS, horizon int
	w           []float64 // dense: w_t(s) at t*nS+s; nil in the sparse form

	// The sparse form: row t's states and ratios are
	// states[rowStart[t]:rowStart[t+1]], ws[...].
	rowStart []int
	states   []int32
	ws       []float64
}

var (
	_ Learner = Marginal{}
	_ Model   = (*MarginalModel)(nil)
)

// Name returns "marginal".
func (Marginal) Name() string { return "marginal" }

// Fit learns w_t(s) for t below the longest episode of d (see Marginal).
// The model is a *MarginalModel.
func (Marginal) Fit(d *dataset.Dataset, gamma float64) (Model, error) {
	m, err := Marginal{}.FitMult(d, gamma, nil)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// FitMult is Fit on the log in which episode e appears mult[e] times
// (nil: once each), as an episode bootstrap's resample, without building
// that log: every count is weighted by the multiplicity.
func (Marginal) FitMult(d *dataset.Dataset, gamma float64, mult []int) (*MarginalModel, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: discount %v outside (0, 1]", gamma)
	}
	if d == nil || !d.Discrete() || d.NumStates <= 0 || d.NumStates > math.MaxInt32 {
		return nil, errors.New("ratio: the marginal learner needs discrete states")
	}
	nE := d.NumEpisodes()
	if nE == 0 {
		return nil, errors.New("ratio: marginal: no episodes")
	}
	nS := d.NumStates
	// beta(a_j|s_j) is formed where it is used, not kept per step: the
	// checks come first.
	beta := func(j int) float64 { return math.Exp(d.LogTarget[j] - d.LogBehavior[j]) }
	for e := range nE {
		lo, hi := d.Span(e)
		if hi == lo {
			return nil, fmt.Errorf("ratio: marginal: episode %q has no steps", d.IDs[e])
		}
		for j := lo; j < hi; j++ {
			if s := d.State[j]; s < 0 || int(s) >= nS {
				return nil, fmt.Errorf("ratio: episode %q step %d: state %d outside [0, %d)", d.IDs[e], j-lo, s, nS)
			}
			lt, lb := d.LogTarget[j], d.LogBehavior[j]
			lr := lt - lb
			if math.IsNaN(lr) || math.IsInf(lb, 0) || math.IsInf(beta(j), 1) {
				return nil, fmt.Errorf("ratio: episode %q step %d: log-probabilities %v (target), %v (behavior) give no finite ratio",
					d.IDs[e], j-lo, lt, lb)
			}
		}
	}
	if mult != nil && len(mult) != nE {
		return nil, fmt.Errorf("ratio: marginal: %d multiplicities for %d episodes", len(mult), nE)
	}
	weight := func(e int) float64 {
		if mult == nil {
			return 1
		}
		return float64(mult[e])
	}
	// The sparse form holds 12 bytes a logged (t, s), the table 8 bytes
	// per (t, s): on Taxi logs of 400-step episodes the sparse form is
	// 0.7 MB for 200 episodes and 3.5 MB for 2500, the table 6.4 MB.
	pairs := loggedPairs(d)
	return fitMarginal(d, weight, 12*int64(pairs) <= 8*int64(d.MaxLen())*int64(nS), pairs), nil
}

// loggedPairs counts the distinct (t, s) of d's steps (t the step's index
// in its episode): the entries of the sparse form, at most (a state whose
// episodes at t all have multiplicity 0 has none).
func loggedPairs(d *dataset.Dataset) int {
	set := make([]uint64, (d.NumStates+63)/64)
	alive := make([]int, d.NumEpisodes())
	for e := range alive {
		alive[e] = e
	}
	n := 0
	for t := 0; len(alive) > 0; t++ {
		k := 0
		for _, e := range alive {
			if lo, hi := d.Span(e); lo+t < hi {
				s := d.State[lo+t]
				set[s>>6] |= 1 << (s & 63)
				alive[k] = e
				k++
			}
		}
		alive = alive[:k]
		for i, word := range set {
			if word != 0 {
				n += bits.OnesCount64(word)
				set[i] = 0
			}
		}
	}
	return n
}

// fitMarginal is FitMult on checked arguments, in the sparse form (room
// for pairs entries, loggedPairs) or the dense one (weight(e) is episode
// e's multiplicity). Its work is
// proportional to the log, not to H x nS: at each t it passes over the
// episodes alive at t, and clears the per-state arrays entry by entry
// where they put values; a bit set of the states logged at t lists them in
// increasing order.
func fitMarginal(d *dataset.Dataset, weight func(int) float64, sparse bool, pairs int) *MarginalModel {
	nS, H := d.NumStates, d.MaxLen()
	m := &MarginalModel{nS: nS, horizon: H}
	if sparse {
		m.rowStart = make([]int, 1, H+1)
		m.states = make([]int32, 0, pairs)
		m.ws = make([]float64, 0, pairs)
	} else {
		m.w = make([]float64, H*nS)
	}
	// alive lists the episodes alive at t (Len > t), in order; it shrinks
	// with t. Episode e's step t is row start + t of d.
	type episode struct {
		start, end int
		weight     float64
	}
	alive := make([]episode, d.NumEpisodes())
	for e := range alive {
		lo, hi := d.Span(e)
		alive[e] = episode{lo, hi, weight(e)}
	}
	dpi := make([]float64, nS)  // d^pi_t
	next := make([]float64, nS) // d^pi_{t+1}
	cnt := make([]float64, nS)  // n_t(s), then the weight of the episodes in s at t+1; 0 between uses
	logged := make([]uint64, (nS+63)/64)
	// setRow writes row t, w_t(s) = ratio(s), for the states s logged at
	// t (those in logged) with cnt[s] > 0, in increasing order of s, and
	// clears logged and cnt.
	setRow := func(t int, ratio func(s int32) float64) {
		var row []float64
		if !sparse {
			row = m.w[t*nS : (t+1)*nS]
		}
		for i, word := range logged {
			if word == 0 {
				continue
			}
			logged[i] = 0
			for ; word != 0; word &= word - 1 {
				s := int32(i<<6 + bits.TrailingZeros64(word))
				if cnt[s] > 0 {
					if v := ratio(s); sparse {
						m.states, m.ws = append(m.states, s), append(m.ws, v)
					} else {
						row[s] = v
					}
				}
				cnt[s] = 0
			}
		}
		if sparse {
			m.rowStart = append(m.rowStart, len(m.states))
		}
	}
	// t = 0: d^pi_0 = d^pi0_0, w_0 = 1 on the logged first states.
	total := 0.0
	for _, a := range alive {
		s := d.State[a.start]
		cnt[s] += a.weight
		total += a.weight
		logged[s>>6] |= 1 << (s & 63)
	}
	setRow(0, func(s int32) float64 {
		dpi[s] = cnt[s] / total
		return 1
	})
	for t := 0; t+1 < H; t++ {
		// n_t(s) over the episodes that continue to t+1, then
		// d^pi_{t+1}, in the order of the episodes.
		for _, a := range alive {
			if j := a.start + t; j+1 < a.end {
				cnt[d.State[j]] += a.weight
			}
		}
		for _, a := range alive {
			j := a.start + t
			if j+1 == a.end || a.weight == 0 {
				continue
			}
			s := d.State[j]
			next[d.State[j+1]] += a.weight * dpi[s] * math.Exp(d.LogTarget[j]-d.LogBehavior[j]) / cnt[s]
		}
		// d^pi_t and n_t are used up (d^pi_t is non-zero only on the
		// states of the episodes alive at t); keep the episodes that
		// continue.
		k := 0
		for _, a := range alive {
			j := a.start + t
			s := d.State[j]
			cnt[s], dpi[s] = 0, 0
			if j+1 < a.end {
				alive[k] = a
				k++
			}
		}
		alive = alive[:k]
		// d^pi0_{t+1}(s) = cnt[s] / alive1: the continuing episodes'
		// states at t+1.
		alive1 := 0.0
		for _, a := range alive {
			s := d.State[a.start+t+1]
			cnt[s] += a.weight
			alive1 += a.weight
			logged[s>>6] |= 1 << (s & 63)
		}
		setRow(t+1, func(s int32) float64 { return next[s] / (cnt[s] / alive1) })
		dpi, next = next, dpi
	}
	return m
}

// Horizon returns H, the number of steps t with a learned ratio.
func (m *MarginalModel) Horizon() int { return m.horizon }

// Ratio returns w_t(s), or 0 for a step t >= Horizon() (no logged episode
// was that long) or a state outside the model.
func (m *MarginalModel) Ratio(t, s int) float64 {
	if t < 0 || t >= m.horizon || s < 0 || s >= m.nS {
		return 0
	}
	if m.w != nil {
		return m.w[t*m.nS+s]
	}
	lo, hi := m.rowStart[t], m.rowStart[t+1]
	if k, ok := slices.BinarySearch(m.states[lo:hi], int32(s)); ok {
		return m.ws[lo+k]
	}
	return 0
}

// StepRatios returns w_t(s_j) for every step j of d, t = j - Start[e] the
// step's index in its episode (0 where Ratio is 0).
func (m *MarginalModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	if !d.Discrete() {
		return nil, errors.New("ratio: a marginal ratio needs discrete states")
	}
	w := make([]float64, d.NumSteps())
	if m.w != nil {
		for e := range d.NumEpisodes() {
			lo, hi := d.Span(e)
			hi = min(hi, lo+m.horizon) // w is 0 beyond the horizon
			for j := lo; j < hi; j++ {
				if s := int(d.State[j]); s >= 0 && s < m.nS {
					w[j] = m.w[(j-lo)*m.nS+s]
				}
			}
		}
		return w, nil
	}
	// The sparse form, row by row: spread row t over a table of the
	// states and read it at the steps t of d's episodes.
	row := make([]float64, m.nS)
	alive := make([]int, d.NumEpisodes())
	for e := range alive {
		alive[e] = e
	}
	for t := 0; t < m.horizon && len(alive) > 0; t++ {
		lo, hi := m.rowStart[t], m.rowStart[t+1]
		for k := lo; k < hi; k++ {
			row[m.states[k]] = m.ws[k]
		}
		n := 0
		for _, e := range alive {
			if d.Len(e) <= t {
				continue
			}
			j := d.Start[e] + t
			if s := d.State[j]; s >= 0 && int(s) < m.nS {
				w[j] = row[s]
			}
			alive[n] = e
			n++
		}
		alive = alive[:n]
		for k := lo; k < hi; k++ {
			row[m.states[k]] = 0
		}
	}
	return w, nil
}
