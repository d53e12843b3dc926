package ope_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/pointmass"
)

// bch-neural adds fqe's fitted value to its loss's test functions
// (ratio.ValueTested): on the discounted point mass, where the kernel
// loss alone lets the networks settle on a ratio of the long-run kind
// (the plain fit misses the truth by about 0.15), the row names the value
// model it was tested against and errs at most half as much.
func TestNeuralValueTest(t *testing.T) {
	if testing.Short() {
		t.Skip("trains four networks and fqe's class selection")
	}
	const gamma = 0.99
	sys, target, behavior := pointmass.Problem()
	d, err := sys.Sample(rand.New(rand.NewPCG(1, 31)), behavior, target, 200, 100)
	if err != nil {
		t.Fatal(err)
	}
	ests, err := ope.New([]string{"bch-neural"}, ope.Options{Seed: 1, Restarts: 2})
	if err != nil {
		t.Fatal(err)
	}
	tested, err := ests[0].Estimate(d, gamma)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ope.DensityRatio{Learner: ratio.Ensemble{Learner: ratio.Neural{}, Restarts: 2, Seed: 1}}.Estimate(d, gamma)
	if err != nil {
		t.Fatal(err)
	}
	truth := pointmass.TruthDiscounted
	et, ep := math.Abs(tested.Value-truth), math.Abs(plain.Value-truth)
	t.Logf("truth %.4f: with the value test %.4f (%s, %s), without %.4f (%s)", truth, tested.Value, tested.Learner, tested.ModelClass, plain.Value, plain.Learner)
	if tested.Learner != "neural/linear" || tested.ModelClass == "" || plain.Learner != "neural" {
		t.Errorf("learners %q (class %q) and %q, want neural/linear with its class and neural", tested.Learner, tested.ModelClass, plain.Learner)
	}
	if !(et < ep/2) {
		t.Errorf("|error| %.4f with the value test, %.4f without: want less than half", et, ep)
	}
}
