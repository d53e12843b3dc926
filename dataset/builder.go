package dataset

import (
	"fmt"
)

// Builder assembles a Dataset from steps in row form, episode after
// episode: the way simulators log and tests build small logs.
//
//	var b dataset.Builder
//	b.Init(nS, nA, 0, 0)
//	b.Add(dataset.Step{...}) // steps of episode "0"
//	b.EndEpisode("0")
//	d, err := b.Dataset()
//
// The next state of every step but an episode's last must be the state of
// the step after it (it is not stored); the last step's next state, if it
// has one (HasNext), becomes the episode's final state. Steps may carry
// the target's whole action distribution (Step.TargetProbs, NumActions
// entries): then every step must, and the last step's NextTargetProbs,
// if given, becomes its episode's final one. A step with Terminal must be
// its episode's last; the dataset has a Terminal column once any episode
// ends so. Dataset checks the whole log
// with Validate.
type Builder struct {
	d   Dataset
	err error
	// last is the last step added to the open episode; open is its
	// number of steps.
	last Step
	open int
	// probs is 1 if the steps carry TargetProbs, -1 if not, 0 before the
	// first step. The final distributions are kept apart until Dataset,
	// which attaches them only with TargetProbs.
	probs      int8
	finalProbs []float64
	hasFinalP  []bool
}

// Init resets b for a log of discrete states 0..numStates-1 (or, with
// stateDim > 0, real state vectors of that length) and discrete actions
// 0..numActions-1 (or, with actionDim > 0, real action vectors).
func (b *Builder) Init(numStates, numActions, stateDim, actionDim int) {
	*b = Builder{d: Dataset{NumStates: numStates, NumActions: numActions,
		StateDim: stateDim, ActionDim: actionDim, Start: []int{0}}}
}

// Grow reserves room for n more steps.
func (b *Builder) Grow(n int) {
	d := &b.d
	if d.StateDim == 0 {
		d.State = grow(d.State, n)
	} else {
		d.Obs = grow(d.Obs, n*d.StateDim)
	}
	if d.ActionDim == 0 {
		d.Action = grow(d.Action, n)
	} else {
		d.ActionVec = grow(d.ActionVec, n*d.ActionDim)
	}
	d.Reward = grow(d.Reward, n)
	d.LogBehavior = grow(d.LogBehavior, n)
	d.LogTarget = grow(d.LogTarget, n)
}

func grow[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	out := make([]T, len(s), len(s)+n)
	copy(out, s)
	return out
}

// Add appends a step to the open episode. Vectors are copied.
func (b *Builder) Add(s Step) {
	d := &b.d
	if b.open > 0 && b.err == nil {
		b.checkLink(s)
	}
	if d.StateDim == 0 {
		d.State = append(d.State, int32(s.State))
	} else {
		b.vector("state", s.Obs, d.StateDim, b.open)
		d.Obs = append(d.Obs, s.Obs...)
	}
	if d.ActionDim == 0 {
		d.Action = append(d.Action, int32(s.Action))
	} else {
		b.vector("action", s.ActionVec, d.ActionDim, b.open)
		d.ActionVec = append(d.ActionVec, s.ActionVec...)
	}
	d.Reward = append(d.Reward, s.Reward)
	d.LogBehavior = append(d.LogBehavior, s.LogBehavior)
	d.LogTarget = append(d.LogTarget, s.LogTarget)
	b.targetProbs(s)
	b.last = s
	b.open++
}

// targetProbs stores the TargetProbs of a step being added and records an
// error if the steps carry them on some steps only, with the wrong length,
// or with NextTargetProbs but no TargetProbs.
func (b *Builder) targetProbs(s Step) {
	has := int8(-1)
	if s.TargetProbs != nil {
		has = 1
	}
	if b.probs == 0 {
		b.probs = has
	}
	if b.err != nil {
		return
	}
	fail := func(format string, args ...any) {
		b.err = fmt.Errorf("dataset: episode %d, step %d: %s", len(b.d.IDs), b.open, fmt.Sprintf(format, args...))
	}
	switch {
	case has > 0 && b.d.ActionDim > 0:
		fail("TargetProbs given, but the actions are vectors; TargetProbs is for discrete actions")
	case has != b.probs && has > 0:
		fail("TargetProbs given, but earlier steps have none; give them on every step or on none")
	case has != b.probs:
		fail("no TargetProbs, but earlier steps have them; give them on every step or on none")
	case has > 0 && len(s.TargetProbs) != b.d.NumActions:
		fail("TargetProbs of length %d, want NumActions = %d", len(s.TargetProbs), b.d.NumActions)
	case has < 0 && s.NextTargetProbs != nil:
		fail("NextTargetProbs given without TargetProbs")
	case has > 0 && s.NextTargetProbs != nil && len(s.NextTargetProbs) != b.d.NumActions:
		fail("NextTargetProbs of length %d, want NumActions = %d", len(s.NextTargetProbs), b.d.NumActions)
	}
	if has > 0 {
		b.d.TargetProbs = append(b.d.TargetProbs, s.TargetProbs...)
	}
}

// vector records an error if a vector of step t of the open episode has
// the wrong length.
func (b *Builder) vector(what string, v []float64, n, t int) {
	if len(v) != n && b.err == nil {
		b.err = fmt.Errorf("dataset: episode %d, step %d: %s vector of length %d, want %d",
			len(b.d.IDs), t, what, len(v), n)
	}
}

// checkLink records an error if the previous step's next state is not
// the state of s.
func (b *Builder) checkLink(s Step) {
	p := &b.last
	fail := func(format string, args ...any) {
		b.err = fmt.Errorf("dataset: episode %d, step %d: %s", len(b.d.IDs), b.open-1, fmt.Sprintf(format, args...))
	}
	if !p.HasNext {
		fail("HasNext is false on a step that is not the last of its episode")
		return
	}
	if p.Terminal {
		fail("Terminal on a step that is not the last of its episode (a terminal step ends its episode)")
		return
	}
	if p.NextTargetProbs != nil && s.TargetProbs != nil {
		for k, v := range p.NextTargetProbs {
			if k < len(s.TargetProbs) && v != s.TargetProbs[k] {
				fail("NextTargetProbs[%d] is %v but the TargetProbs of step %d have %v", k, v, b.open, s.TargetProbs[k])
				return
			}
		}
	}
	if b.d.StateDim == 0 {
		if p.NextState != s.State {
			fail("next state %d differs from the state %d of step %d", p.NextState, s.State, b.open)
		}
		return
	}
	for k := range p.NextObs {
		if k < len(s.Obs) && p.NextObs[k] != s.Obs[k] {
			fail("next state component %d is %v but the state of step %d has %v", k, p.NextObs[k], b.open, s.Obs[k])
			return
		}
	}
}

// EndEpisode closes the open episode under the given id; the next state
// of its last step (if HasNext) becomes its final state.
func (b *Builder) EndEpisode(id string) {
	d := &b.d
	has := b.open > 0 && b.last.HasNext
	if has && d.StateDim > 0 {
		b.vector("next state", b.last.NextObs, d.StateDim, b.open-1)
	}
	d.IDs = append(d.IDs, id)
	d.Start = append(d.Start, len(d.Reward))
	d.HasFinal = append(d.HasFinal, has)
	if b.last.Terminal && d.Terminal == nil {
		d.Terminal = make([]bool, len(d.IDs)-1, cap(d.IDs))
	}
	if d.Terminal != nil {
		d.Terminal = append(d.Terminal, b.last.Terminal)
	}
	hasP := b.open > 0 && b.last.NextTargetProbs != nil && len(b.last.NextTargetProbs) == d.NumActions
	if hasP && !has && b.err == nil {
		b.err = fmt.Errorf("dataset: episode %d, step %d: NextTargetProbs given, but HasNext is false", len(d.IDs)-1, b.open-1)
	}
	if b.probs >= 0 { // steps with TargetProbs, or none yet
		b.hasFinalP = append(b.hasFinalP, hasP)
		if hasP {
			b.finalProbs = append(b.finalProbs, b.last.NextTargetProbs...)
		} else {
			b.finalProbs = append(b.finalProbs, make([]float64, d.NumActions)...)
		}
	}
	if d.StateDim == 0 {
		fs := int32(-1)
		if has {
			fs = int32(b.last.NextState)
		}
		d.FinalState = append(d.FinalState, fs)
	} else {
		if has && len(b.last.NextObs) == d.StateDim {
			d.FinalObs = append(d.FinalObs, b.last.NextObs...)
		} else {
			d.FinalObs = append(d.FinalObs, make([]float64, d.StateDim)...)
		}
	}
	b.last, b.open = Step{}, 0
}

// Dataset returns the dataset built, after checking it with Validate.
// An episode left open is an error.
func (b *Builder) Dataset() (*Dataset, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.open > 0 {
		return nil, fmt.Errorf("dataset: episode %d has %d steps but was not ended", len(b.d.IDs), b.open)
	}
	d := b.d
	if b.probs > 0 {
		d.FinalTargetProbs, d.HasFinalTarget = b.finalProbs, b.hasFinalP
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &d, nil
}

// New builds a dataset from episodes in row form (see Builder).
// NumStates and NumActions give the discrete sizes (0 for real vectors);
// the vector lengths are taken from the first step.
func New(numStates, numActions int, episodes []Episode) (*Dataset, error) {
	sd, ad := 0, 0
	if len(episodes) > 0 && len(episodes[0].Steps) > 0 {
		s := &episodes[0].Steps[0]
		sd, ad = len(s.Obs), len(s.ActionVec)
	}
	var b Builder
	b.Init(numStates, numActions, sd, ad)
	n := 0
	for _, ep := range episodes {
		n += len(ep.Steps)
	}
	b.Grow(n)
	for _, ep := range episodes {
		for _, s := range ep.Steps {
			b.Add(s)
		}
		b.EndEpisode(ep.ID)
	}
	return b.Dataset()
}
