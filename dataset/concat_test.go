package dataset

import (
	"reflect"
	"testing"
)

// Concatenating one-episode subsets gives the subset of the same episodes
// in the same order, column for column.
func TestConcatEqualsSubset(t *testing.T) {
	ep := func(id string, states []int, final int) Episode {
		e := Episode{ID: id}
		for t, s := range states {
			next := final
			if t+1 < len(states) {
				next = states[t+1]
			}
			e.Steps = append(e.Steps, Step{State: s, Action: t % 2, Reward: float64(s + t), HasNext: true, NextState: next,
				LogBehavior: -0.7, LogTarget: -0.1 * float64(t+1)})
		}
		return e
	}
	d, err := New(3, 2, []Episode{ep("a", []int{0, 1, 2}, 1), ep("b", []int{2, 2}, 0), ep("c", []int{1}, 2)})
	if err != nil {
		t.Fatal(err)
	}
	order := []int{2, 0, 1}
	var parts []*Dataset
	for _, e := range order {
		parts = append(parts, d.Subset([]int{e}))
	}
	got, err := Concat(parts)
	if err != nil {
		t.Fatal(err)
	}
	if want := d.Subset(order); !reflect.DeepEqual(got, want) {
		t.Errorf("concat\n%+v\nsubset\n%+v", got, want)
	}
	if _, err := Concat(nil); err == nil {
		t.Error("no error for no parts")
	}
}
