package dataset_test

import (
	"slices"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

// Discounts weighs step t by gamma^t, and the last step of an episode
// that stays in its absorbing state (Tail) by its whole tail,
// gamma^t/(1 - gamma).
func TestDiscounts(t *testing.T) {
	steps := func(n int) []dataset.Step {
		s := make([]dataset.Step, n)
		for k := range s {
			s[k].HasNext = k < n-1
		}
		return s
	}
	d, err := dataset.New(1, 1, []dataset.Episode{{ID: "a", Steps: steps(3)}, {ID: "b", Steps: steps(2)}})
	if err != nil {
		t.Fatal(err)
	}
	d.Tail = []bool{true, false}
	got := d.Discounts(0.5)
	want := []float64{1, 0.5, 0.25 / 0.5, 1, 0.5}
	if !slices.Equal(got, want) {
		t.Errorf("Discounts(0.5) = %v, want %v", got, want)
	}
	if got := d.Discounts(1); !slices.Equal(got, []float64{1, 1, 1, 1, 1}) {
		t.Errorf("Discounts(1) = %v (no tail at gamma = 1)", got)
	}
}
