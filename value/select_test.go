package value

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pointmass"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// argmin checks that the winner is the candidate of least held-out score.
func checkArgmin(t *testing.T, sel Selection) {
	t.Helper()
	best := sel.Scores[0]
	for _, s := range sel.Scores[1:] {
		if s.Score < best.Score {
			best = s
		}
	}
	if sel.Winner != best.Name {
		t.Errorf("winner %s, but %s has the least held-out score (%v)", sel.Winner, best.Name, sel.Scores)
	}
}

// On the point mass, whose q is not quadratic, the held-out TD residual
// prefers degree 3 or more; the winner is the argmin of the scores; the
// same seed gives the same selection.
func TestSelectPointMass(t *testing.T) {
	sys, target, behavior := pointmass.Problem()
	for _, c := range []struct {
		seed  uint64
		gamma float64
	}{{1, 0.99}, {2, 1}, {3, 0.99}} {
		d, err := sys.Sample(rand.New(rand.NewPCG(c.seed, 0)), behavior, target, 100, 100)
		if err != nil {
			t.Fatal(err)
		}
		s := Select{Seed: c.seed}
		l, sel, err := s.Choose(d, c.gamma, Target{})
		if err != nil {
			t.Fatal(err)
		}
		if len(sel.Scores) != 5 {
			t.Fatalf("seed %d: %d scores, want 5 (degrees 2..6 within 10,000/20 features)", c.seed, len(sel.Scores))
		}
		checkArgmin(t, sel)
		if deg := l.(Linear).Degree; deg < 3 {
			t.Errorf("seed %d gamma %g: chose degree %d (%v), want >= 3", c.seed, c.gamma, deg, sel.Scores)
		}
		_, again, err := s.Choose(d, c.gamma, Target{})
		if err != nil || !reflect.DeepEqual(sel, again) {
			t.Errorf("seed %d: the same seed gave another selection: %v, then %v", c.seed, sel, again)
		}
	}
}

// On the linear-Gaussian system q is exactly quadratic: no higher degree
// beats degree 2 by more than two standard errors of its score.
func TestSelectLinearGaussQuadratic(t *testing.T) {
	p := lineargauss.Problem1D()
	for seed := uint64(1); seed <= 2; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 60, 100)
		if err != nil {
			t.Fatal(err)
		}
		_, sel, err := Select{Seed: seed}.Choose(d, 0.99, Target{Continuous: p.Target, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		checkArgmin(t, sel)
		two := sel.Scores[0]
		if two.Name != "poly2" {
			t.Fatalf("first candidate %s", two.Name)
		}
		for _, s := range sel.Scores[1:] {
			if s.Score < two.Score-2*two.SE {
				t.Errorf("seed %d: %s beats poly2 by more than 2 SE: %v", seed, s.Name, sel.Scores)
			}
		}
	}
}

// The feature cap: at most one feature per 20 steps, degree 2 always.
func TestLinearCandidatesCap(t *testing.T) {
	sys, target, behavior := pointmass.Problem()
	for _, c := range []struct {
		n, T int
		want []string
	}{
		{10, 10, []string{"poly2"}},                                      // 100 steps: 30 features > 5
		{10, 100, []string{"poly2", "poly3"}},                            // 1000 steps: 50 features = 1000/20
		{30, 100, []string{"poly2", "poly3", "poly4", "poly5", "poly6"}}, // 3000 steps: 140 <= 150
	} {
		d, err := sys.Sample(rand.New(rand.NewPCG(1, 0)), behavior, target, c.n, c.T)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range LinearCandidates(d, false) {
			got = append(got, x.Name)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%d steps: candidates %v, want %v", c.n*c.T, got, c.want)
		}
	}
}
