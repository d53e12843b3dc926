package dataset_test

import (
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

func TestHead(t *testing.T) {
	d := &dataset.Dataset{NumStates: 3, NumActions: 2}
	for e, n := range []int{4, 2, 5} {
		ep := dataset.Episode{ID: string(rune('a' + e))}
		for s := range n {
			ep.Steps = append(ep.Steps, dataset.Step{State: s % 3, Reward: float64(10*e + s)})
		}
		d.Episodes = append(d.Episodes, ep)
	}
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
		if h.NumStates != 3 || h.NumActions != 2 || len(h.Episodes) != tt.n {
			t.Fatalf("Head(%d, %d) = %+v", tt.n, tt.T, h)
		}
		for i, e := range h.Episodes {
			if e.ID != d.Episodes[i].ID || len(e.Steps) != tt.lengths[i] {
				t.Errorf("Head(%d, %d) episode %d: id %q, %d steps, want %q, %d", tt.n, tt.T, i, e.ID, len(e.Steps), d.Episodes[i].ID, tt.lengths[i])
			}
			for s, st := range e.Steps {
				if st.Reward != float64(10*i+s) {
					t.Errorf("Head(%d, %d) episode %d step %d: reward %v", tt.n, tt.T, i, s, st.Reward)
				}
			}
			if cap(e.Steps) != len(e.Steps) {
				t.Errorf("Head(%d, %d) episode %d: capacity %d > length %d, an append would overwrite d", tt.n, tt.T, i, cap(e.Steps), len(e.Steps))
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Head(4, 1) of 3 episodes did not panic")
		}
	}()
	d.Head(4, 1)
}
