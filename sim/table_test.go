package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/mdp"
)

func TestNewTable(t *testing.T) {
	loop := []mdp.Outcome{{Next: 0, Prob: 1}}
	bad := []struct {
		name string
		out  [][][]mdp.Outcome
		init []float64
	}{
		{"empty", nil, nil},
		{"no actions", [][][]mdp.Outcome{{}}, []float64{1}},
		{"ragged", [][][]mdp.Outcome{{loop, loop}, {loop}}, []float64{1, 0}},
		{"probabilities sum to 0.5", [][][]mdp.Outcome{{{{Next: 0, Prob: 0.5}}}}, []float64{1}},
		{"next out of range", [][][]mdp.Outcome{{{{Next: 1, Prob: 1}}}}, []float64{1}},
		{"initial of the wrong length", [][][]mdp.Outcome{{loop}}, []float64{0.5, 0.5}},
	}
	for i, c := range bad {
		if _, err := NewTable(c.out, c.init); err == nil {
			t.Errorf("case %d (%s): accepted", i, c.name)
		}
	}
}

// TestTableSamples: a Table draws exactly what a Sampler of the same table
// draws, from the same random numbers.
func TestTableSamples(t *testing.T) {
	c := chain{}
	out := make([][][]mdp.Outcome, c.NumStates())
	for s := range out {
		out[s] = [][]mdp.Outcome{c.Outcomes(s, 0)}
	}
	tab, err := NewTable(out, c.Initial())
	if err != nil {
		t.Fatal(err)
	}
	ref := NewSampler(c)
	r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		s1, s2 := tab.Reset(r1), ref.Reset(r2)
		n1, w1 := tab.Step(r1, s1, 0)
		n2, w2 := ref.Step(r2, s2, 0)
		if s1 != s2 || n1 != n2 || w1 != w2 {
			t.Fatalf("draw %d: table (%d, %d, %v), sampler (%d, %d, %v)", i, s1, n1, w1, s2, n2, w2)
		}
	}
}

func TestCheckAbsorbing(t *testing.T) {
	out := [][][]mdp.Outcome{
		{{{Next: 1, Prob: 1, Reward: 1}}, {{Next: 0, Prob: 1}}},
		{{{Next: 1, Prob: 1}}, {{Next: 1, Prob: 0.5}, {Next: 1, Prob: 0.5}, {Next: 0, Prob: 0, Reward: 3}}},
	}
	tab, err := NewTable(out, []float64{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		absorbing func(int) bool
		ok        bool
	}{
		{func(s int) bool { return s == 1 }, true},  // split self-loop, zero-probability exit
		{func(s int) bool { return s == 0 }, false}, // action 0 leaves with reward 1
		{func(int) bool { return false }, true},
	}
	for i, c := range cases {
		if err := CheckAbsorbing(tab, c.absorbing); (err == nil) != c.ok {
			t.Errorf("case %d: error %v, want ok = %v", i, err, c.ok)
		}
	}
}
