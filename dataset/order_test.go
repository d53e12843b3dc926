package dataset_test

import (
	"slices"
	"testing"
)

// IDOrder sorts the episodes by the natural order of their ids (equal ids
// in their order in the log), EpisodeFolds puts the i-th distinct id of
// that order in fold i mod K, so that a resample's copies of an episode
// share a fold, and NumIDs counts the distinct ids.
func TestIDOrderAndFolds(t *testing.T) {
	d := sampled(t, 5, 3)
	for e := range d.IDs {
		d.IDs[e] = []string{"ep10", "ep2", "ep1", "b", "a"}[e]
	}
	r := d.Subset([]int{0, 4, 0, 2, 4}) // ep10, a, ep10, ep1, a
	for _, c := range []struct {
		name        string
		order       []int
		folds2      []int
		folds3      []int
		ids         int
		orderOf     func() []int
		foldsOf     func(int) []int
		distinctIDs func() int
	}{
		{"log", []int{4, 3, 2, 1, 0}, []int{0, 1, 0, 1, 0}, []int{1, 0, 2, 1, 0}, 5, d.IDOrder, d.EpisodeFolds, d.NumIDs},
		{"resample", []int{1, 4, 3, 0, 2}, []int{0, 0, 0, 1, 0}, []int{2, 0, 2, 1, 0}, 3, r.IDOrder, r.EpisodeFolds, r.NumIDs},
	} {
		if got := c.orderOf(); !slices.Equal(got, c.order) {
			t.Errorf("%s: order %v, want %v", c.name, got, c.order)
		}
		if got := c.foldsOf(2); !slices.Equal(got, c.folds2) {
			t.Errorf("%s: 2 folds %v, want %v", c.name, got, c.folds2)
		}
		if got := c.foldsOf(3); !slices.Equal(got, c.folds3) {
			t.Errorf("%s: 3 folds %v, want %v", c.name, got, c.folds3)
		}
		if got := c.distinctIDs(); got != c.ids {
			t.Errorf("%s: %d ids, want %d", c.name, got, c.ids)
		}
	}
}
