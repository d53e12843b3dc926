package rollout

import (
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
)

// Terminate returns a log of an episodic world (sim.Episodic) in the form
// other tools export (d3rlpy's terminals): each episode stops at the step
// that enters an absorbing state, which is marked terminal (with no next
// state: the absorbing state is no observation), and the steps spent in
// the absorbing state are dropped. absorbing says which states absorb.
//
// Sample logs such worlds as COBS does, every episode padded to T steps
// with the absorbing state; the estimators read a terminal log padded the
// same way (dataset.Dataset.Absorbing), so the two forms give the same
// horizon estimates (TestTerminateAsPadded). The benchmark keeps the
// padded form, whose numbers its leaderboard records.
//
// An episode that starts in an absorbing state has no step to keep and is
// an error. Steps keep their target distributions (TargetProbs) but the
// terminal step's next one, which is the absorbing state's.
func Terminate(d *dataset.Dataset, absorbing func(s int) bool) (*dataset.Dataset, error) {
	if !d.Discrete() {
		return nil, fmt.Errorf("rollout: Terminate needs discrete states")
	}
	var b dataset.Builder
	b.Init(d.NumStates, d.NumActions, 0, d.ActionDim)
	b.Grow(d.NumSteps())
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		if absorbing(int(d.State[lo])) {
			return nil, fmt.Errorf("rollout: episode %q starts in the absorbing state %d", d.IDs[e], d.State[lo])
		}
		for j := lo; j < hi; j++ {
			st := d.Step(e, j)
			if st.HasNext && absorbing(st.NextState) {
				st.HasNext, st.NextState, st.NextTargetProbs, st.Terminal = false, -1, nil, true
				b.Add(st)
				break
			}
			b.Add(st)
		}
		b.EndEpisode(d.IDs[e])
	}
	return b.Dataset()
}
