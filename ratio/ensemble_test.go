package ratio

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestEnsemble checks that an ensemble's ratio is the mean of its
// members' ratios, that member 0 is the learner with the ensemble's seed,
// that the members differ, and that the model does not depend on the
// number of workers.
func TestEnsemble(t *testing.T) {
	c := arChain{dim: 1, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	d := c.sample(rand.New(rand.NewPCG(3, 0)), 10, 50)
	l := Neural{Hidden: []int{8}, BatchSize: 64, MaxIter: 30, Workers: 1}
	fit := func(workers int) *EnsembleModel {
		m, err := Ensemble{Learner: l, Restarts: 3, Seed: 5, Workers: workers}.Fit(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		return m.(*EnsembleModel)
	}
	a, b := fit(1), fit(3)
	seeds, err := Ensemble{Learner: l, Restarts: 3, Seed: 5}.Seeds()
	if err != nil {
		t.Fatal(err)
	}
	if seeds[0] != 5 || seeds[1] == seeds[2] || seeds[1] == 5 {
		t.Errorf("seeds %v: want 5 first, then two others", seeds)
	}
	alone, err := l.WithSeed(5).Fit(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	mean, members, err := a.MemberRatios(d)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.StepRatios(d)
	if err != nil {
		t.Fatal(err)
	}
	w0, err := alone.StepRatios(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 3 {
		t.Fatalf("%d members, want 3", len(members))
	}
	differ := false
	for j := range mean {
		want := (members[0][j] + members[1][j] + members[2][j]) / 3
		if math.Abs(mean[j]-want) > 1e-12*math.Abs(want) {
			t.Fatalf("step %d: mean ratio %v, want %v", j, mean[j], want)
		}
		if math.Float64bits(mean[j]) != math.Float64bits(wb[j]) {
			t.Fatalf("step %d: %v with one worker, %v with three", j, mean[j], wb[j])
		}
		if math.Float64bits(members[0][j]) != math.Float64bits(w0[j]) {
			t.Fatalf("step %d: member 0 gives %v, the learner alone %v", j, members[0][j], w0[j])
		}
		differ = differ || members[1][j] != members[2][j]
	}
	if !differ {
		t.Errorf("members 1 and 2 give the same ratios")
	}
	if _, err := (Ensemble{Learner: l, Restarts: -1}).Fit(d, 1); err == nil {
		t.Errorf("-1 restarts: no error")
	}
}
