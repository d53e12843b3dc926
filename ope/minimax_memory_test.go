package ope_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/ope"
)

// A log of many states, each seen about once (most only as a next
// state): mwl's tabular flow links the states it never leaves to the
// logged states through one hub node, so its memory grows with the steps,
// not with their product (issue 33: 10^6 states took over 24 GB; 80,000
// steps took 354 MB of allocations, now 20 MB).
func TestMinimaxManyStatesMemory(t *testing.T) {
	const n, T = 80000, 50
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("episode,t,state,action,reward,behavior_prob,target_prob_0,target_prob_1\n")
	for e := range n / T {
		for s := range T {
			fmt.Fprintf(&b, "%d,%d,%d,%d,%.3f,0.5,0.3,0.7\n", e, s, rng.IntN(n), rng.IntN(2), rng.Float64())
		}
	}
	d, err := logio.ReadCSV(strings.NewReader(b.String()), "many.csv")
	if err != nil {
		t.Fatal(err)
	}
	ests, err := ope.New([]string{"mwl"}, ope.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := ests[0].Estimate(d, 1)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 150<<20 {
		t.Errorf("mwl on %d states allocated %d MB, want under 150", n, got>>20)
	}
	if !(res.Value > 0.45 && res.Value < 0.55) { // rewards uniform on [0, 1]
		t.Errorf("estimate %v", res.Value)
	}
}
