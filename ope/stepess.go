package ope

import (
	"fmt"
	"math"
)

// StepESS accumulates, per step index t, what the per-step effective
// sample size of step-wise importance weights needs: with w_it =
// w^i_{0:t}, the product of episode i's policy ratios up to t, and g_it
// its normalised discount gamma^i_t, the sums of w and w^2 (on a scale
// exp(-Max[t]) of their own, Max[t] the largest log w_it added, so that
// neither underflows) and of g over the episodes that reach t, and their
// number n_t. Mean gives
//
//	sum_t c_t ESS_t / sum_t c_t,   ESS_t = (sum_i w_it)^2 / sum_i w_it^2,   c_t = sum_i g_it,
//
// and the same of ESS_t / n_t: the episodes that reach a step that its
// weights effectively use, averaged as the steps count in the estimate
// (c_t is step-wise WIS's weight of step t). The ratios alone are judged,
// not the discounts, which differ between episodes of different lengths
// even when the target is the behavior (then every ESS_t is n_t). A
// pooled effective sample size over all steps can look healthy while
// every step rests on one or two episodes: on a 20-state MDP with
// terminal states (500 episodes of up to 40 steps) the pooled one was
// 95.9 of 7,883 steps (1.2%) while each step from t = 5 on had 1.6 to 3.7
// of 500 episodes, and step-wise WIS gave 12.3 [8.2, 21.3] against a
// truth of 52.6 with nothing said. The fields are exported so that a
// stream's sums can be encoded; their memory grows with the longest
// episode.
type StepESS struct {
	Max, Sum, Sq, G Floats
	N               []int64
}

// grow extends the arrays to n steps.
func (s *StepESS) grow(n int) {
	if len(s.N) >= n {
		return
	}
	old := len(s.N)
	s.Max = s.Max.grow(n)
	s.Max[old:].fill(math.Inf(-1))
	s.Sum, s.Sq, s.G = s.Sum.grow(n), s.Sq.grow(n), s.G.grow(n)
	s.N = append(s.N, make([]int64, n-old)...)
}

// shift raises Max[t] to x, rescaling the sums at t.
func (s *StepESS) shift(t int, x float64) {
	old := s.Max[t]
	if !(x > old) {
		return
	}
	s.Max[t] = x
	if !math.IsInf(old, -1) {
		f := math.Exp(old - x)
		s.Sum[t] *= f
		s.Sq[t] *= f * f
	}
}

// add adds, at step t, an episode's log ratio product l (-Inf for a
// weight of 0) and its normalised discount g.
func (s *StepESS) add(t int, l, g float64) {
	s.grow(t + 1)
	s.G[t] += g
	s.N[t]++
	if math.IsInf(l, -1) {
		return
	}
	s.shift(t, l)
	x := math.Exp(l - s.Max[t])
	s.Sum[t] += x
	s.Sq[t] += x * x
}

// merge adds o's sums. It refuses arrays of different lengths (sums
// encoded by another version).
func (s *StepESS) merge(o *StepESS) error {
	n := len(o.N)
	if len(o.Max) != n || len(o.Sum) != n || len(o.Sq) != n || len(o.G) != n {
		return fmt.Errorf("per-step sums of %d, %d, %d, %d and %d steps: not sums of this version", len(o.Max), len(o.Sum), len(o.Sq), len(o.G), n)
	}
	s.grow(n)
	for t := range n {
		s.G[t] += o.G[t]
		s.N[t] += o.N[t]
		if math.IsInf(o.Max[t], -1) {
			continue
		}
		s.shift(t, o.Max[t])
		f := math.Exp(o.Max[t] - s.Max[t])
		s.Sum[t] += o.Sum[t] * f
		s.Sq[t] += o.Sq[t] * f * f
	}
	return nil
}

// Mean returns the discount-weighted means over the steps of ESS_t and
// of ESS_t/n_t (a step whose weights are all 0 or underflow counts as
// 0), NaN if no step has a positive weight (the weights say nothing then,
// and WeightWarnings says so).
func (s *StepESS) Mean() (ess, share float64) {
	var num, numShare, den float64
	some := false
	for t, n := range s.N {
		if n == 0 || s.G[t] == 0 {
			continue
		}
		e := 0.0
		if s.Sq[t] > 0 {
			e = s.Sum[t] * s.Sum[t] / s.Sq[t]
			some = true
		}
		num += s.G[t] * e
		numShare += s.G[t] * e / float64(n)
		den += s.G[t]
	}
	if !some {
		return math.NaN(), math.NaN()
	}
	return num / den, numShare / den
}

// stepESSShareWarn is the per-step share below which StepESSWarning
// speaks (the trajectory-wise threshold, 5% of the episodes), and
// stepESSFloor the mean per-step effective sample size below which it
// speaks on logs of stepESSFloorEpisodes episodes or more, whatever the
// share: on a 20-state MDP with terminal states, 50 episodes, each step
// rested on about 2.5 (5%, at the share's edge) and step-wise WIS gave
// 19.8 against a truth of 52.6.
const (
	stepESSShareWarn     = essShareEpisodes
	stepESSFloor         = 5
	stepESSFloorEpisodes = 10
)

// StepESSWarning says in plain words when step-wise importance weights
// collapse at the steps that carry the estimate (s.Mean: an effective
// sample size per step below 5% of the episodes, or below 5 episodes on
// a log of 10 or more), "" otherwise.
func StepESSWarning(name string, s *StepESS, episodes int) string {
	ess, share := s.Mean()
	if math.IsNaN(share) || episodes < 2 || share >= stepESSShareWarn && (ess >= stepESSFloor || episodes < stepESSFloorEpisodes) {
		return ""
	}
	return fmt.Sprintf("%s: at the steps that carry its estimate the weights collapse onto a few episodes (per step, an effective sample size of %.1f episodes, %.1f%% of those that reach the step, averaged as the steps count in the estimate; %d episodes in all): each step's mean rests on very few episodes, so the estimate can be far off and its interval miss the truth",
		name, ess, 100*share, episodes)
}
