package dataset

import (
	"errors"
	"fmt"
)

// Concat returns the episodes of parts one after another, copied, as one
// dataset (the parts are not changed). The parts must have the same
// columns: the same state and action dimensions, behavior and
// target-distribution columns both present or both absent (with the same
// number of actions), terminal marks both present or both absent.
// NumStates and NumActions are the largest of the parts'. A stream keeps
// a sample of episodes drawn from many shards this way (package stream).
func Concat(parts []*Dataset) (*Dataset, error) {
	if len(parts) == 0 {
		return nil, errors.New("dataset: nothing to concatenate")
	}
	first := parts[0]
	out := first.derive()
	for i, p := range parts {
		if p.StateDim != first.StateDim || p.ActionDim != first.ActionDim ||
			(p.LogBehavior == nil) != (first.LogBehavior == nil) || (p.TargetProbs == nil) != (first.TargetProbs == nil) ||
			(p.TargetProbs != nil && p.NumActions != first.NumActions) || (p.Terminal == nil) != (first.Terminal == nil) ||
			(p.Tail == nil) != (first.Tail == nil) {
			return nil, fmt.Errorf("dataset: part %d has other columns than part 0", i)
		}
		out.NumStates, out.NumActions = max(out.NumStates, p.NumStates), max(out.NumActions, p.NumActions)
		for e := range p.NumEpisodes() {
			lo, hi := p.Span(e)
			out.appendSpan(p, e, lo, hi)
		}
	}
	return out, nil
}
