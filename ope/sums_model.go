package ope

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/exact"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/value"
)

var _ Summer = (*ModelBased)(nil)

// ModelBasedSums are model-based's statistics under the horizon
// estimand: the count model's sufficient statistics (value.CountModel:
// the (s, a, s') transition counts, the reward sums and counts per
// (s, a), the first-state counts) per copy, the longest episode of each
// copy (the horizon T when Horizon is 0), and the target's rows, given
// (Target) or gathered from the logs' target_prob_k columns (Rows, as
// value.TableFromData does). Finish builds the count model with
// value.NewCountModel and pushes the logged starts through it for T steps
// with exact.Value, the in-memory estimator's own computation.
type ModelBasedSums struct {
	Gamma   float64
	Horizon int
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
	// RewardSum[c][k] and RewardCount[c][k] their rewards in copy c.
	Pairs       [][2]int32
	RewardSum   []Floats
	RewardCount [][]int64
	// Init[c][s] counts the episodes of copy c starting in s.
	Init     []Floats
	Episodes []int64
	MaxLen   []int

	// pairAt[s][a] is the index of pair (s, a) (-1: none yet), succ[p]
	// the next states seen after pair p with their transitions' indices.
	pairAt [][]int32
	succ   [][]successor
}

type successor struct{ next, at int32 }

// NewSums implements Summer under the horizon estimand (the long-run
// value solves a model fitted to every step, which does not stream here).
func (e *ModelBased) NewSums(gamma float64, copies int) (Sums, error) {
	const name = "model-based"
	if err := checkSumsArgs(name, gamma, copies); err != nil {
		return nil, err
	}
	if e.Estimand.orDefault() != Horizon {
		return nil, fmt.Errorf("%s cannot stream under the %s estimand (it solves the fitted model's long-run value on every step at once); ask for --estimand horizon", name, e.Estimand)
	}
	if e.Horizon < 0 {
		return nil, fmt.Errorf("%s: horizon %d", name, e.Horizon)
	}
	s := &ModelBasedSums{Gamma: gamma, Horizon: e.Horizon, Count: make([][]int64, copies), RewardSum: make([]Floats, copies),
		RewardCount: make([][]int64, copies), Init: make([]Floats, copies), Episodes: make([]int64, copies), MaxLen: make([]int, copies)}
	if e.Target != nil {
		for st := range e.Target.NumStates() {
			s.Target = append(s.Target, slices.Clone(e.Target.Row(st)))
		}
	}
	return s, nil
}

// index rebuilds the lookup tables from Pairs and Transitions (after a
// decode, or on first use).
func (s *ModelBasedSums) index() {
	if s.pairAt != nil {
		return
	}
	s.pairAt = [][]int32{}
	s.succ = nil
	for i, p := range s.Pairs {
		s.setPair(p, int32(i))
	}
	s.succ = make([][]successor, len(s.Pairs))
	for i, t := range s.Transitions {
		p := s.pairAt[t[0]][t[1]]
		s.succ[p] = append(s.succ[p], successor{next: t[2], at: int32(i)})
	}
}

// setPair records that pair p has index i.
func (s *ModelBasedSums) setPair(p [2]int32, i int32) {
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
func (s *ModelBasedSums) pair(k [2]int32) int32 {
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
	}
	return i
}

// transition returns the index of (s, a, next), pair p being (s, a),
// adding it if new: a scan of the pair's few next states.
func (s *ModelBasedSums) transition(p int32, k [3]int32) int32 {
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

// Add implements Sums. Its checks are value.FitCountModel's. A reward
// enters copy c's sums once per multiplicity, as in a resample holding
// the episode that many times, so the sums are the in-memory ones.
func (s *ModelBasedSums) Add(d *dataset.Dataset, e int, mult []int) error {
	const name = "model-based: count model"
	if !d.Discrete() || d.ActionDim != 0 {
		return fmt.Errorf("%s: needs discrete states and actions (NumStates > 0, NumActions > 0)", name)
	}
	lo, hi := d.Span(e)
	if hi == lo {
		return fmt.Errorf("%s: episode %q has no steps", name, d.IDs[e])
	}
	if s.Target == nil {
		if err := s.Rows.Add(d, e); err != nil {
			return fmt.Errorf("model-based: %w", err)
		}
	}
	s.NumStates, s.NumActions = max(s.NumStates, d.NumStates), max(s.NumActions, d.NumActions)
	for c := range s.Init {
		s.Init[c] = s.Init[c].grow(s.NumStates)
	}
	tr := make([]int32, hi-lo)
	pr := make([]int32, hi-lo)
	for j := lo; j < hi; j++ {
		if r := d.Reward[j]; r-r != 0 {
			return fmt.Errorf("%s: episode %q step %d: reward %v", name, d.IDs[e], j-lo, r)
		}
		st, a := d.State[j], d.Action[j]
		pr[j-lo] = s.pair([2]int32{st, a})
		tr[j-lo] = -1
		if next, ok := d.NextState(e, j); ok {
			tr[j-lo] = s.transition(pr[j-lo], [3]int32{st, a, int32(next)})
		}
	}
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.Episodes[c] += int64(k)
		s.Init[c][d.State[lo]] += float64(k)
		s.MaxLen[c] = max(s.MaxLen[c], hi-lo)
		rs, rc, cnt := s.RewardSum[c], s.RewardCount[c], s.Count[c]
		for range k {
			for j := lo; j < hi; j++ {
				p := pr[j-lo]
				rs[p] += d.Reward[j]
				rc[p]++
				if t := tr[j-lo]; t >= 0 {
					cnt[t]++
				}
			}
		}
	}
	return nil
}

// Merge implements Sums.
func (s *ModelBasedSums) Merge(o Sums) error {
	t, err := mergeCheck("model-based", o, s.Gamma, len(s.Count), func(t *ModelBasedSums) (float64, int) { return t.Gamma, len(t.Count) })
	if err != nil {
		return err
	}
	if t.Horizon != s.Horizon || (t.Target == nil) != (s.Target == nil) {
		return fmt.Errorf("model-based: cannot merge sums of other settings")
	}
	if s.Target == nil {
		if err := s.Rows.Merge(&t.Rows); err != nil {
			return fmt.Errorf("model-based: %w", err)
		}
	}
	s.NumStates, s.NumActions = max(s.NumStates, t.NumStates), max(s.NumActions, t.NumActions)
	for k, key := range t.Transitions {
		i := s.transition(s.pair([2]int32{key[0], key[1]}), key)
		for c := range s.Count {
			s.Count[c][i] += t.Count[c][k]
		}
	}
	for k, key := range t.Pairs {
		i := s.pair(key)
		for c := range s.RewardSum {
			s.RewardSum[c][i] += t.RewardSum[c][k]
			s.RewardCount[c][i] += t.RewardCount[c][k]
		}
	}
	for c := range s.Init {
		s.Init[c] = s.Init[c].grow(s.NumStates)
		for st, x := range t.Init[c] {
			s.Init[c][st] += x
		}
		s.Episodes[c] += t.Episodes[c]
		s.MaxLen[c] = max(s.MaxLen[c], t.MaxLen[c])
	}
	return nil
}

// Finish implements Sums.
func (s *ModelBasedSums) Finish(c int) (Result, WeightSummary, error) {
	const name = "model-based"
	if s.Episodes[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: count model: no episodes", name)
	}
	var target *policy.Tabular
	var err error
	if s.Target != nil {
		target, err = policy.NewTabular(s.Target)
	} else {
		target, err = s.Rows.Table(s.NumStates)
	}
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
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
	m, err := value.NewCountModel(nS, nA, s.Init[c], int(s.Episodes[c]), rSum, rCnt, func(sa int) []value.Run {
		runs = runs[:0]
		for _, k := range order[start[sa]:start[sa+1]] {
			_, next := key(k)
			runs = append(runs, value.Run{Next: next, Count: int(s.Count[c][k])})
		}
		return runs
	})
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	if target.NumStates() != nS || target.NumActions() != nA {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: target policy is %dx%d, dataset has %d states and %d actions",
			name, target.NumStates(), target.NumActions(), nS, nA)
	}
	T := s.Horizon
	if T == 0 {
		T = s.MaxLen[c]
	}
	v := exact.Value(m, target, m.Initial(), T, s.Gamma)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: value %v", name, v)
	}
	return Result{Value: v, Model: m, Estimand: Horizon, Learner: "tabular"}, WeightSummary{}, nil
}
