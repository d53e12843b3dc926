package value

import (
	"fmt"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
)

// CountModel is the maximum-likelihood tabular model of a dataset's
// transitions, an mdp.Finite:
//
//	P(s'|s,a) = N(s,a,s') / N(s,a),   r(s,a) = mean of the rewards logged at (s,a),
//	Initial   = the empirical distribution of the episodes' first states,
//
// where N counts the logged transitions (steps whose next state is known;
// a final step without a next state still counts towards r). Every
// outcome of (s,a) carries the reward r(s,a).
//
// Pairs the logs say nothing about follow two rules, applied separately
// to the transition and to the reward:
//
//   - An action never logged in a state that was logged with other actions
//     behaves like that state's logged actions pooled together: its next
//     state is drawn from N(s,·,s') / N(s,·) and its reward is the mean of
//     all rewards logged in s. Unseen actions are thus "an average action
//     of that state" — the empirical mixture the behavior policy itself
//     played there.
//   - A state never left in the logs (it appears only as the next state of
//     an episode's last step) loops to itself with the mean of all logged
//     rewards.
//
// Why: these rules invent no dynamics and no reward the data do not
// contain. The authors' code instead smooths the counts by 1e-9, which
// sends an unseen pair to a uniformly random state among all states (in
// Taxi, any of 2000, reachable or not), and gives it the mean reward of
// the seen pairs; over a long horizon that teleport spreads the target's
// mass to states the logs never describe and the error compounds. Pooling
// keeps an unseen action where the data are, and the self-loop keeps an
// unknown state from pulling mass anywhere else while scoring it with the
// neutral data mean. Either way, pairs the behavior never tries are pairs
// no estimator can evaluate from these logs; Visits exposes the counts so
// that callers can check the coverage.
type CountModel struct {
	nS, nA int
	init   []float64
	out    [][]mdp.Outcome // out[s*nA+a]
	visits []int           // N(s,a)
}

var _ mdp.Finite = (*CountModel)(nil)

// FitCountModel fits the count model to d, which must have discrete states
// and actions (NumStates > 0, NumActions > 0) with every id in range.
func FitCountModel(d *dataset.Dataset) (*CountModel, error) {
	const name = "count model"
	if d == nil || !d.Discrete() || d.NumStates <= 0 || d.NumActions <= 0 {
		return nil, fmt.Errorf("%s: needs discrete states and actions (NumStates > 0, NumActions > 0)", name)
	}
	if err := checkEpisodes(name, d); err != nil {
		return nil, err
	}
	nS, nA := d.NumStates, d.NumActions
	nSA := nS * nA
	m := &CountModel{nS: nS, nA: nA, init: make([]float64, nS), out: make([][]mdp.Outcome, nSA), visits: make([]int, nSA)}
	rSum := make([]float64, nSA)
	rCnt := make([]int, nSA)
	// Pass 1: validate and count.
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		for j := lo; j < hi; j++ {
			t, s, a := j-lo, int(d.State[j]), int(d.Action[j])
			if s < 0 || s >= nS {
				return nil, fmt.Errorf("%s: episode %q step %d: state %d outside [0, %d)", name, d.IDs[i], t, s, nS)
			}
			if a < 0 || a >= nA {
				return nil, fmt.Errorf("%s: episode %q step %d: action %d outside [0, %d)", name, d.IDs[i], t, a, nA)
			}
			if err := checkReward(name, d, i, j); err != nil {
				return nil, err
			}
			sa := s*nA + a
			rSum[sa] += d.Reward[j]
			rCnt[sa]++
			if next, ok := d.NextState(i, j); ok {
				if next < 0 || next >= nS {
					return nil, fmt.Errorf("%s: episode %q step %d: next state %d outside [0, %d)", name, d.IDs[i], t, next, nS)
				}
				m.visits[sa]++
			}
		}
		m.init[d.State[lo]]++
	}
	// Pass 2: next states grouped by (s,a) (a counting sort), so that the
	// next states of state s are next[off[s*nA]:off[(s+1)*nA]].
	off := make([]int, nSA+1)
	for sa, c := range m.visits {
		off[sa+1] = off[sa] + c
	}
	next := make([]int, off[nSA])
	pos := slices.Clone(off[:nSA])
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		for j := lo; j < hi; j++ {
			if ns, ok := d.NextState(i, j); ok {
				sa := int(d.State[j])*nA + int(d.Action[j])
				next[pos[sa]] = ns
				pos[sa]++
			}
		}
	}
	var runs []Run
	m.finish(d.NumEpisodes(), rSum, rCnt, func(sa int) []Run {
		seg := next[off[sa]:off[sa+1]]
		slices.Sort(seg)
		runs = runs[:0]
		for i := 0; i < len(seg); {
			j := i + 1
			for j < len(seg) && seg[j] == seg[i] {
				j++
			}
			runs = append(runs, Run{Next: seg[i], Count: j - i})
			i = j
		}
		return runs
	})
	return m, nil
}

// Run is a next state and the number of logged transitions into it.
type Run struct{ Next, Count int }

// NewCountModel builds the count model from its sufficient statistics,
// as a stream of shards gathers them (package ope's ModelBasedSums):
// init[s] counts the episodes starting in s (of episodes), rSum and rCnt
// the rewards logged at each pair s*nA+a, and runs(sa) returns the
// pair's next states with their counts, sorted by next state (it may
// reuse its result's memory between calls). Given the counts of a
// dataset it returns FitCountModel's model of it, number for number.
func NewCountModel(nS, nA int, init []float64, episodes int, rSum []float64, rCnt []int, runs func(sa int) []Run) (*CountModel, error) {
	if nS <= 0 || nA <= 0 || len(init) != nS || len(rSum) != nS*nA || len(rCnt) != nS*nA || episodes <= 0 {
		return nil, fmt.Errorf("count model: %d states, %d actions, %d episodes: counts of the wrong sizes", nS, nA, episodes)
	}
	m := &CountModel{nS: nS, nA: nA, init: slices.Clone(init), out: make([][]mdp.Outcome, nS*nA), visits: make([]int, nS*nA)}
	for sa := range m.visits {
		for _, r := range runs(sa) {
			m.visits[sa] += r.Count
		}
	}
	m.finish(episodes, rSum, rCnt, runs)
	return m, nil
}

// finish normalises the first-state counts and builds the outcomes from
// the reward sums and the runs of next states (the rules of CountModel).
func (m *CountModel) finish(episodes int, rSum []float64, rCnt []int, runs func(sa int) []Run) {
	nS, nA := m.nS, m.nA
	nSA := nS * nA
	for s := range m.init {
		m.init[s] /= float64(episodes)
	}
	globalSum, globalCnt := 0.0, 0
	for sa := range rSum {
		globalSum += rSum[sa]
		globalCnt += rCnt[sa]
	}
	globalMean := globalSum / float64(globalCnt) // globalCnt = the steps > 0

	// Outcomes. Runs are appended to one backing array and sliced at the
	// end.
	type span struct{ lo, hi int }
	spans := make([]span, nSA)
	backing := make([]mdp.Outcome, 0, nSA+nS)
	var pooled []Run // a state's runs pooled over its actions
	for s := range nS {
		stateSum, stateCnt, stateVisits := 0.0, 0, 0
		for a := range nA {
			stateSum += rSum[s*nA+a]
			stateCnt += rCnt[s*nA+a]
			stateVisits += m.visits[s*nA+a]
		}
		pooled = pooled[:0]
		var pooledDone bool
		for a := range nA {
			sa := s*nA + a
			r := globalMean
			switch {
			case rCnt[sa] > 0:
				r = rSum[sa] / float64(rCnt[sa])
			case stateCnt > 0:
				r = stateSum / float64(stateCnt)
			}
			lo := len(backing)
			switch {
			case m.visits[sa] > 0:
				backing = appendRuns(backing, runs(sa), r)
			case stateVisits > 0:
				if !pooledDone {
					for b := range nA {
						if m.visits[s*nA+b] > 0 {
							pooled = append(pooled, runs(s*nA+b)...)
						}
					}
					pooled = poolRuns(pooled)
					pooledDone = true
				}
				backing = appendRuns(backing, pooled, r)
			default:
				backing = append(backing, mdp.Outcome{Next: s, Prob: 1, Reward: r})
			}
			spans[sa] = span{lo, len(backing)}
		}
	}
	for sa, sp := range spans {
		m.out[sa] = backing[sp.lo:sp.hi:sp.hi]
	}
}

// poolRuns sorts runs by next state and sums the counts of equal ones.
func poolRuns(runs []Run) []Run {
	slices.SortFunc(runs, func(x, y Run) int { return x.Next - y.Next })
	out := runs[:0]
	for _, r := range runs {
		if n := len(out); n > 0 && out[n-1].Next == r.Next {
			out[n-1].Count += r.Count
			continue
		}
		out = append(out, r)
	}
	return out
}

// appendRuns appends one outcome per run, with probability its share of
// the runs' transitions and reward r.
func appendRuns(dst []mdp.Outcome, runs []Run, r float64) []mdp.Outcome {
	n := 0
	for _, x := range runs {
		n += x.Count
	}
	for _, x := range runs {
		dst = append(dst, mdp.Outcome{Next: x.Next, Prob: float64(x.Count) / float64(n), Reward: r})
	}
	return dst
}

// NumStates returns the dataset's number of states.
func (m *CountModel) NumStates() int { return m.nS }

// NumActions returns the dataset's number of actions.
func (m *CountModel) NumActions() int { return m.nA }

// Initial returns the empirical distribution of the logged first states.
// It must not be modified.
func (m *CountModel) Initial() []float64 { return m.init }

// Outcomes returns the fitted outcomes of action a in state s, sorted by
// next state. They must not be modified.
func (m *CountModel) Outcomes(s, a int) []mdp.Outcome { return m.out[s*m.nA+a] }

// Visits returns N(s,a), the number of logged transitions from s with
// action a; 0 means the outcomes of (s,a) come from the fallback rules.
func (m *CountModel) Visits(s, a int) int { return m.visits[s*m.nA+a] }

// checkEpisodes returns an error if d has no episodes or an empty one.
func checkEpisodes(name string, d *dataset.Dataset) error {
	if d == nil || d.NumEpisodes() == 0 {
		return fmt.Errorf("%s: no episodes", name)
	}
	for e := range d.NumEpisodes() {
		if d.Len(e) == 0 {
			return fmt.Errorf("%s: episode %q has no steps", name, d.IDs[e])
		}
	}
	return nil
}

// checkReward returns an error for a NaN or infinite reward at step j of
// episode e.
func checkReward(name string, d *dataset.Dataset, e, j int) error {
	if r := d.Reward[j]; r-r != 0 { // NaN or ±Inf
		return fmt.Errorf("%s: episode %q step %d: reward %v", name, d.IDs[e], j-d.Start[e], r)
	}
	return nil
}
