package dataset

import "math"

// Summary describes a log: its size and shape, what it covers, and the
// numbers behind the support diagnostics.
type Summary struct {
	Episodes, Steps      int
	MinLength, MaxLength int
	// StatesSeen is the number of distinct discrete states (0 for real
	// states), ActionsSeen of distinct discrete actions.
	StatesSeen, ActionsSeen int
	// MeanReward is the mean logged reward (NaN for no steps or an
	// infinite mean).
	MeanReward float64
	// MinReward and MaxReward are the smallest and largest logged rewards
	// (NaN for no steps).
	MinReward, MaxReward float64
	// ZeroTarget counts the steps whose action the target never takes.
	ZeroTarget int
	// LargeRatio counts the steps with pi/pi0 > LargeRatioLimit, and
	// FirstLarge locates the first of them (0 for a log without behavior
	// probabilities).
	LargeRatio int
	FirstLarge struct {
		Episode string
		T       int
		Ratio   float64
	}
	// MaxLogRatio is the largest log pi/pi0 over the steps the target
	// may take (NaN if there are none, or no behavior probabilities).
	MaxLogRatio float64
	// OpenEndings counts the episodes whose last step has no next state
	// and is not terminal (a terminal step's next state is the absorbing
	// state).
	OpenEndings int
	// Terminal counts the episodes that ended in a terminal state.
	Terminal int
	// MinCutOff is the length of the shortest episode that did not end
	// in a terminal state (0 if every episode did).
	MinCutOff int
	// UnloggedTarget is the target's probability on actions never logged
	// in their state, averaged over the logged steps, and UnloggedStates
	// the number of states where it puts any (discrete states and actions
	// with target_prob_k columns; 0 otherwise).
	UnloggedTarget float64
	UnloggedStates int
}

// LargeRatioLimit is the policy ratio pi/pi0 above which Summarize counts
// a step as poorly supported.
const LargeRatioLimit = 1e6

// Summarize describes d.
func Summarize(d *Dataset) Summary {
	var z Summarizer
	z.Add(d, 0, d.NumEpisodes())
	return z.Summary()
}

// Summarizer describes a log given in parts, episodes after episodes (a
// stream of shards, package stream): the Summary of the episodes added,
// in the order added, is Summarize's of their concatenation. Its fields
// are exported so that it can be encoded between processes; read it
// through Summary.
type Summarizer struct {
	S Summary
	// States, Actions mark the discrete ids seen.
	States, Actions []bool
	// MeanR is the running mean reward, MaxLR the largest log pi/pi0 (-Inf
	// before any; Summary turns these into Summary's NaNs).
	MeanR, MaxLR float64
	// MinR, MaxR are the smallest and largest rewards (+Inf, -Inf before
	// any).
	MinR, MaxR float64
	// TargetMass[s][a] sums the target's probability of a over the steps
	// logged in state s, Logged[s][a] marks the pairs logged, and
	// TargetSteps counts the steps that carry the target's distribution
	// (discrete states and actions with target_prob_k columns), so that
	// UnloggedTarget needs one pass: whether a pair is ever logged is
	// known only at the end.
	TargetMass  [][]float64
	Logged      [][]bool
	TargetSteps int
	// Started is set by the first Add.
	Started bool

	pairA int // the actions every row of Logged and TargetMass holds at least
}

func (z *Summarizer) init() {
	if !z.Started {
		z.S.MinLength, z.MaxLR, z.Started = math.MaxInt, math.Inf(-1), true
		z.MinR, z.MaxR = math.Inf(1), math.Inf(-1)
		z.S.MinCutOff = math.MaxInt
	}
}

// Add adds episodes lo to hi-1 of d.
func (z *Summarizer) Add(d *Dataset, lo, hi int) {
	z.init()
	s := &z.S
	if d.Discrete() && len(z.States) < d.NumStates {
		z.States = append(z.States, make([]bool, d.NumStates-len(z.States))...)
	}
	if d.ActionDim == 0 && len(z.Actions) < d.NumActions {
		z.Actions = append(z.Actions, make([]bool, d.NumActions-len(z.Actions))...)
	}
	states, actions := z.States, z.Actions
	if !d.Discrete() {
		states = nil
	}
	if d.ActionDim > 0 {
		actions = nil
	}
	pairs := d.Discrete() && d.ActionDim == 0 && d.HasTargetProbs()
	if pairs {
		z.growPairs(d.NumStates, d.NumActions)
	}
	limit := math.Log(LargeRatioLimit)
	for e := lo; e < hi; e++ {
		a, b := d.Span(e)
		s.Episodes++
		s.MinLength = min(s.MinLength, b-a)
		s.MaxLength = max(s.MaxLength, b-a)
		if d.IsTerminal(e) {
			s.Terminal++
		} else {
			s.MinCutOff = min(s.MinCutOff, b-a)
			if b > a && !d.HasFinal[e] {
				s.OpenEndings++
			}
		}
		for j := a; j < b; j++ {
			s.Steps++
			z.MeanR += (d.Reward[j] - z.MeanR) / float64(s.Steps)
			z.MinR, z.MaxR = math.Min(z.MinR, d.Reward[j]), math.Max(z.MaxR, d.Reward[j])
			if states != nil {
				states[d.State[j]] = true
			}
			if actions != nil {
				actions[d.Action[j]] = true
			}
			if pairs {
				st := d.State[j]
				z.Logged[st][d.Action[j]] = true
				for a, p := range d.TargetProbsAt(j) {
					z.TargetMass[st][a] += p
				}
				z.TargetSteps++
			}
			if math.IsInf(d.LogTarget[j], -1) {
				s.ZeroTarget++
				continue
			}
			if !d.HasBehavior() {
				continue
			}
			lr := d.LogRatio(j)
			z.MaxLR = math.Max(z.MaxLR, lr)
			if lr > limit {
				if s.LargeRatio == 0 {
					s.FirstLarge.Episode, s.FirstLarge.T, s.FirstLarge.Ratio = d.IDs[e], j-a, math.Exp(lr)
				}
				s.LargeRatio++
			}
		}
	}
}

// Merge adds o's episodes, as if added after z's.
func (z *Summarizer) Merge(o *Summarizer) {
	if !o.Started {
		return
	}
	z.init()
	s, t := &z.S, &o.S
	if s.Steps+t.Steps > 0 {
		z.MeanR += (o.MeanR - z.MeanR) * float64(t.Steps) / float64(s.Steps+t.Steps)
	}
	z.MaxLR = math.Max(z.MaxLR, o.MaxLR)
	z.MinR, z.MaxR = math.Min(z.MinR, o.MinR), math.Max(z.MaxR, o.MaxR)
	if s.LargeRatio == 0 && t.LargeRatio > 0 {
		s.FirstLarge = t.FirstLarge
	}
	s.Episodes += t.Episodes
	s.Steps += t.Steps
	s.MinLength, s.MaxLength = min(s.MinLength, t.MinLength), max(s.MaxLength, t.MaxLength)
	s.ZeroTarget += t.ZeroTarget
	s.LargeRatio += t.LargeRatio
	s.OpenEndings += t.OpenEndings
	s.Terminal += t.Terminal
	s.MinCutOff = min(s.MinCutOff, t.MinCutOff)
	nA := 0
	for _, row := range o.Logged {
		nA = max(nA, len(row))
	}
	z.growPairs(len(o.Logged), nA)
	for st, row := range o.Logged {
		for a, b := range row {
			z.Logged[st][a] = z.Logged[st][a] || b
			z.TargetMass[st][a] += o.TargetMass[st][a]
		}
	}
	z.TargetSteps += o.TargetSteps
	for _, p := range []struct {
		to   *[]bool
		from []bool
	}{{&z.States, o.States}, {&z.Actions, o.Actions}} {
		if len(*p.to) < len(p.from) {
			*p.to = append(*p.to, make([]bool, len(p.from)-len(*p.to))...)
		}
		for i, b := range p.from {
			(*p.to)[i] = (*p.to)[i] || b
		}
	}
}

// Summary returns the summary of the episodes added.
func (z *Summarizer) Summary() Summary {
	s := z.S
	s.MeanReward, s.MaxLogRatio = math.NaN(), math.NaN()
	s.MinReward, s.MaxReward = math.NaN(), math.NaN()
	if s.Steps > 0 {
		s.MinReward, s.MaxReward = z.MinR, z.MaxR
	}
	if s.Episodes == 0 {
		s.MinLength = 0
	}
	if s.MinCutOff == math.MaxInt {
		s.MinCutOff = 0
	}
	if s.Steps > 0 && !math.IsInf(z.MeanR, 0) {
		s.MeanReward = z.MeanR
	}
	if z.Started && !math.IsInf(z.MaxLR, 0) {
		s.MaxLogRatio = z.MaxLR
	}
	s.StatesSeen, s.ActionsSeen = count(z.States), count(z.Actions)
	if z.TargetSteps > 0 {
		mass := 0.0
		for st, row := range z.TargetMass {
			unlogged := false
			for a, m := range row {
				if m > 0 && !z.Logged[st][a] {
					mass += m
					unlogged = true
				}
			}
			if unlogged {
				s.UnloggedStates++
			}
		}
		s.UnloggedTarget = mass / float64(z.TargetSteps)
	}
	return s
}

// growPairs extends TargetMass and Logged to nS states and every state's
// rows to at least nA actions. It walks the existing states only when nA
// exceeds the actions they were last extended to (pairA), so that adding
// shard after shard of one size costs nothing per state.
func (z *Summarizer) growPairs(nS, nA int) {
	if nA > z.pairA {
		for st := range z.Logged {
			if n := nA - len(z.Logged[st]); n > 0 {
				z.Logged[st] = append(z.Logged[st], make([]bool, n)...)
				z.TargetMass[st] = append(z.TargetMass[st], make([]float64, n)...)
			}
		}
		z.pairA = nA
	}
	for len(z.Logged) < nS {
		z.Logged = append(z.Logged, make([]bool, z.pairA))
		z.TargetMass = append(z.TargetMass, make([]float64, z.pairA))
	}
}

func count(seen []bool) int {
	n := 0
	for _, b := range seen {
		if b {
			n++
		}
	}
	return n
}
