package ope

import (
	"sync"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/value"
)

// ClassScore is one function class a learner on real states chose among
// (Result.Selection): its name ("poly2" ... "poly6" for the linear value
// model behind fqe, dr and mql), its held-out score (for the value
// models, the held-out projected Bellman error of value.Select; lower
// is better) and that score's standard error, a jackknife over episodes.
type ClassScore struct {
	Model string
	Score float64
	SE    float64
}

// candidates converts a value model's selection into Result.Selection.
func candidates(sel value.Selection) []ClassScore {
	if sel.Scores == nil {
		return nil
	}
	out := make([]ClassScore, len(sel.Scores))
	for i, s := range sel.Scores {
		out[i] = ClassScore{Model: s.Name, Score: s.Score, SE: s.SE}
	}
	return out
}

// chooseValue returns the learner fqe and dr fit: l itself, or, when l
// chooses its class from the data (value.Chooser, the default on real
// states), the winner of its held-out selection on d and the selection.
//
// With choices not nil, a default selection that scored its costly
// classes (value.Select's Escalate: a network trained on every fold) is
// remembered for the log, so that fqe, dr and the ratios' value test of
// one run, which each choose on the same log, train those networks once.
func chooseValue(l value.Learner, d *dataset.Dataset, gamma float64, pi value.Target, choices *ValueChoices) (value.Learner, value.Selection, error) {
	c, ok := l.(value.Chooser)
	if !ok {
		return l, value.Selection{}, nil
	}
	s, isSelect := l.(value.Select)
	if !isSelect || s.Candidates != nil || choices == nil {
		return c.Choose(d, gamma, pi)
	}
	key := selectionKey{d, gamma, s.Finite, s.Folds, s.Seed, len(s.Escalate)}
	if w, sel, ok := choices.get(key, pi); ok {
		return w, sel, nil
	}
	w, sel, err := s.Choose(d, gamma, pi)
	if err == nil && len(sel.Scores) > len(value.LinearCandidates(d, s.Finite)) {
		choices.put(key, pi, w, sel)
	}
	return w, sel, err
}

// selectionKey is what a default value.Select's choice depends on beside
// the target: the log (by identity), the discount and the Select. The
// network's own settings are not in it: the estimators of one run share
// them (Options.ValueNeural), and its seed is the Select's.
type selectionKey struct {
	d        *dataset.Dataset
	gamma    float64
	finite   bool
	folds    int
	seed     uint64
	escalate int
}

// ValueChoices keeps the last few escalated selections of the value
// model among the estimators of one run (Options.ValueChoices,
// chooseValue); the zero value is ready. It holds their logs, so an
// address is not reused while it is kept, and it goes with the run.
type ValueChoices struct {
	mu      sync.Mutex
	entries []selectionEntry
}

type selectionEntry struct {
	key    selectionKey
	pi     value.Target
	winner value.Learner
	sel    value.Selection
}

const selectionCacheSize = 4

func (c *ValueChoices) get(k selectionKey, pi value.Target) (value.Learner, value.Selection, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key == k && sameTarget(e.pi, pi) {
			return e.winner, e.sel, true
		}
	}
	return nil, value.Selection{}, false
}

func (c *ValueChoices) put(k selectionKey, pi value.Target, w value.Learner, sel value.Selection) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == selectionCacheSize {
		c.entries = c.entries[1:]
	}
	c.entries = append(c.entries, selectionEntry{k, pi, w, sel})
}

// sameTarget reports whether two targets are the same values; a policy
// whose type cannot be compared counts as different.
func sameTarget(a, b value.Target) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// setSelection records a selection on a result.
func (r *Result) setSelection(sel value.Selection) {
	r.ModelClass = sel.Winner
	r.Selection = candidates(sel)
}
