package dataset

import (
	"fmt"
	"math"
)

// Step is one logged transition (s_t, a_t, r_t, s_{t+1}).
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
	LogBehavior float64
	LogTarget   float64
}

// LogRatio returns log beta(a_t|s_t) = log pi(a_t|s_t) - log pi0(a_t|s_t).
func (s *Step) LogRatio() float64 { return s.LogTarget - s.LogBehavior }

// Ratio returns beta(a_t|s_t) = pi(a_t|s_t) / pi0(a_t|s_t).
func (s *Step) Ratio() float64 { return math.Exp(s.LogTarget - s.LogBehavior) }

// Episode is a sequence of steps t = 0, 1, ..., len(Steps)-1 logged in one
// run. A continuing task is one long episode.
type Episode struct {
	ID    string
	Steps []Step
}

// Dataset is a set of episodes logged under one behavior policy.
type Dataset struct {
	Episodes []Episode

	// NumStates is the number of discrete states (ids are 0..NumStates-1);
	// it is 0 when states are real vectors.
	NumStates int
	// NumActions is the number of discrete actions, 0 for real actions.
	NumActions int
	// StateDim is the length of a real state vector, 0 for discrete states.
	StateDim int
}

// Discrete reports whether the states are discrete ids.
func (d *Dataset) Discrete() bool { return d.StateDim == 0 }

// NumSteps returns the total number of logged steps.
func (d *Dataset) NumSteps() int {
	n := 0
	for i := range d.Episodes {
		n += len(d.Episodes[i].Steps)
	}
	return n
}

// MaxLen returns the length of the longest episode.
func (d *Dataset) MaxLen() int {
	m := 0
	for i := range d.Episodes {
		m = max(m, len(d.Episodes[i].Steps))
	}
	return m
}

// Subset returns a dataset made of the episodes at the given indices
// (repeats allowed, as a bootstrap resample needs). Steps are shared, not
// copied.
func (d *Dataset) Subset(idx []int) *Dataset {
	out := &Dataset{NumStates: d.NumStates, NumActions: d.NumActions, StateDim: d.StateDim}
	out.Episodes = make([]Episode, len(idx))
	for k, i := range idx {
		out.Episodes[k] = d.Episodes[i]
	}
	return out
}

// Head returns the first n episodes of d, each cut to its first T steps
// (an episode with fewer steps is kept whole). The result shares its
// steps with d and must be treated as read-only, like d. Head panics if
// n exceeds the number of episodes or n or T is negative.
//
// It serves experiments that log the longest episodes once and take
// every smaller dataset as a prefix, so that, within a seed, the dataset
// of n = 50 is the start of the dataset of n = 500 (common random
// numbers across the points of a curve).
func (d *Dataset) Head(n, T int) *Dataset {
	if n < 0 || T < 0 || n > len(d.Episodes) {
		panic(fmt.Sprintf("dataset: Head(%d, %d) of %d episodes", n, T, len(d.Episodes)))
	}
	out := &Dataset{NumStates: d.NumStates, NumActions: d.NumActions, StateDim: d.StateDim, Episodes: make([]Episode, n)}
	for i := range out.Episodes {
		e := d.Episodes[i]
		k := min(T, len(e.Steps))
		e.Steps = e.Steps[:k:k]
		out.Episodes[i] = e
	}
	return out
}
