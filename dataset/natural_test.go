package dataset_test

import (
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

func TestNaturalLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"0", "1", true},
		{"9", "10", true},
		{"10", "9", false},
		{"ep2", "ep10", true},
		{"ep10", "ep2", false},
		{"ep", "ep1", true},
		{"a", "b", true},
		{"b", "a", false},
		{"07", "7", true}, // equal as numbers: by bytes
		{"7", "07", false},
		{"x9y", "x10a", true},
		{"user-3-run-2", "user-3-run-11", true},
		{"a", "a", false},
		{"", "0", true},
		{"99999999999999999999", "100000000000000000000", true}, // beyond int64
	} {
		if got := dataset.NaturalLess(c.a, c.b); got != c.less {
			t.Errorf("NaturalLess(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
}
