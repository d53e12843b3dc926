package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pendulum"
)

func pendulumInit(t testing.TB, seed uint64) *policy.TruncGaussian {
	t.Helper()
	p, err := pendulum.NewPolicy(rand.New(rand.NewPCG(seed, 0)), 8, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The same seed gives bit-identical policies, whatever the number of
// workers; snapshot 0 is the initial policy.
func TestReinforceDeterministic(t *testing.T) {
	init := pendulumInit(t, 1)
	var runs [][]*policy.TruncGaussian
	for _, workers := range []int{1, 3, 1} {
		r := Reinforce{Episodes: 5, Horizon: 40, Workers: workers}
		res, err := r.Run(rand.New(rand.NewPCG(7, 7)), pendulum.Pendulum{}, init, []int{3, 0, 6, 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.AvgReward) != 6 || len(res.Policies) != 4 {
			t.Fatalf("%d rewards and %d policies, want 6 and 4", len(res.AvgReward), len(res.Policies))
		}
		runs = append(runs, res.Policies)
	}
	for k := range runs[0] {
		for w := 1; w < len(runs); w++ {
			if !slices.Equal(runs[0][k].Mean.Params, runs[w][k].Mean.Params) {
				t.Errorf("snapshot %d differs between runs 0 and %d", k, w)
			}
		}
	}
	if !slices.Equal(runs[0][1].Mean.Params, init.Mean.Params) {
		t.Error("snapshot at iteration 0 is not the initial policy")
	}
	if slices.Equal(runs[0][0].Mean.Params, init.Mean.Params) || !slices.Equal(runs[0][0].Mean.Params, runs[0][3].Mean.Params) {
		t.Error("snapshots at iteration 3 wrong")
	}
	if slices.Equal(runs[0][0].Mean.Params, runs[0][2].Mean.Params) {
		t.Error("iterations 3 and 6 gave the same policy")
	}
}

// A bandit with a known optimum: states are i.i.d. N(0, 1) (A = B = 0) and
// r = -(u - 1)^2 = -u^2 + 2u - 1, so the best truncated Gaussian with
// std 0.3 on [-2, 2] has its mean at 1 (up to a few 1e-3: the truncation
// 3.3 standard deviations above 1 moves it by less than that). REINFORCE
// must move the mean there from 0 whatever the state.
func TestReinforceBandit(t *testing.T) {
	one := func(v float64) *mat.Dense { return mat.NewDense(1, 1, []float64{v}) }
	var1 := func(v float64) *mat.SymDense { return mat.NewSymDense(1, []float64{v}) }
	sys, err := lineargauss.NewSystem(one(0), one(0), var1(1), []float64{0}, var1(1),
		lineargauss.Reward{UU: var1(-1), U: []float64{2}, Const: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := &policy.MLP{Sizes: []int{1, 4, 1}, Params: make([]float64, 13)}
	for i := range 4 {
		m.Params[i] = 0.5 * float64(i-2) // hidden weights; output starts at 0
	}
	init, err := policy.NewTruncGaussian(m, 0.3, []float64{-2}, []float64{2})
	if err != nil {
		t.Fatal(err)
	}
	r := Reinforce{Iterations: 250, Episodes: 8, Horizon: 20, Gamma: 0.5, LearningRate: 0.02}
	res, err := r.Run(rand.New(rand.NewPCG(1, 2)), sys, init, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Policies[0]
	for _, s := range []float64{-1.5, 0, 1.5} {
		t.Logf("state %v: mean %.4f", s, p.MeanAction([]float64{s})[0])
		if mu := p.MeanAction([]float64{s})[0]; math.Abs(mu-1) > 0.1 {
			t.Errorf("state %v: learned mean %.3f, want 1 +- 0.1", s, mu)
		}
	}
	// Optimal reward -Var(u) = -0.09; the start pays -(1 + 0.09).
	if first, last := res.AvgReward[0], res.AvgReward[len(res.AvgReward)-1]; first > -0.9 || last < -0.2 {
		t.Errorf("average reward went from %.3f to %.3f, want about -1.09 to -0.09", first, last)
	}
}

func TestReinforceErrors(t *testing.T) {
	init := pendulumInit(t, 1)
	rng := rand.New(rand.NewPCG(1, 1))
	for i, r := range []Reinforce{
		{Gamma: 1}, {Gamma: -0.5}, {LearningRate: -1}, {Episodes: -1}, {ValueLearningRate: math.Inf(1)},
	} {
		if _, err := r.Run(rng, pendulum.Pendulum{}, init, []int{1}); err == nil {
			t.Errorf("case %d: settings %+v accepted", i, r)
		}
	}
	if _, err := (Reinforce{}).Run(rng, pendulum.Pendulum{}, init, []int{-1}); err == nil {
		t.Error("negative snapshot accepted")
	}
	p := lineargauss.Problem2D()
	if _, err := (Reinforce{}).Run(rng, p.System, init, []int{1}); err == nil {
		t.Error("policy of 3 observations accepted on a 2-d system")
	}
}

func BenchmarkReinforceIteration(b *testing.B) {
	init, err := pendulum.NewPolicy(rand.New(rand.NewPCG(1, 0)), 32, 0.5)
	if err != nil {
		b.Fatal(err)
	}
	r := Reinforce{Iterations: 1} // 16 episodes x 200 steps
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		if _, err := r.Run(rng, pendulum.Pendulum{}, init, nil); err != nil {
			b.Fatal(err)
		}
	}
}
