package value

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// qAt returns the model's q(s, a) at a state and a real action.
func (m *NeuralModel) qAt(obs, act []float64) float64 {
	x := make([]float64, m.inputs())
	m.state.apply(x, obs)
	m.action.apply(x[m.stateDim():], act)
	return m.Shift + m.Scale*m.Net.Predict(x)[0]
}

// neuralStartValue returns E_{s~d0, u~pi(s)}[q(s, u)] of a neural model
// of the 1-d linear-Gaussian problem by 20-point Gauss-Hermite quadrature
// in s and u.
func neuralStartValue(m *NeuralModel, p *lineargauss.Problem) float64 {
	init := p.System.Init()
	mu0, sd0 := init.Mean()[0], math.Sqrt(init.Cov().At(0, 0))
	sdu := math.Sqrt(p.Target.Cov().At(0, 0))
	x, w := hermite(20)
	v := 0.0
	for i := range x {
		s := []float64{mu0 + sd0*x[i]}
		mu := p.Target.MeanAction(s)[0]
		for k := range x {
			v += w[i] * w[k] * m.qAt(s, []float64{mu + sdu*x[k]})
		}
	}
	return v
}

// TestNeuralLinearGauss trains neural FQE with the default settings on
// 100 episodes of 100 steps of the 1-d linear-Gaussian problem
// (gamma = 0.9) and compares (1 - gamma) E_{d0}[v(s0)] with the closed
// form. The tolerance, 0.03, is 4 times the root mean square error
// measured over six seeds of data and training (errors -0.0094, -0.0034,
// +0.0022, -0.0114, -0.0035, +0.0087: 0.0072), which is sampling error
// (LSTD-Q with exact features had 0.0040 on the same data) plus the
// training's own noise; it is under a tenth of the gap between the
// target's and the behavior's values (-0.300 and -0.645), the error of
// ignoring the change of policy. That is the IHOPE_STAT=1 check; the
// everyday run trains a smaller network (two layers of 16, minibatches
// of 64) on the same data, whose error must stay under the same 0.03.
func TestNeuralLinearGauss(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network for about 13 s")
	}
	p := lineargauss.Problem1D()
	const gamma = 0.9
	truth, err := p.System.Value(p.Target, gamma, 2000)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 100))
	d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 100, 100)
	if err != nil {
		t.Fatal(err)
	}
	pi := Target{Continuous: p.Target, Seed: 1}
	l := Neural{Seed: 1}
	if !testsets.Stat() {
		l.Hidden, l.BatchSize = []int{16, 16}, 64
	}
	m, err := l.FitNeural(d, gamma, pi)
	if err != nil {
		t.Fatal(err)
	}
	got := (1 - gamma) * neuralStartValue(m, p)
	t.Logf("value %.5f, truth %.5f, error %+.5f (%d iterations, kept %d, held-out Bellman error %.4g)",
		got, truth, got-truth, m.Iterations, m.BestIter, m.HeldOutError)
	if math.Abs(got-truth) > 0.03 {
		t.Errorf("value %.5f, truth %.5f: error beyond 0.03", got, truth)
	}
}

// TestNeuralDeterministic checks that a seed fixes the model bit for
// bit, whatever Workers is, and that Values keeps the contract
// (next[j] = v[j+1] within episodes, NaN without a final state).
func TestNeuralDeterministic(t *testing.T) {
	p := lineargauss.Problem1D()
	rng := rand.New(rand.NewPCG(2, 2))
	d, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 20, 30)
	if err != nil {
		t.Fatal(err)
	}
	d.HasFinal[3] = false
	pi := Target{Continuous: p.Target, Seed: 4, Samples: 6}
	fit := func(workers int) (q, v, next []float64) {
		l := Neural{Seed: 7, MaxIter: 300, EvalEvery: 100, TargetEvery: 50, BatchSize: 64, Workers: workers}
		m, err := l.Fit(d, 0.9, pi)
		if err != nil {
			t.Fatal(err)
		}
		q, v, next, err = m.Values(d)
		if err != nil {
			t.Fatal(err)
		}
		return q, v, next
	}
	q1, v1, n1 := fit(1)
	for _, w := range []int{1, 2} {
		q2, v2, n2 := fit(w)
		for j := range q1 {
			if math.Float64bits(q1[j]) != math.Float64bits(q2[j]) || math.Float64bits(v1[j]) != math.Float64bits(v2[j]) ||
				math.Float64bits(n1[j]) != math.Float64bits(n2[j]) {
				t.Fatalf("workers %d step %d: (%v, %v, %v), first fit (%v, %v, %v)", w, j, q2[j], v2[j], n2[j], q1[j], v1[j], n1[j])
			}
		}
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi-1; j++ {
			if n1[j] != v1[j+1] {
				t.Fatalf("episode %d step %d: next %v, v of the next step %v", e, j-lo, n1[j], v1[j+1])
			}
		}
		if last := n1[hi-1]; (e == 3) != math.IsNaN(last) {
			t.Errorf("episode %d: next after the last step %v", e, last)
		}
	}
}

// TestNeuralDiscrete trains the one-output-per-action network on
// noiseless logs whose q is a quadratic in a 2-d state per action
// (TestLinearExactDiscrete's construction, 3 actions, gamma = 0.9) and
// checks that the fitted q at the logged steps is close to the truth:
// a root mean square error below a tenth of q's standard deviation.
func TestNeuralDiscrete(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network")
	}
	const gamma = 0.9
	rng := rand.New(rand.NewPCG(1, 2))
	d := discreteLog(rng, 2, 3, 200, 30)
	f, err := newLinFeatures(d, featureSpec{kind: "poly", degree: 2})
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, f.p)
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	sc := f.newScratch(realTarget{numActions: 3})
	want := make([]float64, d.NumSteps())
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			blk := f.stateAction(sc.x, sc, d, j)
			want[j] = dot(sc.x, theta[blk*f.P:(blk+1)*f.P])
			obs, _ := d.NextObs(e, j)
			probs, _ := d.NextTargetProbs(e, j)
			f.expected(sc, obs, probs)
			d.Reward[j] = want[j] - gamma*dot(sc.psi, theta)
		}
	}
	m, err := Neural{Seed: 3, MaxIter: 5000}.Fit(d, gamma, Target{})
	if err != nil {
		t.Fatal(err)
	}
	q, _, _, err := m.Values(d)
	if err != nil {
		t.Fatal(err)
	}
	mse := 0.0
	for j := range q {
		mse += (q[j] - want[j]) * (q[j] - want[j])
	}
	rmse := math.Sqrt(mse / float64(len(q)))
	_, sd := meanSD(want)
	t.Logf("rmse %.4f, sd of q %.4f", rmse, sd)
	if rmse > sd/10 {
		t.Errorf("rmse %.4f of q, sd of q %.4f", rmse, sd)
	}
}

func TestNeuralErrors(t *testing.T) {
	p := lineargauss.Problem1D()
	rng := rand.New(rand.NewPCG(1, 1))
	cont, err := rollout.SampleContinuous(rng, p.System, p.Behavior, p.Target, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	disc := discreteLog(rng, 2, 3, 3, 5)
	noProbs := disc.Clone()
	noProbs.TargetProbs = nil
	var tab dataset.Builder
	tab.Init(2, 2, 0, 0)
	tab.Add(dataset.Step{State: 0, Action: 1, HasNext: true, NextState: 1})
	tab.EndEpisode("0")
	tabular, err := tab.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		l     Neural
		d     *dataset.Dataset
		gamma float64
		pi    Target
		want  string
	}{
		{"gamma 1", Neural{}, cont, 1, Target{Continuous: p.Target}, "use the linear or the tabular learner"},
		{"gamma 0", Neural{}, cont, 0, Target{Continuous: p.Target}, "discount"},
		{"no continuous target", Neural{}, cont, 0.9, Target{}, "Target.Continuous"},
		{"no target probs", Neural{}, noProbs, 0.9, Target{}, "target_prob_k"},
		{"tabular policy", Neural{}, disc, 0.9, Target{Policy: uniformPolicy{3}}, "Target.Policy"},
		{"discrete states", Neural{}, tabular, 0.9, Target{}, "tabular learner"},
		{"train samples", Neural{TrainSamples: 5}, cont, 0.9, Target{Continuous: p.Target, Samples: 4}, "training samples"},
		{"hidden", Neural{Hidden: []int{0}}, cont, 0.9, Target{Continuous: p.Target}, "hidden"},
		{"held out", Neural{HeldOut: 1}, cont, 0.9, Target{Continuous: p.Target}, "held-out"},
		{"learning rate", Neural{LearningRate: math.Inf(1)}, cont, 0.9, Target{Continuous: p.Target}, "learning rate"},
		{"batch", Neural{BatchSize: -1}, cont, 0.9, Target{Continuous: p.Target}, "batch size"},
	} {
		_, err := c.l.Fit(c.d, c.gamma, c.pi)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}
