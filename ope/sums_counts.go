package ope

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/value"
)

// TabularCounts are the sufficient statistics of the tabular learners
// of discrete states and actions, per copy: the (s, a, s') transition
// counts, the rewards per (s, a) (over every step, the count model's
// r(s, a), and over the transitions only, the minimax learners'), the
// first-state counts, the (first state, length) pairs of the episodes
// (the horizon estimand reads the value of each start with its own
// steps left), the longest episode of each copy, and the target's rows,
// given (Target) or gathered from the logs' target_prob_k columns (Rows,
// as value.TableFromData does).
//
// From these the count model (value.NewCountModel, as value.FitCountModel
// builds it) and the state-action problem of mwl, dualdice and mql
// (kernelloss.FromCounts, as kernelloss.FromData builds it) follow number for
// number: keys are kept in order of first appearance, so that copy 0
// lists every pair's next states in the order the in-memory learners see
// them, and copy c those of the Poisson resample rebuilt as a dataset
// (ope.Bootstrap with Poisson set repeats each episode in place).
//
// ModelBasedSums, FQESums, PairRatioSums and MQLSums embed it and differ
// only in their final solve; being the same numbers, one TabularCounts
// can serve them all (CountSums: package stream fills one and shares it).
type TabularCounts struct {
	Gamma float64
	// Target holds the given target's rows (nil: gathered in Rows).
	Target [][]float64
	Rows   value.TargetRows
	// NumStates, NumActions are the largest the shards have shown.
	NumStates, NumActions int
	// Transitions are the (s, a, s') triples in order of first
	// appearance, Count[c][k] their counts in copy c.
	Transitions [][3]int32
	Count       [][]int64
	// Pairs are the (s, a) pairs in order of first appearance;
	// RewardSum[c][k] and RewardCount[c][k] their rewards over every step
	// in copy c, TransitionReward[c][k] over the steps with a known next
	// state.
	Pairs            [][2]int32
	RewardSum        []Floats
	RewardCount      [][]int64
	TransitionReward []Floats
	// Init[c][s] counts the episodes of copy c starting in s.
	Init     []Floats
	Episodes []int64
	MaxLen   []int
	// Starts are the (first state, length) pairs of the episodes in
	// order of first appearance, StartCount[c][k] their counts in copy c.
	Starts     [][2]int32
	StartCount [][]int64

	// pairAt[s][a] is the index of pair (s, a) (-1: none yet), succ[p]
	// the next states seen after pair p with their transitions' indices,
	// startAt the index of a start key.
	pairAt  [][]int32
	succ    [][]successor
	startAt map[[2]int32]int32
	// mu guards the lazy index in Finish, which may run concurrently.
	mu sync.Mutex
	// trBuf, prBuf are add's scratch: an episode's transitions and pairs.
	trBuf, prBuf []int32
}

// CountSums are the sums of the tabular learners, whose statistics are
// one TabularCounts: Counts returns it and SetCounts replaces it, so that
// several estimators over the same log can share one (package stream
// adds the episodes to the first and gives its counts to the others).
type CountSums interface {
	Sums
	Counts() *TabularCounts
	SetCounts(*TabularCounts)
}

// Counts returns the counts themselves (CountSums).
func (s *TabularCounts) Counts() *TabularCounts { return s }

// Shares reports whether s and o are counts of the same settings (the
// discount, the number of copies and the target), which one
// TabularCounts can serve.
func (s *TabularCounts) Shares(o *TabularCounts) bool {
	return s.Gamma == o.Gamma && len(s.Count) == len(o.Count) && reflect.DeepEqual(s.Target, o.Target)
}

type successor struct{ next, at int32 }

// newTabularCounts returns empty counts in copies copies, with the rows
// of target if it is not nil.
func newTabularCounts(gamma float64, copies int, target *policy.Tabular) *TabularCounts {
	s := &TabularCounts{Gamma: gamma, Count: make([][]int64, copies), RewardSum: make([]Floats, copies),
		RewardCount: make([][]int64, copies), TransitionReward: make([]Floats, copies), Init: make([]Floats, copies),
		Episodes: make([]int64, copies), MaxLen: make([]int, copies), StartCount: make([][]int64, copies)}
	if target != nil {
		for st := range target.NumStates() {
			s.Target = append(s.Target, slices.Clone(target.Row(st)))
		}
	}
	return s
}

// index rebuilds the lookup tables from Pairs, Transitions and Starts
// (after a decode, or on first use).
func (s *TabularCounts) index() {
	if s.pairAt != nil {
		return
	}
	s.pairAt = [][]int32{}
	for i, p := range s.Pairs {
		s.setPair(p, int32(i))
	}
	s.succ = make([][]successor, len(s.Pairs))
	for i, t := range s.Transitions {
		p := s.pairAt[t[0]][t[1]]
		s.succ[p] = append(s.succ[p], successor{next: t[2], at: int32(i)})
	}
	s.startAt = make(map[[2]int32]int32, len(s.Starts))
	for i, k := range s.Starts {
		s.startAt[k] = int32(i)
	}
}

// lockedIndex is index for Finish, which may run concurrently.
func (s *TabularCounts) lockedIndex() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index()
}

// setPair records that pair p has index i.
func (s *TabularCounts) setPair(p [2]int32, i int32) {
	st, a := int(p[0]), int(p[1])
	for len(s.pairAt) <= st {
		s.pairAt = append(s.pairAt, nil)
	}
	for len(s.pairAt[st]) <= a {
		s.pairAt[st] = append(s.pairAt[st], -1)
	}
	s.pairAt[st][a] = i
}

// pair returns the index of (s, a), adding it if new.
func (s *TabularCounts) pair(k [2]int32) int32 {
	s.index()
	if st, a := int(k[0]), int(k[1]); st < len(s.pairAt) && a < len(s.pairAt[st]) && s.pairAt[st][a] >= 0 {
		return s.pairAt[st][a]
	}
	i := int32(len(s.Pairs))
	s.Pairs = append(s.Pairs, k)
	s.setPair(k, i)
	s.succ = append(s.succ, nil)
	for c := range s.RewardSum {
		s.RewardSum[c] = append(s.RewardSum[c], 0)
		s.RewardCount[c] = append(s.RewardCount[c], 0)
		s.TransitionReward[c] = append(s.TransitionReward[c], 0)
	}
	return i
}

// transition returns the index of (s, a, next), pair p being (s, a),
// adding it if new: a scan of the pair's few next states.
func (s *TabularCounts) transition(p int32, k [3]int32) int32 {
	for _, x := range s.succ[p] {
		if x.next == k[2] {
			return x.at
		}
	}
	i := int32(len(s.Transitions))
	s.Transitions = append(s.Transitions, k)
	s.succ[p] = append(s.succ[p], successor{next: k[2], at: i})
	for c := range s.Count {
		s.Count[c] = append(s.Count[c], 0)
	}
	return i
}

// start returns the index of the start key (first state, length),
// adding it if new.
func (s *TabularCounts) start(k [2]int32) int32 {
	s.index()
	if i, ok := s.startAt[k]; ok {
		return i
	}
	i := int32(len(s.Starts))
	s.Starts = append(s.Starts, k)
	s.startAt[k] = i
	for c := range s.StartCount {
		s.StartCount[c] = append(s.StartCount[c], 0)
	}
	return i
}

// add adds episode e of d with multiplicities mult (Sums.Add), its errors
// prefixed by who (the embedding sums' estimator: "fqe", ...).
func (s *TabularCounts) add(who string, d *dataset.Dataset, e int, mult []int) error {
	if err := s.addEpisode(d, e, mult); err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	return nil
}

// addEpisode is add without the prefix. Its checks are
// value.FitCountModel's. A reward enters copy c's sums once per
// multiplicity, as in a resample holding the episode that many times, so
// the sums are the in-memory ones.
func (s *TabularCounts) addEpisode(d *dataset.Dataset, e int, mult []int) error {
	if !d.Discrete() || d.ActionDim != 0 || d.NumActions <= 0 {
		return errors.New("streams in its tabular form only, which needs discrete states and actions (NumStates > 0, NumActions > 0)")
	}
	lo, hi := d.Span(e)
	if hi == lo {
		return fmt.Errorf("episode %q has no steps", d.IDs[e])
	}
	if s.Target == nil {
		if err := s.Rows.Add(d, e); err != nil {
			return err
		}
	}
	s.NumStates, s.NumActions = max(s.NumStates, d.NumStates), max(s.NumActions, d.NumActions)
	for c := range s.Init {
		s.Init[c] = s.Init[c].grow(s.NumStates)
	}
	if n := hi - lo; cap(s.trBuf) < n {
		s.trBuf, s.prBuf = make([]int32, n), make([]int32, n)
	}
	tr, pr := s.trBuf[:hi-lo], s.prBuf[:hi-lo]
	for j := lo; j < hi; j++ {
		if r := d.Reward[j]; r-r != 0 {
			return fmt.Errorf("episode %q step %d: reward %v", d.IDs[e], j-lo, r)
		}
		st, a := d.State[j], d.Action[j]
		if st < 0 || int(st) >= d.NumStates {
			return fmt.Errorf("episode %q step %d: state %d outside [0, %d)", d.IDs[e], j-lo, st, d.NumStates)
		}
		if a < 0 || int(a) >= d.NumActions {
			return fmt.Errorf("episode %q step %d: action %d outside [0, %d)", d.IDs[e], j-lo, a, d.NumActions)
		}
		pr[j-lo] = s.pair([2]int32{st, a})
		tr[j-lo] = -1
		if next, ok := d.NextState(e, j); ok {
			if next < 0 || next >= d.NumStates {
				return fmt.Errorf("episode %q step %d: next state %d outside [0, %d)", d.IDs[e], j-lo, next, d.NumStates)
			}
			tr[j-lo] = s.transition(pr[j-lo], [3]int32{st, a, int32(next)})
		}
	}
	sk := s.start([2]int32{d.State[lo], int32(hi - lo)})
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.Episodes[c] += int64(k)
		s.Init[c][d.State[lo]] += float64(k)
		s.StartCount[c][sk] += int64(k)
		s.MaxLen[c] = max(s.MaxLen[c], hi-lo)
		rs, rc, tw, cnt := s.RewardSum[c], s.RewardCount[c], s.TransitionReward[c], s.Count[c]
		for range k {
			for j := lo; j < hi; j++ {
				p := pr[j-lo]
				rs[p] += d.Reward[j]
				rc[p]++
				if t := tr[j-lo]; t >= 0 {
					cnt[t]++
					tw[p] += d.Reward[j]
				}
			}
		}
	}
	return nil
}

// merge adds o's counts (Sums.Merge), which must be of the same settings.
func (s *TabularCounts) merge(name string, o *TabularCounts) error {
	if o == nil {
		return nil // a follower's counts, merged with its leader's (CountSums)
	}
	if o.Gamma != s.Gamma || len(o.Count) != len(s.Count) {
		return fmt.Errorf("%s: cannot merge sums of gamma %v, %d copies into gamma %v, %d copies", name, o.Gamma, len(o.Count), s.Gamma, len(s.Count))
	}
	if (o.Target == nil) != (s.Target == nil) {
		return fmt.Errorf("%s: cannot merge sums of a given target with sums of the logged one", name)
	}
	if s.Target == nil {
		if err := s.Rows.Merge(&o.Rows); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	s.NumStates, s.NumActions = max(s.NumStates, o.NumStates), max(s.NumActions, o.NumActions)
	for k, key := range o.Transitions {
		i := s.transition(s.pair([2]int32{key[0], key[1]}), key)
		for c := range s.Count {
			s.Count[c][i] += o.Count[c][k]
		}
	}
	for k, key := range o.Pairs {
		i := s.pair(key)
		for c := range s.RewardSum {
			s.RewardSum[c][i] += o.RewardSum[c][k]
			s.RewardCount[c][i] += o.RewardCount[c][k]
			s.TransitionReward[c][i] += o.TransitionReward[c][k]
		}
	}
	for k, key := range o.Starts {
		i := s.start(key)
		for c := range s.StartCount {
			s.StartCount[c][i] += o.StartCount[c][k]
		}
	}
	for c := range s.Init {
		s.Init[c] = s.Init[c].grow(s.NumStates)
		for st, x := range o.Init[c] {
			s.Init[c][st] += x
		}
		s.Episodes[c] += o.Episodes[c]
		s.MaxLen[c] = max(s.MaxLen[c], o.MaxLen[c])
	}
	return nil
}

// target returns the target policy: the given rows, or the table of the
// logged ones (value.TableFromData's).
func (s *TabularCounts) target() (*policy.Tabular, error) {
	if s.Target != nil {
		return policy.NewTabular(s.Target)
	}
	return s.Rows.Table(s.NumStates)
}

// checkTarget refuses a target of other sizes than the data's.
func (s *TabularCounts) checkTarget(pi *policy.Tabular) error {
	if pi.NumStates() != s.NumStates || pi.NumActions() != s.NumActions {
		return fmt.Errorf("target policy is %dx%d, dataset has %d states and %d actions",
			pi.NumStates(), pi.NumActions(), s.NumStates, s.NumActions)
	}
	return nil
}

// countModel returns copy c's count model (value.NewCountModel).
func (s *TabularCounts) countModel(c int) (*value.CountModel, error) {
	if s.Episodes[c] == 0 {
		return nil, fmt.Errorf("count model: no episodes")
	}
	nS, nA := s.NumStates, s.NumActions
	rSum, rCnt := make([]float64, nS*nA), make([]int, nS*nA)
	for k, p := range s.Pairs {
		sa := int(p[0])*nA + int(p[1])
		rSum[sa], rCnt[sa] = s.RewardSum[c][k], int(s.RewardCount[c][k])
	}
	// Group the transitions by (s, a), next states in increasing order.
	order := make([]int, 0, len(s.Transitions))
	for k := range s.Transitions {
		if s.Count[c][k] > 0 {
			order = append(order, k)
		}
	}
	key := func(k int) (int, int) {
		t := s.Transitions[k]
		return int(t[0])*nA + int(t[1]), int(t[2])
	}
	slices.SortFunc(order, func(x, y int) int {
		sx, nx := key(x)
		sy, ny := key(y)
		return cmp.Or(cmp.Compare(sx, sy), cmp.Compare(nx, ny))
	})
	start := make([]int, nS*nA+1)
	for _, k := range order {
		sa, _ := key(k)
		start[sa+1]++
	}
	for sa := range nS * nA {
		start[sa+1] += start[sa]
	}
	var runs []value.Run
	return value.NewCountModel(nS, nA, s.Init[c], int(s.Episodes[c]), rSum, rCnt, func(sa int) []value.Run {
		runs = runs[:0]
		for _, k := range order[start[sa]:start[sa+1]] {
			_, next := key(k)
			runs = append(runs, value.Run{Next: next, Count: int(s.Count[c][k])})
		}
		return runs
	})
}

// stateSteps returns the number of steps logged at each state in copy c.
func (s *TabularCounts) stateSteps(c int) []int {
	out := make([]int, s.NumStates)
	for k, p := range s.Pairs {
		out[p[0]] += int(s.RewardCount[c][k])
	}
	return out
}

// pairProblem returns copy c's state-action problem (kernelloss.FromCounts)
// with target pi.
func (s *TabularCounts) pairProblem(c int, pi policy.Discrete) (*kernelloss.Pairs, error) {
	if s.Episodes[c] == 0 {
		return nil, fmt.Errorf("no episodes")
	}
	s.lockedIndex()
	nS, nA := s.NumStates, s.NumActions
	count, rSum := make([]int32, nS*nA), make([]float64, nS*nA)
	at := make([]int32, nS*nA) // the pair's index
	for k, p := range s.Pairs {
		sa := int(p[0])*nA + int(p[1])
		at[sa], rSum[sa] = int32(k), s.TransitionReward[c][k]
		for _, x := range s.succ[k] {
			count[sa] += int32(s.Count[c][x.at])
		}
	}
	var states, counts []int32
	return kernelloss.FromCounts(nS, nA, s.Init[c], int(s.Episodes[c]), count, rSum, func(sa int) ([]int32, []int32) {
		states, counts = states[:0], counts[:0]
		for _, x := range s.succ[at[sa]] {
			if n := s.Count[c][x.at]; n > 0 {
				states, counts = append(states, x.next), append(counts, int32(n))
			}
		}
		return states, counts
	}, pi)
}

// startMean returns copy c's mean over episodes of f(first state,
// length), the estimators' read-out at the start states (startValue).
func (s *TabularCounts) startMean(c int, f func(s, length int) float64) float64 {
	sum := 0.0
	for k, key := range s.Starts {
		if n := s.StartCount[c][k]; n > 0 {
			sum += float64(n) * f(int(key[0]), int(key[1]))
		}
	}
	return sum / float64(s.Episodes[c])
}

// pairSums are the sums over copy c's transitions j of a state-action
// ratio w_j = w(s_j, a_j): Num = sum_j w_j r_j, Den = sum_j w_j, N the
// number of transitions, and for the weights' diagnostics Abs =
// sum_j |w_j|, Sq = sum_j w_j^2 and Top = max_j |w_j|.
type pairSums struct {
	Num, Den, Abs, Sq, Top float64
	N                      int
}

// pairWeights returns copy c's pairSums of the ratio w.
func (s *TabularCounts) pairWeights(c int, w func(s, a int) float64) pairSums {
	s.lockedIndex()
	var out pairSums
	for k, p := range s.Pairs {
		cnt := int64(0)
		for _, x := range s.succ[k] {
			cnt += s.Count[c][x.at]
		}
		if cnt == 0 {
			continue
		}
		wk := w(int(p[0]), int(p[1]))
		n := float64(cnt)
		out.Num += wk * s.TransitionReward[c][k]
		out.Den += wk * n
		out.Abs += math.Abs(wk) * n
		out.Sq += wk * wk * n
		out.Top = math.Max(out.Top, math.Abs(wk))
		out.N += int(cnt)
	}
	return out
}
