package rollout_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

func TestEvaluate(t *testing.T) {
	p := lineargauss.Problem1D()
	rng := rand.New(rand.NewPCG(9, 9))
	// Reset at the behavior's stationary law: every step's expected reward
	// is the average reward, -0.64459 (lineargauss.Problem1D).
	want, _ := p.System.AverageReward(p.Behavior)
	m, se, err := rollout.Evaluate(rng, p.System, p.Behavior, 4000, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m-want) > 5*se || se > 0.01 {
		t.Errorf("average reward %.4f +- %.4f, exact %.4f", m, se, want)
	}
	// Discounted: against the exact moment recursion.
	want, _ = p.System.Value(p.Target, 0.8, 15)
	m, se, err = rollout.Evaluate(rng, p.System, p.Target, 4000, 15, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m-want) > 5*se || se > 0.01 {
		t.Errorf("discounted value %.4f +- %.4f, exact %.4f", m, se, want)
	}
	if _, _, err := rollout.Evaluate(rng, p.System, p.Target, 0, 15, 0.8); err == nil {
		t.Error("0 episodes accepted")
	}
	if _, _, err := rollout.Evaluate(rng, p.System, p.Target, 10, 15, 1.5); err == nil {
		t.Error("discount 1.5 accepted")
	}
}

func ExampleEvaluate() {
	// The 1-d linear-Gaussian problem starts at its behavior's stationary
	// law, whose average reward is -0.64459 in closed form.
	p := lineargauss.Problem1D()
	exact, _ := p.System.AverageReward(p.Behavior)
	rng := rand.New(rand.NewPCG(1, 1))
	mean, se, _ := rollout.Evaluate(rng, p.System, p.Behavior, 2000, 50, 1)
	fmt.Printf("exact %.3f, Monte Carlo within 4 standard errors: %v\n", exact, math.Abs(mean-exact) < 4*se)
	// Output:
	// exact -0.645, Monte Carlo within 4 standard errors: true
}
