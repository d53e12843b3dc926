package ope

import (
	"slices"
	"testing"
)

func TestMiddleHalf(t *testing.T) {
	for _, tc := range []struct {
		est  []float64
		want []int
	}{
		{nil, []int{}},
		{[]float64{3}, []int{0}},
		{[]float64{3, 1, 2}, []int{0, 1, 2}},                    // R < 4: all
		{[]float64{-0.96, -0.11, -0.04, -0.03}, []int{1, 2}},    // drop the lowest and the highest
		{[]float64{5, -1, 2, 0, 9, 1, 3, 4}, []int{2, 5, 6, 7}}, // R = 8: two at each end (-1, 0 and 5, 9)
		{[]float64{1, 1, 1, 1, 1}, []int{1, 2, 3}},              // ties: stable
	} {
		if got := middleHalf(tc.est); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("middleHalf(%v) = %v, want %v", tc.est, got, tc.want)
		}
	}
}
