package ratio

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

// neuralEpisode builds a one-dimensional episode through the states s,
// whose step t has ratio beta[t] and reward s[t]; its actions are action
// 0 of two, taken with probability 1/2 by the behavior.
func neuralEpisode(id string, s []float64, beta []float64) dataset.Episode {
	ep := dataset.Episode{ID: id}
	for t := 0; t+1 < len(s); t++ {
		ep.Steps = append(ep.Steps, dataset.Step{
			State: -1, Obs: []float64{s[t]}, Action: 0, Reward: s[t],
			HasNext: true, NextState: -1, NextObs: []float64{s[t+1]},
			LogBehavior: math.Log(0.5), LogTarget: math.Log(0.5 * beta[t]),
		})
	}
	return ep
}

func TestSplitTransitionsWeights(t *testing.T) {
	d := mustNew(t, 0, 2, []dataset.Episode{
		neuralEpisode("a", []float64{1, 2, 3, 4}, []float64{2, 1, 0.5}),
	})
	mean, scale := []float64{0}, []float64{1}
	for k, tc := range []struct {
		gamma  float64
		dummy  []bool
		weight []float64
		beta   []float64
	}{
		// Algorithm 2: the dummy t = -1 into s_0 weighs gamma^0, step t gamma^(t+1).
		{0.5, []bool{true, false, false, false}, []float64{1, 0.5, 0.25, 0.125}, []float64{0, 2, 1, 0.5}},
		// Algorithm 1: no dummy, uniform draws.
		{1, []bool{false, false, false}, []float64{1, 1, 1}, []float64{2, 1, 0.5}},
	} {
		tr, held := splitTransitions(rand.New(rand.NewPCG(1, 0)), d, tc.gamma, -1, mean, scale, nil)
		if held != nil {
			t.Fatalf("case %d: held-out transitions %v", k, held)
		}
		if tr.len() != len(tc.dummy) {
			t.Fatalf("case %d: %d transitions, want %d", k, tr.len(), len(tc.dummy))
		}
		for i := range tc.dummy {
			if tr.dummy[i] != tc.dummy[i] || tr.weight[i] != tc.weight[i] || math.Abs(tr.beta[i]-tc.beta[i]) > 1e-15 {
				t.Errorf("case %d transition %d: dummy %v weight %v beta %v, want %v %v %v",
					k, i, tr.dummy[i], tr.weight[i], tr.beta[i], tc.dummy[i], tc.weight[i], tc.beta[i])
			}
		}
		if tc.dummy[0] && (tr.s[0] != 1 || tr.next[0] != 1) {
			t.Errorf("case %d: dummy transition %v -> %v, want into s_0 = 1", k, tr.s[0], tr.next[0])
		}
		if (tc.gamma == 1) != (tr.cum == nil) {
			t.Errorf("case %d: cumulative weights %v", k, tr.cum)
		}
	}
}

func TestSplitTransitionsHeldOut(t *testing.T) {
	long := make([]float64, 21)
	beta := make([]float64, 20)
	for i := range long {
		long[i] = float64(i)
	}
	for i := range beta {
		beta[i] = 1
	}
	one := mustNew(t, 0, 2, []dataset.Episode{neuralEpisode("long", long, beta)})
	train, held := splitTransitions(rand.New(rand.NewPCG(1, 0)), one, 1, 0.1, []float64{0}, []float64{1}, nil)
	// One episode: its last 10% (2 of 20 steps) is held out.
	if train.len() != 18 || held.len() != 2 || held.s[0] != 18 || held.s[1] != 19 {
		t.Errorf("tail split: %d training, held-out states %v, want 18 and [18 19]", train.len(), held.s)
	}

	var eps []dataset.Episode
	for e := range 30 {
		eps = append(eps, neuralEpisode(string(rune('A'+e)), []float64{float64(e), 0, 1}, []float64{1, 1}))
	}
	many := mustNew(t, 0, 2, eps)
	train, held = splitTransitions(rand.New(rand.NewPCG(1, 0)), many, 0.9, 0.1, []float64{0}, []float64{1}, nil)
	// 30 episodes: 3 whole episodes (2 steps and a dummy each) are held out.
	if train.len() != 27*3 || held.len() != 3*3 {
		t.Errorf("episode split: %d training and %d held-out transitions, want 81 and 9", train.len(), held.len())
	}
	seen := map[float64]bool{}
	for i := range held.dummy {
		if held.dummy[i] {
			seen[held.s[i]] = true
		}
	}
	for i := range train.dummy {
		if train.dummy[i] && seen[train.s[i]] {
			t.Errorf("episode %v is both held out and trained on", train.s[i])
		}
	}
}

func TestMedianBandwidth(t *testing.T) {
	for k, tc := range []struct {
		next []float64
		want float64
	}{
		{[]float64{0, 1, 3}, 2},        // distances 1, 3, 2
		{[]float64{0, 1, 3, 6}, 3},     // 1, 3, 6, 2, 5, 3: (3 + 3)/2
		{[]float64{5, 5, 5, 5, 7}, 2},  // six zeros of ten: median of the non-zero
		{[]float64{0, 0, 0, 0, 0}, -1}, // all equal: error
	} {
		tr := &transitions{d: 1}
		for _, v := range tc.next {
			tr.add([]float64{0}, []float64{v}, 1, 1, false)
		}
		tr.add([]float64{0}, []float64{100}, 0, 1, true) // a dummy: ignored
		h, err := medianBandwidth(rand.New(rand.NewPCG(1, 0)), tr, 1000)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("case %d: no error for coinciding states", k)
			}
			continue
		}
		if err != nil || h != tc.want {
			t.Errorf("case %d: bandwidth %v (%v), want %v", k, h, err, tc.want)
		}
	}
}
