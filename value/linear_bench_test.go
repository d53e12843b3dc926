package value

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// synthLog returns n steps in episodes of 1000 of random logs with real
// states of dimension dim and k discrete actions (with target
// probabilities) or, with k = 0, real actions of dimension m, built
// column by column.
func synthLog(n, dim, k, m int) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(1, 1))
	const T = 1000
	ne := n / T
	d := &dataset.Dataset{StateDim: dim, NumActions: k, ActionDim: m, Start: []int{0}}
	norm := func(v []float64) {
		for i := range v {
			v[i] = rng.NormFloat64()
		}
	}
	probs := func(v []float64) {
		for i := range v {
			v[i] = 1 / float64(k)
		}
	}
	d.Obs = make([]float64, n*dim)
	norm(d.Obs)
	d.FinalObs = make([]float64, ne*dim)
	norm(d.FinalObs)
	if k > 0 {
		d.Action = make([]int32, n)
		for j := range d.Action {
			d.Action[j] = int32(rng.IntN(k))
		}
		d.TargetProbs, d.FinalTargetProbs = make([]float64, n*k), make([]float64, ne*k)
		probs(d.TargetProbs)
		probs(d.FinalTargetProbs)
		d.HasFinalTarget = make([]bool, ne)
	} else {
		d.ActionVec = make([]float64, n*m)
		norm(d.ActionVec)
	}
	d.Reward, d.LogBehavior, d.LogTarget = make([]float64, n), make([]float64, n), make([]float64, n)
	norm(d.Reward)
	d.HasFinal = make([]bool, ne)
	for e := range ne {
		d.IDs = append(d.IDs, fmt.Sprint(e))
		d.Start = append(d.Start, (e+1)*T)
		d.HasFinal[e] = true
		if k > 0 {
			d.HasFinalTarget[e] = true
		}
	}
	return d
}

// BenchmarkLinearFit times Linear.Fit on a million logged steps with
// about 100 features:
//
//   - "discrete": 5 state components, 5 actions, 21 monomials per action
//     (105 features), target probabilities from the logs;
//   - "real-S": 11 state and 2 action components, 105 monomials of the
//     joint vector, S actions drawn per next state from a linear-Gaussian
//     policy;
//   - "finite" variants fit the finite-horizon form (1000 steps left at
//     most).
func BenchmarkLinearFit(b *testing.B) {
	const n = 1_000_000
	disc := synthLog(n, 5, 5, 0)
	real := synthLog(n, 11, 0, 2)
	kmat := mat.NewDense(2, 11, nil)
	for i := range 2 {
		kmat.Set(i, i, -0.5)
	}
	pol, err := lineargauss.NewPolicy(kmat, []float64{0, 0}, mat.NewSymDense(2, []float64{0.5, 0, 0, 0.5}))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		d      *dataset.Dataset
		pi     Target
		finite bool
	}{
		{"discrete", disc, Target{}, false},
		{"discrete-finite", disc, Target{}, true},
		{"real-S1", real, Target{Continuous: pol, Samples: 1}, false},
		{"real-S16", real, Target{Continuous: pol}, false},
		{"real-S1-finite", real, Target{Continuous: pol, Samples: 1}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				m, err := Linear{Finite: c.finite}.FitLinear(c.d, 0.99, c.pi)
				if err != nil {
					b.Fatal(err)
				}
				if m.NumFeatures() != 105 {
					b.Fatalf("%d features", m.NumFeatures())
				}
			}
		})
	}
}

// BenchmarkLinearValues times LinearModel.Values on the same logs.
func BenchmarkLinearValues(b *testing.B) {
	const n = 1_000_000
	disc := synthLog(n, 5, 5, 0)
	m, err := Linear{}.FitLinear(disc, 0.99, Target{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, _, err := m.Values(disc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelect times Select.Choose on 150 episodes of 1,000 steps of
// the 2-d linear-Gaussian system (real actions, one target draw per next
// state): 5 folds of the 5 degrees (up to 56 joint monomials), and
// alone the held-out criterion's test class (Sigma on all the steps, 56
// features) that the choice builds once.
func BenchmarkSelect(b *testing.B) {
	p := lineargauss.Problem2D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(1, 0)), p.System, p.Behavior, p.Target, 150, 1000)
	if err != nil {
		b.Fatal(err)
	}
	pi := Target{Continuous: p.Target, Samples: 1}
	b.Run("choose", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := (Select{Seed: 1}).Choose(d, 0.99, pi); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("test-class", func(b *testing.B) {
		for b.Loop() {
			if _, err := newProjectedScores(d, make([]int, d.NumEpisodes())); err != nil {
				b.Fatal(err)
			}
		}
	})
}
