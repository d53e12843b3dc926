package dataset_test

import (
	"reflect"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

func TestHead(t *testing.T) {
	// Episodes "a", "b", "c" of 4, 2 and 5 steps through the states
	// 0, 1, 2, 0, ...; step s of episode e has reward 10e + s. "b" ends
	// without a next state.
	lens := []int{4, 2, 5}
	var eps []dataset.Episode
	for e, n := range lens {
		ep := dataset.Episode{ID: string(rune('a' + e))}
		for s := range n {
			ep.Steps = append(ep.Steps, dataset.Step{State: s % 3, Reward: float64(10*e + s),
				HasNext: s < n-1 || e != 1, NextState: (s + 1) % 3})
		}
		if e == 1 {
			ep.Steps[n-1].NextState = -1
		}
		eps = append(eps, ep)
	}
	d := mustNew(t, 3, 2, eps)
	orig := d.Clone()
	tests := []struct {
		n, T    int
		lengths []int
	}{
		{3, 3, []int{3, 2, 3}},
		{2, 10, []int{4, 2}},
		{0, 3, []int{}},
		{3, 0, []int{0, 0, 0}},
	}
	for _, tt := range tests {
		h := d.Head(tt.n, tt.T)
		if h.NumStates != 3 || h.NumActions != 2 || h.NumEpisodes() != tt.n {
			t.Fatalf("Head(%d, %d) = %+v", tt.n, tt.T, h)
		}
		for i := range h.NumEpisodes() {
			e := h.Episode(i)
			if e.ID != d.IDs[i] || len(e.Steps) != tt.lengths[i] {
				t.Errorf("Head(%d, %d) episode %d: id %q, %d steps, want %q, %d", tt.n, tt.T, i, e.ID, len(e.Steps), d.IDs[i], tt.lengths[i])
			}
			for s, st := range e.Steps {
				if st.Reward != float64(10*i+s) {
					t.Errorf("Head(%d, %d) episode %d step %d: reward %v", tt.n, tt.T, i, s, st.Reward)
				}
			}
			// A cut episode's final state is the state of its step T; an
			// episode kept whole keeps its own (none for "b").
			wantState, wantOK := int(d.FinalState[i]), d.HasFinal[i]
			if tt.T < lens[i] {
				wantState, wantOK = tt.T%3, true
			}
			if h.HasFinal[i] != wantOK || (wantOK && int(h.FinalState[i]) != wantState) {
				t.Errorf("Head(%d, %d) episode %d: final state %d (known %v), want %d (known %v)",
					tt.n, tt.T, i, h.FinalState[i], h.HasFinal[i], wantState, wantOK)
			}
		}
		if err := h.Validate(); err != nil && tt.T > 0 {
			t.Errorf("Head(%d, %d): %v", tt.n, tt.T, err)
		}
		// Head copies: writing into or appending to h's columns leaves d
		// as it was (the row-form test checked that the episodes' steps had
		// no spare capacity, so that an append could not overwrite d).
		for j := range h.Reward {
			h.Reward[j], h.State[j], h.Action[j], h.LogBehavior[j], h.LogTarget[j] = -1, 2, 1, -5, -5
		}
		for e := range h.FinalState {
			h.FinalState[e], h.HasFinal[e] = 1, !h.HasFinal[e]
		}
		h.Reward = append(h.Reward, 99)
		h.State = append(h.State, 2)
		h.FinalState = append(h.FinalState, 2)
		if !reflect.DeepEqual(d, orig) {
			t.Fatalf("Head(%d, %d): changing the result changed d", tt.n, tt.T)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Head(4, 1) of 3 episodes did not panic")
		}
	}()
	d.Head(4, 1)
}
