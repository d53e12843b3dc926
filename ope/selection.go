package ope

import (
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
func chooseValue(l value.Learner, d *dataset.Dataset, gamma float64, pi value.Target) (value.Learner, value.Selection, error) {
	c, ok := l.(value.Chooser)
	if !ok {
		return l, value.Selection{}, nil
	}
	return c.Choose(d, gamma, pi)
}

// setSelection records a selection on a result.
func (r *Result) setSelection(sel value.Selection) {
	r.ModelClass = sel.Winner
	r.Selection = candidates(sel)
}
