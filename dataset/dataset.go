package dataset

import (
	"fmt"
	"math"
	"slices"
)

// Dataset is a set of episodes logged under one behavior policy, stored
// as columns: one slice per field with one entry per step (a real vector
// as a row-major block of StateDim or ActionDim entries per step), steps
// in episode order, and episodes as offsets into the columns. Step j of
// the whole log is step t = j - Start[e] of episode e when
// Start[e] <= j < Start[e+1].
//
// The next state of a step is the state of the step after it in its
// episode, so it is not stored; only the state after an episode's last
// step is (FinalState, FinalObs), when the log gives it (HasFinal).
//
// A discrete-state log costs 32 bytes a step (two int32 ids and three
// float64s), against about 260 for the step structs ihope used before,
// and 8 bytes more per action with TargetProbs.
// A Dataset is read-only once built: estimators and learners share it.
// Build one with a Builder (or New), or read one with ReadFile.
type Dataset struct {
	// IDs are the episode ids, in order.
	IDs []string
	// Start holds the episodes' offsets: episode e spans steps
	// Start[e] to Start[e+1]-1. len(Start) = len(IDs) + 1.
	Start []int

	// State is the discrete state id of every step (nil for real
	// states); Obs the real state vectors, StateDim per step (nil for
	// discrete states).
	State []int32
	Obs   []float64
	// Action is the discrete action id of every step (nil for real
	// actions); ActionVec the real action vectors, ActionDim per step.
	Action    []int32
	ActionVec []float64
	// Reward is the reward of every step.
	Reward []float64
	// LogBehavior is log pi0(a_t|s_t) and LogTarget log pi(a_t|s_t) of
	// every step: log-probabilities for discrete actions, log-densities
	// for real ones. LogTarget may be -Inf (the target never takes a_t).
	// LogBehavior is nil when the log carries no behavior probabilities
	// (HasBehavior false); the estimators that need them refuse such a
	// log, and package behavior fits them from the logged actions.
	LogBehavior []float64
	LogTarget   []float64

	// TargetProbs, if not nil, is the target's whole action distribution
	// pi(k|s_j) at every step, NumActions entries per step (discrete
	// actions; the target_prob_k columns or a target policy file, see
	// SetTargetPolicy). FinalTargetProbs holds pi(k|s') at the state after
	// each episode's last step, NumActions per episode, where
	// HasFinalTarget says it is known (the next_target_prob_k columns);
	// it is zero where not known. HasFinalTarget implies HasFinal. Without
	// TargetProbs, FinalTargetProbs and HasFinalTarget are nil too.
	TargetProbs      []float64
	FinalTargetProbs []float64
	HasFinalTarget   []bool

	// HasFinal reports, per episode, whether the state after its last
	// step is known; FinalState (discrete, -1 if unknown) and FinalObs
	// (real, StateDim per episode, zero if unknown) hold it.
	HasFinal   []bool
	FinalState []int32
	FinalObs   []float64

	// Terminal, if not nil, says per episode whether its last step ended
	// in a terminal state (the terminal column, d3rlpy's terminals): the
	// process then sits in an absorbing state with reward 0 under every
	// action for the rest of the horizon. An episode with Terminal false
	// was merely cut off. Terminal is nil when the log has no terminal
	// column; then every episode was cut off. A terminal episode's final
	// state (HasFinal), if given, is the state observed at the end; the
	// estimators replace it by the absorbing state (Absorbing).
	Terminal []bool

	// Tail, if not nil, says per episode that its last step is in an
	// absorbing state the process never leaves: set on the padded form of
	// an episodic log made for a discounted long-run value (package ope),
	// never read from or written to a file. A learner or estimator that
	// weighs step t by gamma^t, for the discounted visitation, counts that
	// step for itself and every later one: gamma^t/(1 - gamma)
	// (DiscountTail).
	Tail []bool

	// Horizon, if above the longest episode's length, is the horizon T
	// the estimators pad terminal episodes to (package ope's absorbing):
	// a bootstrap resample of an episodic log keeps the whole log's, so
	// that a resample without the longest episode estimates the same
	// T-step value. Subsets keep it; never read from or written to a
	// file.
	Horizon int

	// cuts, if not nil, holds the steps whose next state is not the
	// state of the step after them although both lie in one episode: the
	// block ends of a moving-block bootstrap resample (Blocks), where each
	// step keeps its logged transition. It maps a step to its next state.
	cuts map[int]next

	// NumStates is the number of discrete states (ids are 0..NumStates-1);
	// it is 0 when states are real vectors.
	NumStates int
	// NumActions is the number of discrete actions, 0 for real actions.
	NumActions int
	// StateDim is the length of a real state vector, 0 for discrete states.
	StateDim int
	// ActionDim is the length of a real action vector, 0 for discrete
	// actions.
	ActionDim int

	// Policy names the target policy whose probabilities LogTarget and
	// TargetProbs hold when the log names its target policies
	// (target_prob@NAME, target_prob_k@NAME, ...; "" when its target
	// columns are unnamed), and Policies lists every policy the log names,
	// in the order of its columns. A reader reads one policy's columns
	// (ReadOptions.Policy, the first by default); ReadPolicies reads them
	// all.
	Policy   string
	Policies []string

	// Origin, for a file read as a shard (ReadOptions.Shard), says where
	// its episodes begin in the file; nil otherwise, and for datasets
	// derived from one (Subset, Head, Blocks).
	Origin *Origin
}

// Origin is where a shard's episodes begin in its file.
type Origin struct {
	// FirstT is the t of the first episode's first step: 0, or more when
	// the episode continues the previous shard's last one.
	FirstT int
	// Rows holds, per episode, the file row of its first step, counted
	// as FormatError counts rows.
	Rows []int
}

// Discrete reports whether the states are discrete ids.
func (d *Dataset) Discrete() bool { return d.StateDim == 0 }

// NumEpisodes returns the number of episodes.
func (d *Dataset) NumEpisodes() int { return len(d.IDs) }

// NumSteps returns the total number of logged steps.
func (d *Dataset) NumSteps() int { return len(d.Reward) }

// Span returns the steps [lo, hi) of episode e.
func (d *Dataset) Span(e int) (lo, hi int) { return d.Start[e], d.Start[e+1] }

// Len returns the number of steps of episode e.
func (d *Dataset) Len(e int) int { return d.Start[e+1] - d.Start[e] }

// MaxLen returns the length of the longest episode.
func (d *Dataset) MaxLen() int {
	m := 0
	for e := range d.IDs {
		m = max(m, d.Len(e))
	}
	return m
}

// IDOrder returns the episodes' indices in the natural order of their ids
// (NaturalLess; equal ids, as in a bootstrap resample, keep their order in
// d). Whatever works by an episode's place rather than by its id, a
// bootstrap's draws or cross-fitting folds, goes by this order, so that
// its result depends on the log and not on the order its episodes were
// written in; for the logs ihope writes (ids 0, 1, 2, ...) it is 0, 1,
// 2, ....
func (d *Dataset) IDOrder() []int {
	order := make([]int, len(d.IDs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		switch a, b := d.IDs[x], d.IDs[y]; {
		case a == b:
			return 0
		case NaturalLess(a, b):
			return -1
		}
		return 1
	})
	return order
}

// NumIDs returns the number of distinct episode ids (fewer than the
// episodes in a bootstrap resample, whose copies of an episode keep its
// id).
func (d *Dataset) NumIDs() int {
	seen := make(map[string]struct{}, len(d.IDs))
	for _, id := range d.IDs {
		seen[id] = struct{}{}
	}
	return len(seen)
}

// EpisodeFolds returns the cross-fitting fold of every episode: the i-th
// distinct id in the natural order of the ids (IDOrder) is in fold
// i mod K. The copies of one episode in a bootstrap resample share a
// fold, so a model fitted on the other folds never sees the steps it is
// judged on, and the folds depend on the log, not on the order its
// episodes were written in.
func (d *Dataset) EpisodeFolds(K int) []int {
	fold := make([]int, len(d.IDs))
	order := d.IDOrder()
	i := -1
	for r, e := range order {
		if r == 0 || d.IDs[e] != d.IDs[order[r-1]] {
			i++
		}
		fold[e] = i % K
	}
	return fold
}

// TargetStates calls f with every real state at which a value model
// reads the target's actions: each logged state (episode e, step t) and,
// where the log gives it, the state after an episode's last step (final
// true, t its last step), except after a terminal step, whose absorbing
// state has its action fixed by the padding (Absorbing). It stops when f
// returns false. It needs real states (StateDim > 0).
func (d *Dataset) TargetStates(f func(obs []float64, e, t int, final bool) bool) {
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if !f(d.ObsAt(j), e, j-lo, false) {
				return
			}
		}
		if d.HasFinal[e] && !d.IsTerminal(e) && !f(d.FinalObs[e*d.StateDim:(e+1)*d.StateDim], e, hi-1-lo, true) {
			return
		}
	}
}

// MinLen returns the length of the shortest episode (0 for no episodes).
func (d *Dataset) MinLen() int {
	m := 0
	for e := range d.IDs {
		if l := d.Len(e); e == 0 || l < m {
			m = l
		}
	}
	return m
}

// IsTerminal reports whether episode e ended in a terminal state.
func (d *Dataset) IsTerminal(e int) bool { return d.Terminal != nil && d.Terminal[e] }

// DiscountTail returns the factor of the discounted weight gamma^t of
// episode e's last step: 1/(1 - gamma) if the episode stays in its last,
// absorbing state for ever (Tail) and gamma < 1, 1 otherwise.
func (d *Dataset) DiscountTail(e int, gamma float64) float64 {
	if d.Tail == nil || !d.Tail[e] || gamma >= 1 {
		return 1
	}
	return 1 / (1 - gamma)
}

// Discounts returns the discounted weight of every step: gamma^t for step
// t of its episode, times DiscountTail at an episode's last step.
func (d *Dataset) Discounts(gamma float64) []float64 {
	g := make([]float64, d.NumSteps())
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		v := 1.0
		for j := lo; j < hi; j++ {
			g[j] = v
			v *= gamma
		}
		if hi > lo {
			g[hi-1] *= d.DiscountTail(e, gamma)
		}
	}
	return g
}

// NumTerminal returns the number of episodes that ended in a terminal
// state.
func (d *Dataset) NumTerminal() int {
	n := 0
	for _, t := range d.Terminal {
		if t {
			n++
		}
	}
	return n
}

// HasBehavior reports whether the log carries the behavior policy's
// probability of every logged action (LogBehavior).
func (d *Dataset) HasBehavior() bool { return d.LogBehavior != nil }

// LogRatio returns log beta(a_j|s_j) = log pi(a_j|s_j) - log pi0(a_j|s_j)
// of step j. It needs the behavior probabilities (HasBehavior).
func (d *Dataset) LogRatio(j int) float64 { return d.LogTarget[j] - d.LogBehavior[j] }

// ObsAt returns the real state vector of step j (shared, not copied).
func (d *Dataset) ObsAt(j int) []float64 {
	k := d.StateDim
	return d.Obs[j*k : (j+1)*k : (j+1)*k]
}

// ActionVecAt returns the real action vector of step j (shared).
func (d *Dataset) ActionVecAt(j int) []float64 {
	k := d.ActionDim
	return d.ActionVec[j*k : (j+1)*k : (j+1)*k]
}

// NextState returns the discrete state after step j of episode e and
// whether it is known (only the last step's may be unknown).
func (d *Dataset) NextState(e, j int) (int, bool) {
	if d.cuts != nil {
		if c, ok := d.cuts[j]; ok {
			return int(c.state), c.ok
		}
	}
	if j+1 < d.Start[e+1] {
		return int(d.State[j+1]), true
	}
	return int(d.FinalState[e]), d.HasFinal[e]
}

// NextObs returns the real state vector after step j of episode e
// (shared) and whether it is known.
func (d *Dataset) NextObs(e, j int) ([]float64, bool) {
	if d.cuts != nil {
		if c, ok := d.cuts[j]; ok {
			return c.obs, c.ok
		}
	}
	if j+1 < d.Start[e+1] {
		return d.ObsAt(j + 1), true
	}
	if !d.HasFinal[e] {
		return nil, false
	}
	k := d.StateDim
	return d.FinalObs[e*k : (e+1)*k : (e+1)*k], true
}

// HasTargetProbs reports whether the log carries the target's whole
// action distribution at every step.
func (d *Dataset) HasTargetProbs() bool { return d.TargetProbs != nil }

// TargetProbsAt returns pi(.|s_j), the target's action distribution at
// the state of step j (shared); nil if the log does not carry it.
func (d *Dataset) TargetProbsAt(j int) []float64 {
	if d.TargetProbs == nil {
		return nil
	}
	k := d.NumActions
	return d.TargetProbs[j*k : (j+1)*k : (j+1)*k]
}

// NextTargetProbs returns pi(.|s'_j), the target's action distribution at
// the state after step j of episode e (shared), and whether it is known:
// the next step's row, or the episode's final row after its last step.
func (d *Dataset) NextTargetProbs(e, j int) ([]float64, bool) {
	if d.TargetProbs == nil {
		return nil, false
	}
	if d.cuts != nil {
		if _, ok := d.cuts[j]; ok {
			return nil, false // a block end: the logged next state's row is elsewhere
		}
	}
	if j+1 < d.Start[e+1] {
		return d.TargetProbsAt(j + 1), true
	}
	if d.HasFinalTarget == nil || !d.HasFinalTarget[e] {
		return nil, false
	}
	k := d.NumActions
	return d.FinalTargetProbs[e*k : (e+1)*k : (e+1)*k], true
}

// Step returns step j of episode e in row form (vectors shared), for
// code that reads a dataset one step at a time and for tests.
func (d *Dataset) Step(e, j int) Step {
	s := Step{State: -1, Action: -1, NextState: -1, Reward: d.Reward[j],
		LogBehavior: math.NaN(), LogTarget: d.LogTarget[j], TargetProbs: d.TargetProbsAt(j)}
	if d.LogBehavior != nil {
		s.LogBehavior = d.LogBehavior[j]
	}
	s.NextTargetProbs, _ = d.NextTargetProbs(e, j)
	s.Terminal = j == d.Start[e+1]-1 && d.IsTerminal(e)
	if d.StateDim == 0 {
		s.State = int(d.State[j])
		s.NextState, s.HasNext = d.NextState(e, j)
		if !s.HasNext {
			s.NextState = -1
		}
	} else {
		s.Obs = d.ObsAt(j)
		s.NextObs, s.HasNext = d.NextObs(e, j)
	}
	if d.ActionDim == 0 {
		s.Action = int(d.Action[j])
	} else {
		s.ActionVec = d.ActionVecAt(j)
	}
	return s
}

// Episode returns episode e in row form (vectors shared).
func (d *Dataset) Episode(e int) Episode {
	lo, hi := d.Span(e)
	ep := Episode{ID: d.IDs[e], Steps: make([]Step, hi-lo)}
	for j := lo; j < hi; j++ {
		ep.Steps[j-lo] = d.Step(e, j)
	}
	return ep
}

// Episodes returns every episode in row form. It copies every step into a
// struct of about 200 bytes; estimators read the columns instead.
func (d *Dataset) Episodes() []Episode {
	out := make([]Episode, d.NumEpisodes())
	for e := range out {
		out[e] = d.Episode(e)
	}
	return out
}

// Subset returns a dataset made of the episodes at the given indices
// (repeats allowed, as a bootstrap resample needs), copied. A repeated
// episode keeps its id, so the result may have duplicate ids; it is meant
// for estimation, not for writing.
func (d *Dataset) Subset(idx []int) *Dataset {
	b := d.derive()
	for _, e := range idx {
		b.appendSpan(d, e, d.Start[e], d.Start[e+1])
	}
	return b
}

// Head returns the first n episodes of d, each cut to its first T steps
// (an episode with fewer steps is kept whole), copied. A cut episode's
// final state is the state of its step T. Head panics if n exceeds the
// number of episodes or n or T is negative.
//
// It serves experiments that log the longest episodes once and take
// every smaller dataset as a prefix, so that, within a seed, the dataset
// of n = 50 is the start of the dataset of n = 500 (common random
// numbers across the points of a curve).
func (d *Dataset) Head(n, T int) *Dataset {
	if n < 0 || T < 0 || n > d.NumEpisodes() {
		panic(fmt.Sprintf("dataset: Head(%d, %d) of %d episodes", n, T, d.NumEpisodes()))
	}
	out := d.derive()
	for e := range n {
		lo, hi := d.Span(e)
		out.appendSpan(d, e, lo, min(hi, lo+T))
	}
	return out
}

// Blocks returns a one-episode dataset whose steps are copies of the
// steps [starts[k], starts[k]+lens[k]) of d's only episode, block after
// block, as the moving-block bootstrap builds them. Each block keeps its
// logged transitions: the state after a block's last step is its logged
// next state, so the result's final state is that of the last block. It
// panics if d has more than one episode.
func (d *Dataset) Blocks(starts, lens []int) *Dataset {
	if d.NumEpisodes() != 1 {
		panic(fmt.Sprintf("dataset: Blocks of %d episodes", d.NumEpisodes()))
	}
	out := d.derive()
	out.IDs = append(out.IDs, d.IDs[0])
	for k, s := range starts {
		if k > 0 {
			// The previous block's last step keeps its logged next state.
			if out.cuts == nil {
				out.cuts = map[int]next{}
			}
			p := starts[k-1] + lens[k-1] - 1
			var c next
			if d.StateDim == 0 {
				var ns int
				ns, c.ok = d.NextState(0, p)
				c.state = int32(ns)
			} else {
				c.obs, c.ok = d.NextObs(0, p)
				c.state = -1
			}
			out.cuts[len(out.Reward)-1] = c
		}
		out.appendColumns(d, s, s+lens[k])
	}
	out.Start = append(out.Start, len(out.Reward))
	last := starts[len(starts)-1] + lens[len(lens)-1]
	out.appendFinal(d, 0, last-1)
	if out.Terminal != nil {
		out.Terminal = append(out.Terminal, d.IsTerminal(0) && last == d.Start[1])
	}
	if out.Tail != nil {
		out.Tail = append(out.Tail, d.Tail[0] && last == d.Start[1])
	}
	return out
}

// next is a next state kept apart from the columns (see Dataset.cuts).
type next struct {
	state int32
	obs   []float64
	ok    bool // known (false after an episode's last step without one)
}

// derive returns an empty dataset with d's sizes (and LogBehavior and
// TargetProbs, empty, if d has them).
func (d *Dataset) derive() *Dataset {
	out := &Dataset{NumStates: d.NumStates, NumActions: d.NumActions, StateDim: d.StateDim,
		ActionDim: d.ActionDim, Start: []int{0}, Policy: d.Policy, Policies: d.Policies, Horizon: d.Horizon}
	if d.LogBehavior != nil {
		out.LogBehavior = []float64{}
	}
	if d.TargetProbs != nil {
		out.TargetProbs, out.FinalTargetProbs, out.HasFinalTarget = []float64{}, []float64{}, []bool{}
	}
	if d.Terminal != nil {
		out.Terminal = []bool{}
	}
	if d.Tail != nil {
		out.Tail = []bool{}
	}
	return out
}

// appendSpan appends steps [lo, hi) of d's episode e as a new episode;
// its final state is the state after step hi-1.
func (out *Dataset) appendSpan(d *Dataset, e, lo, hi int) {
	out.IDs = append(out.IDs, d.IDs[e])
	out.appendColumns(d, lo, hi)
	out.Start = append(out.Start, len(out.Reward))
	out.appendFinal(d, e, hi-1)
	if out.Terminal != nil {
		// A cut episode (Head) did not reach its terminal step.
		out.Terminal = append(out.Terminal, d.IsTerminal(e) && hi == d.Start[e+1])
	}
	if out.Tail != nil {
		out.Tail = append(out.Tail, d.Tail[e] && hi == d.Start[e+1])
	}
}

// appendColumns appends the columns of steps [lo, hi) of d.
func (out *Dataset) appendColumns(d *Dataset, lo, hi int) {
	if d.StateDim == 0 {
		out.State = append(out.State, d.State[lo:hi]...)
	} else {
		out.Obs = append(out.Obs, d.Obs[lo*d.StateDim:hi*d.StateDim]...)
	}
	if d.ActionDim == 0 {
		out.Action = append(out.Action, d.Action[lo:hi]...)
	} else {
		out.ActionVec = append(out.ActionVec, d.ActionVec[lo*d.ActionDim:hi*d.ActionDim]...)
	}
	out.Reward = append(out.Reward, d.Reward[lo:hi]...)
	if d.LogBehavior != nil {
		out.LogBehavior = append(out.LogBehavior, d.LogBehavior[lo:hi]...)
	}
	out.LogTarget = append(out.LogTarget, d.LogTarget[lo:hi]...)
	if k := d.NumActions; d.TargetProbs != nil {
		out.TargetProbs = append(out.TargetProbs, d.TargetProbs[lo*k:hi*k]...)
	}
}

// appendFinal appends, as the final state of out's last episode, the
// state after step j of d's episode e, and the target's distribution
// there (none after a block end, see NextTargetProbs).
func (out *Dataset) appendFinal(d *Dataset, e, j int) {
	if d.TargetProbs != nil {
		v, ok := d.NextTargetProbs(e, j)
		if !ok {
			v = make([]float64, d.NumActions)
		}
		out.FinalTargetProbs = append(out.FinalTargetProbs, v...)
		out.HasFinalTarget = append(out.HasFinalTarget, ok)
	}
	if d.StateDim == 0 {
		s, ok := d.NextState(e, j)
		if !ok {
			s = -1
		}
		out.FinalState = append(out.FinalState, int32(s))
		out.HasFinal = append(out.HasFinal, ok)
		return
	}
	v, ok := d.NextObs(e, j)
	if !ok {
		v = make([]float64, d.StateDim)
	}
	out.FinalObs = append(out.FinalObs, v...)
	out.HasFinal = append(out.HasFinal, ok)
}

// Clone returns a deep copy of d.
func (d *Dataset) Clone() *Dataset {
	c := *d
	c.IDs = slices.Clone(d.IDs)
	c.Start = slices.Clone(d.Start)
	c.State = slices.Clone(d.State)
	c.Obs = slices.Clone(d.Obs)
	c.Action = slices.Clone(d.Action)
	c.ActionVec = slices.Clone(d.ActionVec)
	c.Reward = slices.Clone(d.Reward)
	c.LogBehavior = slices.Clone(d.LogBehavior)
	c.LogTarget = slices.Clone(d.LogTarget)
	c.HasFinal = slices.Clone(d.HasFinal)
	c.FinalState = slices.Clone(d.FinalState)
	c.FinalObs = slices.Clone(d.FinalObs)
	c.TargetProbs = slices.Clone(d.TargetProbs)
	c.FinalTargetProbs = slices.Clone(d.FinalTargetProbs)
	c.HasFinalTarget = slices.Clone(d.HasFinalTarget)
	c.Policies = slices.Clone(d.Policies)
	c.Terminal = slices.Clone(d.Terminal)
	c.Tail = slices.Clone(d.Tail)
	return &c
}

// Step is one logged transition (s_t, a_t, r_t, s_{t+1}) in row form, the
// form in which code builds a dataset (Builder.Add, New) and reads one
// step at a time (Dataset.Step).
//
// Discrete states use State and NextState (ids >= 0) and leave Obs and
// NextObs nil; real-valued states use Obs and NextObs and set State and
// NextState to -1. The same holds for Action and ActionVec.
type Step struct {
	State     int
	Obs       []float64
	Action    int
	ActionVec []float64
	Reward    float64

	// HasNext reports whether the next state is known. It is false only
	// for the last step of an episode whose log carries no next state.
	HasNext   bool
	NextState int
	NextObs   []float64

	// LogBehavior is log pi0(a_t|s_t) and LogTarget is log pi(a_t|s_t):
	// log-probabilities for discrete actions, log-densities for real ones.
	// Dataset.Step gives LogBehavior = NaN for a log without behavior
	// probabilities.
	LogBehavior float64
	LogTarget   float64

	// TargetProbs, if not nil, is the target's whole action distribution
	// pi(.|s_t), NumActions entries (discrete actions); a Builder takes
	// it on every step or on none. NextTargetProbs, if not nil, is
	// pi(.|s_{t+1}) at the next state: on an episode's last step (which
	// must have HasNext) it becomes the episode's final distribution
	// (Dataset.FinalTargetProbs); on another step it must equal the next
	// step's TargetProbs.
	TargetProbs     []float64
	NextTargetProbs []float64

	// Terminal reports that the step ended in a terminal state: the
	// process then sits in the absorbing state (Dataset.Terminal). Only an
	// episode's last step may be terminal.
	Terminal bool
}

// LogRatio returns log beta(a_t|s_t) = log pi(a_t|s_t) - log pi0(a_t|s_t).
func (s *Step) LogRatio() float64 { return s.LogTarget - s.LogBehavior }

// Ratio returns beta(a_t|s_t) = pi(a_t|s_t) / pi0(a_t|s_t).
func (s *Step) Ratio() float64 { return math.Exp(s.LogTarget - s.LogBehavior) }

// Episode is a sequence of steps t = 0, 1, ..., len(Steps)-1 logged in one
// run, in row form. A continuing task is one long episode.
type Episode struct {
	ID    string
	Steps []Step
}
