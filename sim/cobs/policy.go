package cobs

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/policy"
)

// The policy family of COBS's toy experiments (paper.py, toy_graph and
// toy_mc; cfgs/base_toy_graph_cfg.json and base_toy_mc_cfg.json): level k
// of 0..4 takes the first action with probability Level(k). The target is
// level 1 and the behavior level 4 in every world of this package.
const (
	TargetK   = 1
	BehaviorK = 4
	NumLevels = 5 // levels 0..4
)

// Level returns COBS's action probability of level k, max(0.001, 0.2 k):
// 0.001, 0.2, 0.4, 0.6, 0.8 for k = 0..4 (the floor keeps every action
// possible, so that importance ratios stay finite). It panics unless
// 0 <= k < NumLevels.
func Level(k int) float64 {
	if k < 0 || k >= NumLevels {
		panic(fmt.Sprintf("cobs: policy level %d outside 0..%d", k, NumLevels-1))
	}
	return math.Max(0.001, 0.2*float64(k))
}

// stateless returns the two-action policy that picks action act with
// probability p in every state but the absorbing ones, whose row is
// (1, 0).
func stateless(n int, absorbing func(int) bool, act int, p float64) *policy.Tabular {
	if !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("cobs: action probability %v outside [0, 1]", p))
	}
	row := []float64{p, 1 - p}
	if act == 1 {
		row = []float64{1 - p, p}
	}
	rows := make([][]float64, n)
	for s := range rows {
		rows[s] = row
		if absorbing(s) {
			rows[s] = []float64{1, 0}
		}
	}
	pi, err := policy.NewTabular(rows)
	if err != nil {
		panic(err) // unreachable: the rows are distributions
	}
	return pi
}
