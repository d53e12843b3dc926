package kernelloss

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
)

// Pairs is the tabular problem of the state-action learners: the data
// distribution d_D of the logged state-action pairs p = (s, a), their
// empirical transitions and mean rewards, the start distribution d0 and
// the target's action distribution pi at every state. From a log
// (FromData) every transition (a step with a known next state) weighs the
// same,
//
//	d_D(p) = N(p) / n,   P(s'|p) = N(p, s') / N(p),   r(p) = mean reward of the transitions from p,
//
// and d0 is the empirical distribution of the episodes' first states; from
// a model (FromModel) they are the population's. Only pairs with
// d_D(p) > 0 are pairs of the problem ("logged").
type Pairs struct {
	NumStates, NumActions int

	// State and Action of every pair, in increasing order of
	// s*NumActions + a; Index[s*NumActions + a] is the pair's number, -1
	// for a pair that is not logged.
	State, Action []int32
	Index         []int32

	// Weight is d_D(p) (it sums to 1) and Reward r(p).
	Weight, Reward []float64

	// The outcomes of pair p are Next[Start[p]:Start[p+1]] with
	// probabilities Prob[...].
	Start []int32
	Next  []int32
	Prob  []float64

	// Init is d0 (it sums to 1) and Pi the target's pi(a|s), row-major
	// (NumStates x NumActions).
	Init []float64
	Pi   []float64

	// Transitions and Episodes count what the log held (0 from a model).
	Transitions, Episodes int
}

// FromData aggregates the transitions of d, whose states and actions
// must be discrete, with the target's action distribution pi.
func FromData(d *dataset.Dataset, pi policy.Discrete) (*Pairs, error) {
	if d == nil || !d.Discrete() || d.NumStates <= 0 || d.NumActions <= 0 || d.ActionDim != 0 {
		return nil, errors.New("needs discrete states and actions (NumStates > 0, NumActions > 0)")
	}
	nS, nA := d.NumStates, d.NumActions
	if pi.NumActions() != nA {
		return nil, fmt.Errorf("target policy has %d actions, the data %d", pi.NumActions(), nA)
	}
	count := make([]int32, nS*nA)
	rSum := make([]float64, nS*nA)
	init := make([]float64, nS)
	n, m := 0, 0
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		if hi == lo {
			continue
		}
		m++
		s0 := int(d.State[lo])
		if s0 < 0 || s0 >= nS {
			return nil, fmt.Errorf("episode %q step 0: state %d outside [0, %d)", d.IDs[e], s0, nS)
		}
		init[s0]++
		for j := lo; j < hi; j++ {
			s, a := int(d.State[j]), int(d.Action[j])
			if s < 0 || s >= nS || a < 0 || a >= nA {
				return nil, fmt.Errorf("episode %q step %d: state %d or action %d out of range", d.IDs[e], j-lo, s, a)
			}
			next, ok := d.NextState(e, j)
			if !ok {
				continue
			}
			if next < 0 || next >= nS {
				return nil, fmt.Errorf("episode %q step %d: next state %d outside [0, %d)", d.IDs[e], j-lo, next, nS)
			}
			if r := d.Reward[j]; r-r != 0 {
				return nil, fmt.Errorf("episode %q step %d: reward %v", d.IDs[e], j-lo, r)
			}
			count[s*nA+a]++
			rSum[s*nA+a] += d.Reward[j]
			n++
		}
	}
	if n == 0 {
		return nil, errors.New("no transitions (steps with a known next state)")
	}
	pp := newPairs(nS, nA, count)
	for i := range init {
		init[i] /= float64(m)
	}
	pp.Init, pp.Transitions, pp.Episodes = init, n, m
	// Outcomes grouped by pair (a counting sort of the transitions).
	pp.Start = make([]int32, len(pp.State)+1)
	for p := range pp.State {
		c := count[int(pp.State[p])*nA+int(pp.Action[p])]
		pp.Start[p+1] = pp.Start[p] + c
		pp.Weight[p] = float64(c) / float64(n)
		pp.Reward[p] = rSum[int(pp.State[p])*nA+int(pp.Action[p])] / float64(c)
	}
	next := make([]int32, n)
	pos := make([]int32, len(pp.State))
	copy(pos, pp.Start)
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if ns, ok := d.NextState(e, j); ok {
				p := pp.Index[int(d.State[j])*nA+int(d.Action[j])]
				next[pos[p]] = int32(ns)
				pos[p]++
			}
		}
	}
	// Merge repeated next states of a pair into one outcome each.
	tally := make([]int32, nS)
	starts := pp.Start
	pp.Start = make([]int32, 1, len(pp.State)+1)
	for p := range pp.State {
		seg := next[starts[p]:starts[p+1]]
		for _, s := range seg {
			if tally[s] == 0 {
				pp.Next = append(pp.Next, s)
			}
			tally[s]++
		}
		c := float64(len(seg))
		for k := pp.Start[p]; k < int32(len(pp.Next)); k++ {
			s := pp.Next[k]
			pp.Prob = append(pp.Prob, float64(tally[s])/c)
			tally[s] = 0
		}
		pp.Start = append(pp.Start, int32(len(pp.Next)))
	}
	if err := pp.setPi(pi); err != nil {
		return nil, err
	}
	return pp, nil
}

// FromCounts builds FromData's problem from a log's sufficient
// statistics, as a stream of shards gathers them (package ope's sums):
// init[s] counts the episodes starting in s (of episodes), count[sa] and
// rSum[sa] the transitions (steps with a known next state) from pair
// sa = s*nA + a and their rewards, and next(sa) the pair's next states
// with their counts in order of first appearance in the log (it may reuse
// its results' memory between calls). Given the statistics of a log it
// returns FromData's problem of it, number for number.
func FromCounts(nS, nA int, init []float64, episodes int, count []int32, rSum []float64,
	next func(sa int) (states, counts []int32), pi policy.Discrete) (*Pairs, error) {
	if nS <= 0 || nA <= 0 || len(init) != nS || len(count) != nS*nA || len(rSum) != nS*nA || episodes <= 0 {
		return nil, fmt.Errorf("%d states, %d actions, %d episodes: counts of the wrong sizes", nS, nA, episodes)
	}
	if pi.NumActions() != nA {
		return nil, fmt.Errorf("target policy has %d actions, the data %d", pi.NumActions(), nA)
	}
	n := 0
	for _, c := range count {
		n += int(c)
	}
	if n == 0 {
		return nil, errors.New("no transitions (steps with a known next state)")
	}
	pp := newPairs(nS, nA, count)
	pp.Init, pp.Transitions, pp.Episodes = make([]float64, nS), n, episodes
	for i, v := range init {
		pp.Init[i] = v / float64(episodes)
	}
	pp.Start = make([]int32, 1, len(pp.State)+1)
	for p := range pp.State {
		sa := int(pp.State[p])*nA + int(pp.Action[p])
		c := count[sa]
		pp.Weight[p] = float64(c) / float64(n)
		pp.Reward[p] = rSum[sa] / float64(c)
		states, counts := next(sa)
		for k, s := range states {
			pp.Next = append(pp.Next, s)
			pp.Prob = append(pp.Prob, float64(counts[k])/float64(c))
		}
		pp.Start = append(pp.Start, int32(len(pp.Next)))
	}
	if err := pp.setPi(pi); err != nil {
		return nil, err
	}
	return pp, nil
}

// FromModel returns the population problem of a tabular world m: the
// pairs with weight dD[s*NumActions + a] > 0 (dD is rescaled to sum to
// 1), their outcomes and expected rewards in m, m's initial distribution,
// and the target pi. With dD the behavior's (discounted or stationary)
// state-action visitation it is the limit of FromData on ever longer
// logs; any dD with the target's pairs in its support gives the state-
// action learners the exact ratio d_pi(s,a)/dD(s,a).
func FromModel(m mdp.Finite, dD []float64, pi policy.Discrete) (*Pairs, error) {
	nS, nA := m.NumStates(), m.NumActions()
	if len(dD) != nS*nA {
		return nil, fmt.Errorf("data distribution of length %d, want %d states x %d actions", len(dD), nS, nA)
	}
	if pi.NumActions() != nA {
		return nil, fmt.Errorf("target policy has %d actions, the model %d", pi.NumActions(), nA)
	}
	sum := 0.0
	count := make([]int32, nS*nA)
	for i, v := range dD {
		if !(v >= 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("data weight %v of pair %d", v, i)
		}
		if v > 0 {
			count[i] = 1
		}
		sum += v
	}
	if !(sum > 0) {
		return nil, errors.New("the data distribution has no mass")
	}
	pp := newPairs(nS, nA, count)
	pp.Init = append([]float64(nil), m.Initial()...)
	pp.Start = make([]int32, 1, len(pp.State)+1)
	for p := range pp.State {
		s, a := int(pp.State[p]), int(pp.Action[p])
		pp.Weight[p] = dD[s*nA+a] / sum
		for _, o := range m.Outcomes(s, a) {
			pp.Reward[p] += o.Prob * o.Reward
			if o.Prob > 0 {
				pp.Next = append(pp.Next, int32(o.Next))
				pp.Prob = append(pp.Prob, o.Prob)
			}
		}
		pp.Start = append(pp.Start, int32(len(pp.Next)))
	}
	if err := pp.setPi(pi); err != nil {
		return nil, err
	}
	return pp, nil
}

// newPairs lists the pairs with a positive count.
func newPairs(nS, nA int, count []int32) *Pairs {
	pp := &Pairs{NumStates: nS, NumActions: nA, Index: make([]int32, nS*nA)}
	for i, c := range count {
		pp.Index[i] = -1
		if c > 0 {
			pp.Index[i] = int32(len(pp.State))
			pp.State = append(pp.State, int32(i/nA))
			pp.Action = append(pp.Action, int32(i%nA))
		}
	}
	pp.Weight = make([]float64, len(pp.State))
	pp.Reward = make([]float64, len(pp.State))
	return pp
}

// setPi tabulates pi, checking that every row is a distribution.
func (pp *Pairs) setPi(pi policy.Discrete) error {
	nS, nA := pp.NumStates, pp.NumActions
	pp.Pi = make([]float64, nS*nA)
	for s := range nS {
		sum := 0.0
		for a := range nA {
			v := pi.Prob(s, a)
			if !(v >= 0) || math.IsInf(v, 1) {
				return fmt.Errorf("target probability %v of action %d in state %d", v, a, s)
			}
			pp.Pi[s*nA+a] = v
			sum += v
		}
		if math.Abs(sum-1) > 1e-6 {
			return fmt.Errorf("target probabilities of state %d sum to %v", s, sum)
		}
	}
	return nil
}

// MeanReward returns sum_p d_D(p) r(p), the mean logged reward.
func (pp *Pairs) MeanReward() float64 { return Dot(pp.Weight, pp.Reward) }
