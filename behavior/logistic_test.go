package behavior_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/behavior"
	"github.com/ihope-ope/ihope/dataset"
)

// softmaxLog samples m episodes of T steps of a 2-D AR(1) state,
// s' = 0.8 s + N(0, 1), with actions from the linear softmax
// pi0(a|s) ∝ exp(W_a . s + c_a) over 3 actions (W = 0: uniform), and
// returns the log with the true behavior log-probabilities.
func softmaxLog(t testing.TB, seed uint64, m, T int, W [3][3]float64) *dataset.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	var b dataset.Builder
	b.Init(0, 3, 2, 0)
	for e := range m {
		s := []float64{rng.NormFloat64(), rng.NormFloat64()}
		for range T {
			var z [3]float64
			for a := range z {
				z[a] = W[a][0]*s[0] + W[a][1]*s[1] + W[a][2]
			}
			lse := math.Log(math.Exp(z[0]) + math.Exp(z[1]) + math.Exp(z[2]))
			u, a := rng.Float64(), 0
			for ; a < 2 && u > math.Exp(z[a]-lse); a++ {
				u -= math.Exp(z[a] - lse)
			}
			next := []float64{0.8*s[0] + rng.NormFloat64(), 0.8*s[1] + rng.NormFloat64()}
			b.Add(dataset.Step{State: -1, Obs: s, Action: a, Reward: s[0], HasNext: true, NextState: -1, NextObs: next,
				LogBehavior: z[a] - lse, LogTarget: math.Log(1. / 3)})
			s = next
		}
		b.EndEpisode(fmt.Sprint(e))
	}
	d, err := b.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// On a log of a linear-softmax behavior the regression is well
// specified: its cross-fitted probabilities approach the true ones, with
// a small penalty; on a behavior that ignores the state a large penalty
// wins the held-out comparison.
func TestLogisticRecoversSoftmax(t *testing.T) {
	informative := [3][3]float64{{1.5, 0, 0.5}, {0, -1, 0}, {-1, 1, -0.5}}
	for i, c := range []struct {
		W          [3][3]float64
		m, T       int
		maxMeanAbs float64 // largest mean |log pi0 - log pihat| allowed
		lambda     [2]float64
	}{
		{informative, 40, 50, 0.04, [2]float64{1e-5, 0.1}},
		{informative, 1, 2000, 0.04, [2]float64{1e-5, 0.1}}, // one continuing episode
		{[3][3]float64{}, 40, 50, 0.02, [2]float64{1e-1, 1}},
	} {
		d := softmaxLog(t, uint64(i)+1, c.m, c.T, c.W)
		lp, err := behavior.CrossFit(behavior.Logistic{}, d, 0)
		if err != nil {
			t.Fatal(err)
		}
		dist := behavior.Compare(d.LogBehavior, lp)
		model, err := behavior.Logistic{}.Fit(d)
		if err != nil {
			t.Fatal(err)
		}
		lam := model.(*behavior.LogisticModel).Lambda
		t.Logf("%d: mean |log ratio| %.4f, KL %.4f, max %.3f; penalty %g", i, dist.MeanAbsLogRatio, dist.KL, dist.MaxAbsLogRatio, lam)
		if dist.MeanAbsLogRatio > c.maxMeanAbs || math.Abs(dist.KL) > c.maxMeanAbs {
			t.Errorf("%d: fitted probabilities %+v from the true ones", i, dist)
		}
		if lam < c.lambda[0] || lam > c.lambda[1] {
			t.Errorf("%d: penalty %g, want in %v", i, lam, c.lambda)
		}
	}
}
