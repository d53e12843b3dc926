package ope_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/research/benchmark"
)

// The Markov test rejects the aliased states of COBS's ModelFail on every
// seed, at the least p-value its permutations can give, and keeps its
// level on the fully observed Graph: none of 20 logs at MarkovAlpha, at
// most two at or below 0.05 (a correct test exceeds that with probability
// 0.08).
func TestMarkovTest(t *testing.T) {
	fail, err := benchmark.WorldNamed("modelfail")
	if err != nil {
		t.Fatal(err)
	}
	graph, err := benchmark.WorldNamed("graph")
	if err != nil {
		t.Fatal(err)
	}
	for seed := range 5 {
		d, err := fail.Sample(rand.New(rand.NewPCG(uint64(seed), 3)), 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ope.MarkovTest{Seed: 1}.Run(d)
		if err != nil || r.PValue > ope.MarkovAlpha {
			t.Errorf("ModelFail seed %d: %+v, %v: want p <= %g", seed, r, err, ope.MarkovAlpha)
		}
	}
	low := 0
	for seed := range 20 {
		d, err := graph.Sample(rand.New(rand.NewPCG(uint64(seed), 4)), 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ope.MarkovTest{Seed: uint64(seed)}.Run(d)
		if err != nil {
			t.Fatal(err)
		}
		if r.PValue <= ope.MarkovAlpha {
			t.Errorf("Graph seed %d: p = %g, rejected", seed, r.PValue)
		}
		if r.PValue <= 0.05 {
			low++
		}
	}
	if low > 2 {
		t.Errorf("Graph: %d of 20 p-values at or below 0.05", low)
	}
	if _, err := (ope.MarkovTest{}).Run(&dataset.Dataset{StateDim: 2}); !errors.Is(err, ope.ErrMarkovNotDiscrete) {
		t.Errorf("real states: %v", err)
	}
}
