package behavior_test

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/behavior"
	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// readLog reads a CSV log of the log contract.
func readLog(t testing.TB, csv string) *dataset.Dataset {
	t.Helper()
	d, err := logio.ReadCSV(strings.NewReader(csv), "logs.csv")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Episode "a" logs action 0 twice in state 0, episode "b" action 1 once
// and action 0 once in state 1; two actions.
const twoEpisodes = "episode,t,state,action,reward,target_prob\n" +
	"a,0,0,0,1,0.5\na,1,0,0,1,0.5\nb,0,0,1,0,0.5\nb,1,1,0,0,0.5\n"

// The cross-fitted probabilities, computed by hand from the counts of
// the other folds: pihat(a|s) = (n(s,a) + lambda) / (n(s) + 2 lambda).
func TestCountsCrossFit(t *testing.T) {
	d := readLog(t, twoEpisodes)
	one := readLog(t, "episode,t,state,action,reward,target_prob\nx,0,0,0,1,0.5\nx,1,0,1,1,0.5\nx,2,0,1,1,0.5\nx,3,0,1,1,0.5\n")
	for i, c := range []struct {
		d      *dataset.Dataset
		lambda float64
		folds  int
		want   []float64 // probabilities of the logged actions
	}{
		// Episode a from b's counts: state 0 has (0, 1), so 0.5/2 for
		// action 0; episode b from a's: state 0 has (2, 0), 0.5/3 for
		// action 1; state 1 unseen, uniform.
		{d, 0, 2, []float64{0.25, 0.25, 0.5 / 3, 0.5}},
		{d, 1, 2, []float64{1. / 3, 1. / 3, 1. / 4, 0.5}},
		// In sample: state 0 has (2, 1), state 1 (1, 0).
		{d, 0, 1, []float64{2.5 / 4, 2.5 / 4, 1.5 / 4, 1.5 / 2}},
		// More folds than episodes: one episode per fold.
		{d, 0, 5, []float64{0.25, 0.25, 0.5 / 3, 0.5}},
		// A bootstrap resample with episode a twice: both copies in one
		// fold, fitted from b alone; b from a's two copies, (4, 0).
		{d.Subset([]int{0, 0, 1}), 0, 2, []float64{0.25, 0.25, 0.25, 0.25, 0.5 / 5, 0.5}},
		// One episode, two blocks of two steps: steps 0-1 (actions 0, 1)
		// from steps 2-3 (1, 1) and the other way round.
		{one, 0, 2, []float64{0.5 / 3, 2.5 / 3, 1.5 / 3, 1.5 / 3}},
	} {
		lp, err := behavior.CrossFit(behavior.Counts{Smoothing: c.lambda}, c.d, c.folds)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		for j, w := range c.want {
			if got := math.Exp(lp[j]); !scalar.EqualWithinAbsOrRel(got, w, 1e-14, 1e-14) {
				t.Errorf("%d: step %d: %v, want %v", i, j, got, w)
			}
		}
	}
}

func TestCountsErrors(t *testing.T) {
	d := readLog(t, twoEpisodes)
	real := readLog(t, "episode,t,state_0,action,reward,target_prob\na,0,0.5,0,1,0.5\nb,0,0.25,1,1,0.5\n")
	vec := readLog(t, "episode,t,state,action_0,reward,target_prob\na,0,0,0.5,1,0.5\nb,0,1,0.25,1,0.5\n")
	for i, c := range []struct {
		l     behavior.Learner
		d     *dataset.Dataset
		folds int
		want  string
	}{
		{behavior.Counts{Smoothing: -1}, d, 2, "smoothing -1"},
		{behavior.Counts{}, real, 2, "need discrete states"},
		{behavior.Counts{}, vec, 2, "needs discrete actions"},
		{behavior.Logistic{}, d, 2, "needs real states"},
		{behavior.Counts{}, d, -1, "-1 folds"},
		{behavior.Counts{}, readLog(t, "episode,t,state,action,reward,target_prob\na,0,0,0,1,0.5\n"), 2, "needs two episodes"},
	} {
		if _, err := behavior.CrossFit(c.l, c.d, c.folds); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d: error %v, want %q", i, err, c.want)
		}
	}
	if _, err := behavior.For(vec); err == nil {
		t.Error("For: no error for real actions")
	}
	for _, c := range []struct {
		d    *dataset.Dataset
		want string
	}{{d, "counts"}, {real, "logistic"}} {
		if l, err := behavior.For(c.d); err != nil || l.Name() != c.want {
			t.Errorf("For: %v, %v; want %s", l, err, c.want)
		}
	}
}

func TestCompare(t *testing.T) {
	logged := []float64{math.Log(0.5), math.Log(0.25), math.Log(0.5)}
	fitted := []float64{math.Log(0.25), math.Log(0.5), math.Log(0.5)}
	got := behavior.Compare(logged, fitted)
	ln2 := math.Ln2
	if !scalar.EqualWithinAbs(got.MeanAbsLogRatio, 2*ln2/3, 1e-15) || !scalar.EqualWithinAbs(got.KL, 0, 1e-15) ||
		got.MaxAbsLogRatio != ln2 || got.MaxStep != 0 {
		t.Errorf("Compare = %+v", got)
	}
}

// TestCountsLargeIDs: the counts cost the pairs logged, not states x
// actions. A 2-step log with state 4,194,303 and action 1,000 asked
// Counts.Fit for 4,194,304 x 1,001 floats (33 GB); the pairs' estimates
// are Lidstone's with K = 1001.
func TestCountsLargeIDs(t *testing.T) {
	d := readLog(t, "episode,t,state,action,reward,behavior_prob,target_prob\n"+
		"e,0,0,0,1,0.5,0.5\ne,1,4194303,1000,1,0.5,0.5\n")
	m, err := behavior.Counts{}.Fit(d)
	if err != nil {
		t.Fatal(err)
	}
	cm := m.(*behavior.CountsModel)
	for _, c := range []struct {
		s, a int
		want float64
	}{
		{4194303, 1000, 1.5 / (1 + 0.5*1001)},
		{4194303, 0, 0.5 / (1 + 0.5*1001)},
		{0, 0, 1.5 / (1 + 0.5*1001)},
		{7, 3, 1.0 / 1001}, // a state never seen: uniform
	} {
		if got := cm.Prob(c.s, c.a); !scalar.EqualWithinRel(got, c.want, 1e-15) {
			t.Errorf("Prob(%d, %d) = %v, want %v", c.s, c.a, got, c.want)
		}
	}
}
