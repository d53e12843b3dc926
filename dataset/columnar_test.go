package dataset_test

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

// chain returns a one-episode discrete log "run" through the states
// 0, 1, ..., 5 (step j has state j, reward j and action j mod 2) on 7
// states; the state after its last step is 6 if final is set, unknown
// otherwise.
func chain(t *testing.T, final bool) *dataset.Dataset {
	t.Helper()
	ep := dataset.Episode{ID: "run"}
	for j := range 6 {
		ep.Steps = append(ep.Steps, dataset.Step{State: j, Action: j % 2, Reward: float64(j),
			HasNext: j < 5 || final, NextState: j + 1, LogBehavior: math.Log(0.5), LogTarget: -float64(j) / 10})
	}
	if !final {
		ep.Steps[5].NextState = -1
	}
	return mustNew(t, 7, 2, []dataset.Episode{ep})
}

// nextStates returns the next state of every step of d's episode e and
// whether it is known, read through NextState and checked against the row
// form (Step).
func nextStates(t *testing.T, d *dataset.Dataset, e int) (next []int, known []bool) {
	t.Helper()
	lo, hi := d.Span(e)
	for j := lo; j < hi; j++ {
		s, ok := d.NextState(e, j)
		if st := d.Step(e, j); st.HasNext != ok || (ok && st.NextState != s) || (!ok && st.NextState != -1) {
			t.Errorf("step %d: Step says next state %d (known %v), NextState %d (%v)", j, st.NextState, st.HasNext, s, ok)
		}
		if !ok {
			s = -1
		}
		next = append(next, s)
		known = append(known, ok)
	}
	return next, known
}

func TestBlocks(t *testing.T) {
	d := chain(t, true)
	orig := d.Clone()
	for i, c := range []struct {
		starts, lens []int
		states       []int32 // states of the steps of the result
		next         []int   // their next states
		final        int     // the result's final state
	}{
		// Each block's last step keeps its logged next state (5 after the
		// step in state 4, 2 after the step in state 1), not the state of
		// the step after it in the result (0, 4).
		{[]int{3, 0, 4}, []int{2, 2, 2}, []int32{3, 4, 0, 1, 4, 5}, []int{4, 5, 1, 2, 5, 6}, 6},
		// A block that ends with the log's last step keeps its final state
		// 6; the result's final state is that of the last block (1, the
		// state after step 0).
		{[]int{4, 0}, []int{2, 1}, []int32{4, 5, 0}, []int{5, 6, 1}, 1},
		// One block: the log itself.
		{[]int{0}, []int{6}, []int32{0, 1, 2, 3, 4, 5}, []int{1, 2, 3, 4, 5, 6}, 6},
	} {
		b := d.Blocks(c.starts, c.lens)
		if b.NumEpisodes() != 1 || b.IDs[0] != "run" || b.NumSteps() != len(c.states) || b.NumStates != 7 || b.NumActions != 2 {
			t.Fatalf("case %d: %d episodes %v, %d steps, sizes %d, %d", i, b.NumEpisodes(), b.IDs, b.NumSteps(), b.NumStates, b.NumActions)
		}
		if !slices.Equal(b.State, c.states) {
			t.Errorf("case %d: states %v, want %v", i, b.State, c.states)
		}
		for j, s := range b.State { // the other columns follow the states
			if b.Reward[j] != float64(s) || b.Action[j] != s%2 || b.LogTarget[j] != -float64(s)/10 || b.LogBehavior[j] != math.Log(0.5) {
				t.Errorf("case %d step %d: state %d with reward %v, action %d, log-probabilities %v, %v",
					i, j, s, b.Reward[j], b.Action[j], b.LogBehavior[j], b.LogTarget[j])
			}
		}
		next, known := nextStates(t, b, 0)
		if !slices.Equal(next, c.next) || slices.Contains(known, false) {
			t.Errorf("case %d: next states %v (known %v), want %v", i, next, known, c.next)
		}
		if !b.HasFinal[0] || int(b.FinalState[0]) != c.final {
			t.Errorf("case %d: final state %d (known %v), want %d", i, b.FinalState[0], b.HasFinal[0], c.final)
		}
		if err := b.Validate(); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		b.Reward[0], b.State[0] = -1, 6 // a copy
	}
	if !reflect.DeepEqual(d, orig) {
		t.Error("Blocks changed its input")
	}

	// Without a final state, a block that ends with the log's last step
	// has no next state, and neither has the result if it ends so.
	u := chain(t, false)
	b := u.Blocks([]int{5, 0}, []int{1, 1})
	if next, known := nextStates(t, b, 0); !slices.Equal(next, []int{-1, 1}) || !slices.Equal(known, []bool{false, true}) {
		t.Errorf("no final state, blocks {5}, {0}: next states %v, known %v", next, known)
	}
	b = u.Blocks([]int{0, 4}, []int{1, 2})
	if next, known := nextStates(t, b, 0); !slices.Equal(next, []int{1, 5, -1}) || !slices.Equal(known, []bool{true, true, false}) ||
		b.HasFinal[0] || b.FinalState[0] != -1 {
		t.Errorf("no final state, blocks {0}, {4, 5}: next states %v, known %v, final %d (%v)", next, known, b.FinalState[0], b.HasFinal[0])
	}

	// Vector states: episode 2 of continuous has 5 steps and a final state.
	v := continuous(t).Subset([]int{2})
	vb := v.Blocks([]int{3, 0}, []int{2, 2})
	wantObs := [][]float64{v.ObsAt(3), v.ObsAt(4), v.ObsAt(0), v.ObsAt(1)}
	finalObs, _ := v.NextObs(0, 4)
	wantNext := [][]float64{v.ObsAt(4), finalObs, v.ObsAt(1), v.ObsAt(2)}
	for j := range 4 {
		got, ok := vb.NextObs(0, j)
		if !slices.Equal(vb.ObsAt(j), wantObs[j]) || !ok || !slices.Equal(got, wantNext[j]) {
			t.Errorf("vector blocks step %d: state %v, next %v (%v), want %v, %v", j, vb.ObsAt(j), got, ok, wantObs[j], wantNext[j])
		}
		if !slices.Equal(vb.ActionVecAt(j), v.ActionVecAt([]int{3, 4, 0, 1}[j])) {
			t.Errorf("vector blocks step %d: action %v", j, vb.ActionVecAt(j))
		}
	}
	if !vb.HasFinal[0] || !slices.Equal(vb.FinalObs, v.ObsAt(2)) {
		t.Errorf("vector blocks: final state %v (%v), want %v", vb.FinalObs, vb.HasFinal[0], v.ObsAt(2))
	}

	defer func() {
		if recover() == nil {
			t.Error("Blocks of 5 episodes did not panic")
		}
	}()
	continuous(t).Blocks([]int{0}, []int{1})
}

func TestSubset(t *testing.T) {
	for _, d := range []*dataset.Dataset{sampled(t, 3, 4), continuous(t)} {
		// Episode 1 of continuous has no final state.
		orig := d.Clone()
		idx := []int{2, 0, 2, 1}
		s := d.Subset(idx)
		if s.NumEpisodes() != 4 || s.NumStates != d.NumStates || s.NumActions != d.NumActions ||
			s.StateDim != d.StateDim || s.ActionDim != d.ActionDim {
			t.Fatalf("Subset(%v): %d episodes, sizes %d %d %d %d", idx, s.NumEpisodes(), s.NumStates, s.NumActions, s.StateDim, s.ActionDim)
		}
		steps := 0
		for k, e := range idx {
			if got, want := s.Episode(k), d.Episode(e); !reflect.DeepEqual(got, want) {
				t.Errorf("Subset(%v) episode %d:\n got %+v\nwant %+v", idx, k, got, want)
			}
			if s.HasFinal[k] != d.HasFinal[e] {
				t.Errorf("Subset(%v) episode %d: final state known %v, want %v", idx, k, s.HasFinal[k], d.HasFinal[e])
			}
			steps += d.Len(e)
		}
		if s.NumSteps() != steps || s.Start[4] != steps {
			t.Errorf("Subset(%v): %d steps (Start %v), want %d", idx, s.NumSteps(), s.Start, steps)
		}
		// A repeated episode keeps its id: the result is for estimation,
		// and Validate (so the writers) refuse it.
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "episodes 0 and 2 have the same ID") {
			t.Errorf("Subset(%v).Validate: %v", idx, err)
		}
		for j := range s.Reward {
			s.Reward[j], s.LogTarget[j] = -1, -1
		}
		if !reflect.DeepEqual(d, orig) {
			t.Error("changing a subset changed its dataset")
		}
		if e := d.Subset(nil); e.NumEpisodes() != 0 || e.NumSteps() != 0 || e.Validate() != nil {
			t.Errorf("Subset(nil): %d episodes, %d steps, %v", e.NumEpisodes(), e.NumSteps(), e.Validate())
		}
	}
}

func TestBuilder(t *testing.T) {
	// A good log: vectors are copied, the last step's next state becomes
	// the final state.
	var b dataset.Builder
	b.Init(0, 0, 2, 1)
	b.Grow(3)
	obs := []float64{1, 2}
	act := []float64{0.5}
	b.Add(dataset.Step{State: -1, Obs: obs, Action: -1, ActionVec: act, Reward: 1, HasNext: true, NextState: -1, NextObs: []float64{3, 4}, LogBehavior: 0.5, LogTarget: -1})
	b.Add(dataset.Step{State: -1, Obs: []float64{3, 4}, Action: -1, ActionVec: act, Reward: 2, HasNext: true, NextState: -1, NextObs: []float64{5, 6}, LogBehavior: 0.5, LogTarget: -1})
	b.EndEpisode("x")
	b.Add(dataset.Step{State: -1, Obs: obs, Action: -1, ActionVec: act, Reward: 3, NextState: -1, LogBehavior: 0.5, LogTarget: -1})
	b.EndEpisode("y")
	obs[0], act[0] = 99, 99
	d, err := b.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	want := &dataset.Dataset{IDs: []string{"x", "y"}, Start: []int{0, 2, 3},
		Obs: []float64{1, 2, 3, 4, 1, 2}, ActionVec: []float64{0.5, 0.5, 0.5}, Reward: []float64{1, 2, 3},
		LogBehavior: []float64{0.5, 0.5, 0.5}, LogTarget: []float64{-1, -1, -1},
		HasFinal: []bool{true, false}, FinalObs: []float64{5, 6, 0, 0}, StateDim: 2, ActionDim: 1}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("built\n%+v\nwant\n%+v", d, want)
	}

	step := func(s, next int) dataset.Step {
		return dataset.Step{State: s, Action: 0, HasNext: next >= 0, NextState: next, LogBehavior: -1, LogTarget: -1}
	}
	vec := func(obs, next []float64, action []float64) dataset.Step {
		return dataset.Step{State: -1, Obs: obs, Action: -1, ActionVec: action, HasNext: next != nil, NextState: -1, NextObs: next}
	}
	for i, c := range []struct {
		name      string
		nS, nA    int
		sd, ad    int
		build     func(b *dataset.Builder)
		msg       string
		wantSteps int // of a good log
	}{
		{"inconsistent next state", 3, 1, 0, 0, func(b *dataset.Builder) {
			b.Add(step(0, 1))
			b.Add(step(2, -1))
			b.EndEpisode("e")
		}, "episode 0, step 0: next state 1 differs from the state 2 of step 1", 0},
		{"inconsistent next state in a later episode", 3, 1, 0, 0, func(b *dataset.Builder) {
			b.Add(step(0, -1))
			b.EndEpisode("e")
			b.Add(step(0, 1))
			b.Add(step(1, 2))
			b.Add(step(0, -1))
			b.EndEpisode("f")
		}, "episode 1, step 1: next state 2 differs from the state 0 of step 2", 0},
		{"inconsistent next state vector", 0, 0, 2, 1, func(b *dataset.Builder) {
			b.Add(vec([]float64{1, 2}, []float64{1, 3}, []float64{0}))
			b.Add(vec([]float64{1, 2.5}, nil, []float64{0}))
			b.EndEpisode("e")
		}, "episode 0, step 0: next state component 1 is 3 but the state of step 1 has 2.5", 0},
		{"HasNext false inside", 3, 1, 0, 0, func(b *dataset.Builder) {
			b.Add(step(0, -1))
			b.Add(step(1, -1))
			b.EndEpisode("e")
		}, "episode 0, step 0: HasNext is false on a step that is not the last", 0},
		{"state vector length", 0, 0, 2, 1, func(b *dataset.Builder) {
			b.Add(vec([]float64{1, 2}, []float64{1, 2}, []float64{0}))
			b.Add(vec([]float64{1, 2}, []float64{1, 2}, []float64{0}))
			b.EndEpisode("e")
			b.Add(vec([]float64{1, 2, 3}, nil, []float64{0}))
			b.EndEpisode("f")
		}, "episode 1, step 0: state vector of length 3, want 2", 0},
		{"action vector length", 0, 0, 2, 1, func(b *dataset.Builder) {
			b.Add(vec([]float64{1, 2}, []float64{1, 2}, []float64{0}))
			b.Add(vec([]float64{1, 2}, nil, nil))
			b.EndEpisode("e")
		}, "episode 0, step 1: action vector of length 0, want 1", 0},
		{"next state vector length", 0, 0, 2, 1, func(b *dataset.Builder) {
			b.Add(vec([]float64{1, 2}, []float64{1}, []float64{0}))
			b.EndEpisode("e")
		}, "next state vector of length 1, want 2", 0},
		{"the first error is kept", 3, 1, 0, 0, func(b *dataset.Builder) {
			b.Add(step(0, 1))
			b.Add(step(2, 0))
			b.Add(step(1, -1))
			b.EndEpisode("e")
			b.Add(step(0, -1))
		}, "next state 1 differs from the state 2 of step 1", 0},
		{"episode not ended", 3, 1, 0, 0, func(b *dataset.Builder) {
			b.Add(step(0, 1))
			b.EndEpisode("e")
			b.Add(step(0, 1))
			b.Add(step(1, -1))
		}, "episode 1 has 2 steps but was not ended", 0},
		{"Validate's rules", 3, 1, 0, 0, func(b *dataset.Builder) {
			b.Add(step(0, 3))
			b.EndEpisode("e")
		}, `episode "e", step 0: next state 3 is not an id in [0, 3)`, 0},
		{"a good log after an error and Init", 3, 1, 0, 0, func(b *dataset.Builder) {
			b.Add(step(0, 1))
			b.Add(step(2, -1))
			b.Init(3, 1, 0, 0)
			b.Add(step(0, 1))
			b.Add(step(1, -1))
			b.EndEpisode("e")
		}, "", 2},
	} {
		var b dataset.Builder
		b.Init(c.nS, c.nA, c.sd, c.ad)
		c.build(&b)
		d, err := b.Dataset()
		switch {
		case c.msg == "" && (err != nil || d.NumSteps() != c.wantSteps):
			t.Errorf("%d %s: %v", i, c.name, err)
		case c.msg != "" && (err == nil || d != nil || !strings.Contains(err.Error(), c.msg)):
			t.Errorf("%d %s: %v (dataset %v), want an error with %q", i, c.name, err, d != nil, c.msg)
		}
	}
}
