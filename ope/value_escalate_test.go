package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/value"
)

// pendulumDiscounted is the target's normalised value on Pendulum at
// gamma = 0.99 from reset, by the 20,000 rollouts of 1,000 steps of
// pendulumWorlds (gamma^1000 = 4e-5: the long-run and T-step values
// agree); docs/methods.md's table states it as -1.4512.
const pendulumDiscounted = -1.4512

// On discounted Pendulum no polynomial degree holds q (every degree but
// the third errs by 1.3 or more, docs/methods.md), and the held-out test
// says so (value.Misfit); fqe's default selection then scores a network
// on the same folds, which wins by its held-out Bellman error, and fqe
// and dr come within 0.3 of the truth where the best polynomial errs by
// more than 1. The log is the paper's 150 episodes of 1,000 steps: on 60
// the test cannot reject degree 6 (its score 3.1 with a standard error
// of 2.8), and the network is not tried.
func TestValueEscalatesOnPendulum(t *testing.T) {
	world, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	behavior, err := pendulum.Behavior(1)
	if err != nil {
		t.Fatal(err)
	}
	const gamma = 0.99
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(1, 91)), world, behavior, target, 150, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var states, actions [][]float64
	rng := rand.New(rand.NewPCG(1, 92))
	d.TargetStates(func(obs []float64, _, _ int, _ bool) bool {
		states, actions = append(states, obs), append(actions, target.Sample(rng, obs))
		return true
	})
	draws, err := policy.NewDraws(states, actions)
	if err != nil {
		t.Fatal(err)
	}
	pi := value.Target{Continuous: draws, Seed: 1}
	_, polys, err := value.Select{Seed: 1}.Choose(d, gamma, pi)
	if err != nil {
		t.Fatal(err)
	}
	if !value.Misfit(polys) {
		t.Fatalf("the polynomial classes pass the held-out test on Pendulum: %v", polys)
	}
	// The network of ope.New's default, value.Neural seeded by the seed,
	// and one run's shared choice, so that dr reuses fqe's.
	net, choices := &value.Neural{Seed: 1}, &ope.ValueChoices{}
	fqe, err := ope.FQE{Target: pi, Estimand: ope.LongRun, SelectSeed: 1, Network: net, Choices: choices}.Estimate(d, gamma)
	if err != nil {
		t.Fatal(err)
	}
	if fqe.ModelClass != "neural" || len(fqe.Selection) != len(polys.Scores)+1 {
		t.Fatalf("fqe chose %q among %v, want the network after the %d polynomial classes", fqe.ModelClass, fqe.Selection, len(polys.Scores))
	}
	best := math.Inf(1)
	for _, s := range fqe.Selection[:len(polys.Scores)] {
		best = math.Min(best, s.Score)
	}
	if net := fqe.Selection[len(polys.Scores)]; net.Score+2*net.SE >= best {
		t.Errorf("the network's held-out score %.3g (SE %.2g) is not clearly below the best polynomial's %.3g", net.Score, net.SE, best)
	}
	poly, err := ope.FQE{Target: pi, Estimand: ope.LongRun, Degree: degreeOf(t, polys.Winner)}.Estimate(d, gamma)
	if err != nil {
		t.Fatal(err)
	}
	dr, err := ope.DR{Target: pi, Estimand: ope.LongRun, SelectSeed: 1, Network: net, Choices: choices}.Estimate(d, gamma)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fqe %.4f (%s), dr %.4f, fqe with %s %.4f; truth %.4f", fqe.Value, fqe.ModelClass, dr.Value, polys.Winner, poly.Value, pendulumDiscounted)
	if e := math.Abs(poly.Value - pendulumDiscounted); e < 1 {
		t.Errorf("fqe with %s errs %.3f: the world no longer needs the network", polys.Winner, e)
	}
	for name, v := range map[string]float64{"fqe": fqe.Value, "dr": dr.Value} {
		if e := math.Abs(v - pendulumDiscounted); e > 0.3 {
			t.Errorf("%s errs %.3f with the network", name, e)
		}
	}

	// bch-kernel's value test reads the same network (ratio.Kernel's
	// WithValue, in MWL's form): its estimate errs +0.07 where the
	// backward form of Liu et al. left it at +0.43, and step-wise WIS
	// errs +0.51 on this log.
	fqeTest := ope.FQE{Target: pi, Estimand: ope.LongRun, SelectSeed: 1, Network: net, Choices: choices}
	bk, err := ope.DensityRatio{Learner: ratio.Kernel{Seed: 1}, ValueTest: &fqeTest}.Estimate(d, gamma)
	if err != nil {
		t.Fatal(err)
	}
	wis, err := (&ope.StepwiseWIS{}).Estimate(d, gamma)
	if err != nil {
		t.Fatal(err)
	}
	ek, ew := math.Abs(bk.Value-pendulumDiscounted), math.Abs(wis.Value-pendulumDiscounted)
	t.Logf("bch-kernel %.4f (%s), wis-stepwise %.4f", bk.Value, bk.Learner, wis.Value)
	if bk.Learner != "kernel/neural" || !(ek < 0.2 && ek < ew) {
		t.Errorf("bch-kernel (%s) errs %.3f, step-wise WIS %.3f: want the value-tested kernel within 0.2 and below WIS", bk.Learner, ek, ew)
	}
}

func degreeOf(t *testing.T, class string) int {
	var deg int
	if _, err := fmt.Sscanf(class, "poly%d", &deg); err != nil {
		t.Fatalf("class %q", class)
	}
	return deg
}
