package paper

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// TestPendulumTruthStratified checks the stratified Monte Carlo truth
// against plain Monte Carlo from Pendulum's own Reset (an independent
// computation of the same values) and that stratifying the start state
// pays: per rollout, the standard deviation is 0.23 instead of 1.08 at
// T = 100 (gamma = 1) and 0.18 instead of 1.92 (gamma = 0.95), measured.
func TestPendulumTruthStratified(t *testing.T) {
	pairs := []truthPair{{100, 1}, {100, 0.95}}
	tr := newPendulumTruth(2000, pairs)
	if tr.rollouts() != 2024 { // 46 x 22 cells
		t.Fatalf("%d rollouts, want 2024", tr.rollouts())
	}
	env, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	v, err := tr.compute(context.Background(), "test", env, target, 0)
	if err != nil {
		t.Fatal(err)
	}
	const plainN = 4000
	for k, p := range pairs {
		m, se, err := rollout.Evaluate(rand.New(rand.NewPCG(1, 2)), env, target, plainN, p.T, p.gamma)
		if err != nil {
			t.Fatal(err)
		}
		got := v[p]
		sdStrat := got.se * math.Sqrt(float64(tr.rollouts()))
		sdPlain := se * math.Sqrt(plainN)
		z := (got.mean - m) / math.Hypot(se, got.se)
		t.Logf("case %d, T = %d, gamma = %g: stratified %.5f +- %.5f (sd %.3f), plain %.5f +- %.5f (sd %.3f), z = %.2f",
			k, p.T, p.gamma, got.mean, got.se, sdStrat, m, se, sdPlain, z)
		if math.Abs(z) > 4 {
			t.Errorf("case %d: stratified %v and plain %v Monte Carlo disagree by %.1f standard errors", k, got.mean, m, z)
		}
		if !(sdStrat < 0.3*sdPlain) {
			t.Errorf("case %d: stratified standard deviation %.3f is not below 0.3 x the plain %.3f", k, sdStrat, sdPlain)
		}
	}
}

// The truth does not depend on the number of goroutines, and it is
// repeatable.
func TestPendulumTruthDeterministic(t *testing.T) {
	tr := pendulumTruth{rows: 5, cols: 3, per: 2, pairs: []truthPair{{20, 1}, {10, 1}, {20, 0.9}}}
	env, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	a, err := tr.compute(context.Background(), "test", env, target, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.compute(context.Background(), "test", env, target, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("1 worker: %v\n3 workers: %v", a, b)
	}
	for p, v := range a {
		if !(v.se > 0) || v.mean >= 0 {
			t.Errorf("%v: %v +- %v", p, v.mean, v.se)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.compute(ctx, "test", env, target, 1); err == nil {
		t.Error("no error from a cancelled context")
	}
	if _, err := (pendulumTruth{rows: 2, cols: 2, per: 1, pairs: tr.pairs}).compute(context.Background(), "test", env, target, 1); err == nil {
		t.Error("no error with one rollout per cell")
	}
}

func TestPendulumTruthFor(t *testing.T) {
	gammas := []float64{0.95, 0.99}
	for k, tc := range []struct {
		p                    pendulumParams
		quick                bool
		rows, cols, rollouts int
		pairs                []truthPair
	}{
		// 8000 rollouts: 4000 cells, 44 columns (sqrt(4000/2) = 44.7),
		// ceil(4000/44) = 91 rows.
		{pendulumParams{150, 1000, 1, 1}, false, 91, 44, 8008, []truthPair{{1000, 1}}},
		// T = 200: 8000 x 5^2 = 200000 rollouts, 100000 cells,
		// 223 columns (sqrt(50000) = 223.6), ceil(448.4) = 449 rows.
		{pendulumParams{150, 200, 0.5, 1}, false, 449, 223, 200254, []truthPair{{200, 1}}},
		// T = 2000: 8000 / 2^2 = 2000 rollouts, 22 columns, 46 rows.
		{pendulumParams{150, 2000, 1, 1}, false, 46, 22, 2024, []truthPair{{2000, 1}}},
		// Discounted: every gamma at once, whatever the setting's gamma.
		{pendulumParams{150, 1000, 1, 0.95}, false, 91, 44, 8008, []truthPair{{1000, 0.95}, {1000, 0.99}}},
		// Quick: 1000 rollouts, 15 columns, 34 rows.
		{pendulumParams{8, 60, 1, 0.99}, true, 34, 15, 1020, []truthPair{{60, 0.95}, {60, 0.99}}},
	} {
		tr := pendulumTruthFor(tc.p, gammas, tc.quick)
		if tr.rows != tc.rows || tr.cols != tc.cols || tr.per != 2 || tr.rollouts() != tc.rollouts || !reflect.DeepEqual(tr.pairs, tc.pairs) {
			t.Errorf("case %d: %d x %d cells of %d (%d rollouts) for %v; want %d x %d of 2 (%d) for %v",
				k, tr.rows, tr.cols, tr.per, tr.rollouts(), tr.pairs, tc.rows, tc.cols, tc.rollouts, tc.pairs)
		}
	}
}
