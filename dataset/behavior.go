package dataset

import (
	"fmt"
	"math"
	"sort"

	"github.com/ihope-ope/ihope/dataset/internal/rules"
)

// BehaviorConflict describes the discrete (state, action) pairs that a log
// gives different behavior probabilities: the first such pair in step
// order and the two steps that first disagree on it.
//
// A behavior policy that is a function of the logged state gives every
// logging of (s, a) the same pi0(a|s). Two different values mean either
// that the logging policy depended on something the state column does not
// hold (a stochastic, state-dependent logging that no model of pi0(a|s)
// can see) or a bug in the logging.
type BehaviorConflict struct {
	// Pairs is the number of (state, action) pairs logged with two or
	// more behavior probabilities that differ by more than 1e-6; 0 if
	// there are none (and the other fields are zero).
	Pairs int
	// State and Action are the first such pair (in step order).
	State, Action int
	// First is the pair's first logged step, Second the first step that
	// disagrees with it.
	First, Second LoggedProb
}

// LoggedProb is a behavior probability logged at a step.
type LoggedProb struct {
	Episode string
	T       int
	Prob    float64
}

// FindBehaviorConflict checks that the behavior probability of every
// discrete (state, action) pair is the same wherever it is logged (within
// 1e-6, the tolerance of the other probability rules). It returns a zero
// BehaviorConflict for real states or actions, and for a log without
// behavior probabilities.
func FindBehaviorConflict(d *Dataset) BehaviorConflict {
	var c BehaviorConflict
	if !d.HasBehavior() || !d.Discrete() || d.ActionDim > 0 {
		return c
	}
	K := int64(d.NumActions)
	// first[s*K+a] is 1 + the first step logging (s, a), negated once the
	// pair is counted as a conflict; a dense table unless the state space
	// is far larger than the log.
	var first func(key int64) *int
	if size := int64(d.NumStates) * K; size <= 2*int64(d.NumSteps())+1<<16 {
		dense := make([]int, size)
		first = func(key int64) *int { return &dense[key] }
	} else {
		sparse := map[int64]*int{}
		first = func(key int64) *int {
			p, ok := sparse[key]
			if !ok {
				p = new(int)
				sparse[key] = p
			}
			return p
		}
	}
	at := func(e, j int) LoggedProb {
		return LoggedProb{Episode: d.IDs[e], T: j - d.Start[e], Prob: math.Exp(d.LogBehavior[j])}
	}
	episodeOf := func(j int) int { return sort.Search(len(d.Start), func(e int) bool { return d.Start[e] > j }) - 1 }
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			s, a := int64(d.State[j]), int64(d.Action[j])
			f := first(s*K + a)
			switch {
			case *f == 0:
				*f = j + 1
			case *f < 0: // counted already
			case d.LogBehavior[j] == d.LogBehavior[*f-1]: // the usual case, without two exponentials
			case math.Abs(math.Exp(d.LogBehavior[j])-math.Exp(d.LogBehavior[*f-1])) > rules.ProbTol:
				if c.Pairs == 0 {
					c.State, c.Action = int(s), int(a)
					c.First, c.Second = at(episodeOf(*f-1), *f-1), at(e, j)
				}
				c.Pairs++
				*f = -*f
			}
		}
	}
	return c
}

// WithBehavior returns a dataset whose LogBehavior is logProbs (log
// pi0(a_j|s_j) for every step j, fitted by package behavior, say) and
// whose other columns are d's, shared. logProbs must have one finite
// entry per step, at most 0 for discrete actions; d is not changed.
func (d *Dataset) WithBehavior(logProbs []float64) (*Dataset, error) {
	if len(logProbs) != d.NumSteps() {
		return nil, fmt.Errorf("dataset: %d behavior log-probabilities for %d steps", len(logProbs), d.NumSteps())
	}
	for j, lb := range logProbs {
		if msg := rules.Real(lb); msg != "" || d.ActionDim == 0 && lb > 0 {
			return nil, fmt.Errorf("dataset: behavior log-probability %v at step %d", lb, j)
		}
	}
	out := *d
	out.LogBehavior = logProbs
	return &out, nil
}
