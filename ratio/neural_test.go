package ratio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/gradcheck"
	"github.com/ihope-ope/ihope/nn"
	"gonum.org/v1/gonum/stat"
)

// arChain describes a linear-Gaussian system with Gaussian policies whose
// stationary (and discounted) state distributions are Gaussian, so that
// the true density ratio is known in closed form:
//
//	s_{t+1} = a s_t + u_t + sigma eps_t,   u_t ~ N(mu, tau^2 I),
//
// per coordinate, with action mean mu = 0 under the behavior policy and
// mu = (shift, 0, ...) under the target policy. Started from the
// behavior's stationary law N(0, v), v = (tau^2 + sigma^2)/(1 - a^2), the
// state at time t under the target is N(mu_t, v) with
// mu_t = shift (1 - a^t)/(1 - a) in coordinate 0, so
//
//	w(s) = sum_t omega_t N(s_0; mu_t, v) / N(s_0; 0, v),
//
// omega_t proportional to gamma^t for t < T (for gamma = 1 and large T,
// the stationary ratio with mu_inf = shift/(1 - a)). The reward is the
// first coordinate of the state.
type arChain struct {
	dim                  int
	a, tau, sigma, shift float64
}

func (c arChain) v() float64 { return (c.tau*c.tau + c.sigma*c.sigma) / (1 - c.a*c.a) }

// logNormal returns log N(x; mu, s2).
func logNormal(x, mu, s2 float64) float64 {
	return -0.5*math.Log(2*math.Pi*s2) - (x-mu)*(x-mu)/(2*s2)
}

// sample draws n episodes of T steps under the behavior policy.
func (c arChain) sample(rng *rand.Rand, n, T int) *dataset.Dataset {
	d := &dataset.Dataset{StateDim: c.dim, NumStates: 0, NumActions: 0}
	sd := math.Sqrt(c.v())
	for e := range n {
		s := make([]float64, c.dim)
		for k := range s {
			s[k] = sd * rng.NormFloat64()
		}
		steps := make([]dataset.Step, T)
		for t := range steps {
			u := make([]float64, c.dim)
			next := make([]float64, c.dim)
			lb, lt := 0.0, 0.0
			for k := range u {
				u[k] = c.tau * rng.NormFloat64()
				next[k] = c.a*s[k] + u[k] + c.sigma*rng.NormFloat64()
				lb += logNormal(u[k], 0, c.tau*c.tau)
				mu := 0.0
				if k == 0 {
					mu = c.shift
				}
				lt += logNormal(u[k], mu, c.tau*c.tau)
			}
			steps[t] = dataset.Step{
				State: -1, Obs: s, Action: -1, ActionVec: u, Reward: s[0],
				HasNext: true, NextState: -1, NextObs: next,
				LogBehavior: lb, LogTarget: lt,
			}
			s = next
		}
		d.Episodes = append(d.Episodes, dataset.Episode{ID: string(rune('a' + e%26)), Steps: steps})
	}
	return d
}

// trueRatio returns w(s) and the true value of the normalised T-step
// reward under the target policy.
func (c arChain) trueRatio(gamma float64, T int) (w func(s []float64) float64, value float64) {
	v := c.v()
	if gamma == 1 {
		mu := c.shift / (1 - c.a)
		return func(s []float64) float64 {
			return math.Exp(logNormal(s[0], mu, v) - logNormal(s[0], 0, v))
		}, mu
	}
	var omega, mus []float64
	g, tot := 1.0, 0.0
	for t := range T {
		omega = append(omega, g)
		mus = append(mus, c.shift*(1-math.Pow(c.a, float64(t)))/(1-c.a))
		value += g * mus[t]
		tot += g
		g *= gamma
	}
	for t := range omega {
		omega[t] /= tot
	}
	return func(s []float64) float64 {
		r := 0.0
		for t, o := range omega {
			r += o * math.Exp(logNormal(s[0], mus[t], v)-logNormal(s[0], 0, v))
		}
		return r
	}, value / tot
}

// weightedEstimate returns sum v r / sum v with v = gamma^t w(s_t) beta_t,
// and the naive gamma^t-weighted average of the logged rewards.
func weightedEstimate(d *dataset.Dataset, gamma float64, w []float64) (est, naive float64) {
	var num, den, nnum, nden float64
	k := 0
	for e := range d.Episodes {
		g := 1.0
		for t := range d.Episodes[e].Steps {
			st := &d.Episodes[e].Steps[t]
			v := g * w[k] * st.Ratio()
			num += v * st.Reward
			den += v
			nnum += g * st.Reward
			nden += g
			g *= gamma
			k++
		}
	}
	return num / den, nnum / nden
}

func TestNeuralGaussianChain(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two networks")
	}
	c := arChain{dim: 2, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	for k, tc := range []struct {
		gamma float64
		n, T  int
		u     bool
	}{
		{1, 20, 500, false},
		{0.95, 200, 100, false},
		{1, 20, 500, true},
	} {
		rng := rand.New(rand.NewPCG(uint64(100+k%2), 0))
		d := c.sample(rng, tc.n, tc.T)
		var evals int
		l := Neural{MaxIter: 1500, UStatistic: tc.u, Progress: func(iter int, loss, held float64) {
			evals++
			if testing.Verbose() && iter%500 == 0 {
				t.Logf("gamma %v iter %d loss %.3g held-out %.3g", tc.gamma, iter, loss, held)
			}
		}}
		m, err := l.Fit(rng, d, tc.gamma)
		if err != nil {
			t.Fatal(err)
		}
		w, err := m.StepRatios(d)
		if err != nil {
			t.Fatal(err)
		}
		wTrue, truth := c.trueRatio(tc.gamma, tc.T)
		var tw []float64
		for e := range d.Episodes {
			for s := range d.Episodes[e].Steps {
				tw = append(tw, wTrue(d.Episodes[e].Steps[s].Obs))
			}
		}
		r := stat.Correlation(w, tw, nil)
		est, naive := weightedEstimate(d, tc.gamma, w)
		oracle, _ := weightedEstimate(d, tc.gamma, tw)
		t.Logf("gamma %v U %v: %d iterations (best %d), h = %.3g, Pearson %.3f, estimate %.3f, true-ratio estimate %.3f, naive %.3f, truth %.3f",
			tc.gamma, tc.u, m.Iterations, m.BestIter, m.Bandwidth, r, est, oracle, naive, truth)
		if r < 0.9 {
			t.Errorf("gamma %v: Pearson correlation of learned and true ratio %.3f, want > 0.9", tc.gamma, r)
		}
		if math.Abs(est-truth) > 0.25*math.Abs(naive-truth) {
			t.Errorf("gamma %v: estimate %.3f, naive %.3f, truth %.3f: want the error below a quarter of the naive one",
				tc.gamma, est, naive, truth)
		}
		if evals == 0 {
			t.Errorf("Progress never called")
		}
	}
}

// neuralEpisode builds a one-dimensional episode through the states s,
// whose step t has ratio beta[t] and reward s[t].
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
	d := &dataset.Dataset{StateDim: 1, Episodes: []dataset.Episode{
		neuralEpisode("a", []float64{1, 2, 3, 4}, []float64{2, 1, 0.5}),
	}}
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
		tr, held := splitTransitions(rand.New(rand.NewPCG(1, 0)), d, tc.gamma, -1, mean, scale)
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
	one := &dataset.Dataset{StateDim: 1, Episodes: []dataset.Episode{neuralEpisode("long", long, beta)}}
	train, held := splitTransitions(rand.New(rand.NewPCG(1, 0)), one, 1, 0.1, []float64{0}, []float64{1})
	// One episode: its last 10% (2 of 20 steps) is held out.
	if train.len() != 18 || held.len() != 2 || held.s[0] != 18 || held.s[1] != 19 {
		t.Errorf("tail split: %d training, held-out states %v, want 18 and [18 19]", train.len(), held.s)
	}

	many := &dataset.Dataset{StateDim: 1}
	for e := range 30 {
		many.Episodes = append(many.Episodes, neuralEpisode(string(rune('A'+e)), []float64{float64(e), 0, 1}, []float64{1, 1}))
	}
	train, held = splitTransitions(rand.New(rand.NewPCG(1, 0)), many, 0.9, 0.1, []float64{0}, []float64{1})
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

// testTrainer returns a trainer for net with the batch of tr at idx.
func testTrainer(t *testing.T, net *nn.MLP, tr *transitions, idx []int, h float64, workers int) *neuralTrainer {
	t.Helper()
	nt := newNeuralTrainer(net, len(idx), h, workers)
	t.Cleanup(nt.close)
	nt.fill(tr, idx)
	return nt
}

// TestNeuralLossExact checks the loss against a hand computation. With an
// exp output and zero weights, w = e^b everywhere, so z = e^b and
// Delta_i = beta_i - 1 (0 for a dummy). Next states 0, 1, 3 with h = 1
// give K_01 = e^{-1/2}, K_02 = e^{-9/2}, K_12 = e^{-2}; beta = 2, 0.5, 1
// gives Delta = 1, -0.5, 0, so
//
//	V = (1 + 0.25 - e^{-1/2}) / 9,   U = -e^{-1/2} / 6.
func TestNeuralLossExact(t *testing.T) {
	tr := &transitions{d: 1}
	for i, v := range []float64{0, 1, 3} {
		tr.add([]float64{float64(i)}, []float64{v}, []float64{2, 0.5, 1}[i], 1, false)
	}
	tr.add([]float64{7}, []float64{7}, 0, 1, true) // a dummy, far away
	V := (1.25 - math.Exp(-0.5)) / 9
	U := -math.Exp(-0.5) / 6
	for k, tc := range []struct {
		idx     []int
		b       float64
		workers int
		diag    bool
		want    float64
	}{
		{[]int{0, 1, 2}, 0, 1, true, V},
		{[]int{0, 1, 2}, math.Log(5), 2, true, V}, // scale free: w = 5
		{[]int{0, 1, 2}, 0, 2, false, U},
		// With the dummy (Delta = 1 - w/z = 0, far from the others) the sums
		// are unchanged and only the normalisation grows: 1/16 and 1/12.
		{[]int{0, 1, 2, 3}, 0, 2, true, V * 9 / 16},
		{[]int{3, 0, 1, 2}, 0, 1, false, U * 6 / 12},
	} {
		net, _ := nn.New([]int{1, 4, 1}, nn.Tanh, nn.Exp)
		_, b := net.Layer(2)
		b[0] = tc.b
		nt := testTrainer(t, net, tr, tc.idx, 1, tc.workers)
		got, err := nt.loss(false, tc.diag)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("case %d: loss %.17g, want %.17g", k, got, tc.want)
		}
	}
}

// TestNeuralLossGradient checks the gradient of the kernel loss with
// respect to every network parameter, through the normalisation z and
// both w(s_i) and w(s'_i), against central finite differences, with and
// without dummies, diagonal and assembly-sized layers.
func TestNeuralLossGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 0))
	c := arChain{dim: 2, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	d := c.sample(rng, 5, 8)
	mean, scale := stateScaling(d)
	for k, tc := range []struct {
		sizes []int
		out   nn.Activation
		gamma float64
		m     int
		diag  bool
	}{
		{[]int{2, 16, 8, 1}, nn.Softplus, 0.7, 24, true},
		{[]int{2, 16, 8, 1}, nn.Softplus, 0.7, 24, false},
		{[]int{2, 5, 3, 1}, nn.Exp, 1, 13, true},
		{[]int{2, 64, 64, 1}, nn.Softplus, 0.9, 40, true},
	} {
		train, _ := splitTransitions(rng, d, tc.gamma, -1, mean, scale)
		net, _ := nn.New(tc.sizes, nn.Tanh, tc.out)
		net.Init(rng, 1)
		idx := make([]int, tc.m)
		train.draw(rng, idx)
		if tc.gamma < 1 {
			idx[0] = 0 // make sure a dummy is in
		}
		nt := testTrainer(t, net, train, idx, 0.8, 2)
		if _, err := nt.loss(true, tc.diag); err != nil {
			t.Fatal(err)
		}
		g := append([]float64(nil), nt.grad...)
		fd := gradcheck.FiniteDifferences(net.Params(), func() float64 {
			v, err := nt.loss(false, tc.diag)
			if err != nil {
				t.Fatal(err)
			}
			return v
		})
		vec, elem := gradcheck.Compare(g, fd)
		t.Logf("case %d %v gamma %v: relative error %.2g, element-wise %.2g", k, tc.sizes, tc.gamma, vec, elem)
		if vec > 1e-5 || elem > 1e-5 {
			t.Errorf("case %d %v gamma %v: gradient relative error %.3g (element-wise %.3g), want < 1e-5",
				k, tc.sizes, tc.gamma, vec, elem)
		}
	}
}

func TestNeuralDeterministic(t *testing.T) {
	c := arChain{dim: 2, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	d := c.sample(rand.New(rand.NewPCG(4, 0)), 30, 40)
	fit := func(workers int) *NeuralModel {
		l := Neural{Hidden: []int{16, 16}, BatchSize: 64, MaxIter: 60, EvalEvery: 20, Workers: workers}
		m, err := l.Fit(rand.New(rand.NewPCG(9, 0)), d, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, one := fit(2), fit(2), fit(1)
	for _, other := range []*NeuralModel{b, one} {
		for i, p := range a.Net.Params() {
			if q := other.Net.Params()[i]; math.Float64bits(p) != math.Float64bits(q) {
				t.Fatalf("parameter %d: %v and %v from the same seed", i, p, q)
			}
		}
		if a.Norm != other.Norm || a.Bandwidth != other.Bandwidth || a.HeldOutLoss != other.HeldOutLoss {
			t.Errorf("norm %v/%v, bandwidth %v/%v, held-out loss %v/%v", a.Norm, other.Norm,
				a.Bandwidth, other.Bandwidth, a.HeldOutLoss, other.HeldOutLoss)
		}
	}
	obs := d.Episodes[0].Steps[3].Obs
	if a.Ratio(obs) != b.Ratio(obs) {
		t.Errorf("Ratio %v and %v", a.Ratio(obs), b.Ratio(obs))
	}
	other := fit0(t, d, 10)
	if other.Net.Params()[0] == a.Net.Params()[0] {
		t.Errorf("another seed gave the same first parameter")
	}
}

func fit0(t *testing.T, d *dataset.Dataset, seed uint64) *NeuralModel {
	t.Helper()
	l := Neural{Hidden: []int{16, 16}, BatchSize: 64, MaxIter: 60, EvalEvery: 20}
	m, err := l.Fit(rand.New(rand.NewPCG(seed, 0)), d, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestNeuralModelRatio checks the normalisation (the gamma^t-weighted mean
// of the ratio over the logged states is 1) and that Ratio, RatioBatch and
// StepRatios agree.
func TestNeuralModelRatio(t *testing.T) {
	c := arChain{dim: 2, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	d := c.sample(rand.New(rand.NewPCG(5, 0)), 30, 40)
	m := fit0(t, d, 11) // gamma = 0.95
	w, err := m.StepRatios(d)
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	k := 0
	for e := range d.Episodes {
		g := 1.0
		for s := range d.Episodes[e].Steps {
			if r := m.Ratio(d.Episodes[e].Steps[s].Obs); math.Abs(r-w[k]) > 1e-15*r {
				t.Fatalf("episode %d step %d: Ratio %v, StepRatios %v", e, s, r, w[k])
			}
			num += g * w[k]
			den += g
			g *= 0.95
			k++
		}
	}
	if mean := num / den; math.Abs(mean-1) > 1e-12 {
		t.Errorf("weighted mean ratio %v, want 1", mean)
	}
	if !math.IsNaN(m.Ratio([]float64{1})) {
		t.Errorf("Ratio of a 1-d state for a 2-d model is not NaN")
	}
	if _, err := m.RatioBatch([][]float64{{1, 2}, {3}}); err == nil {
		t.Errorf("RatioBatch accepted a 1-d state")
	}
}

func TestNeuralErrors(t *testing.T) {
	c := arChain{dim: 1, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	good := func() *dataset.Dataset { return c.sample(rand.New(rand.NewPCG(6, 0)), 3, 5) }
	rng := rand.New(rand.NewPCG(1, 0))
	for k, tc := range []struct {
		l      Neural
		gamma  float64
		modify func(d *dataset.Dataset)
	}{
		{Neural{}, 0, nil},
		{Neural{}, 1.5, nil},
		{Neural{}, 1, func(d *dataset.Dataset) { d.StateDim = 0 }},
		{Neural{}, 1, func(d *dataset.Dataset) { d.Episodes[1].Steps[2].Obs = []float64{1, 2} }},
		{Neural{}, 1, func(d *dataset.Dataset) { d.Episodes[1].Steps[2].NextObs[0] = math.NaN() }},
		{Neural{}, 1, func(d *dataset.Dataset) { d.Episodes[0].Steps[0].LogBehavior = math.Inf(-1) }},
		{Neural{}, 1, func(d *dataset.Dataset) { d.Episodes = d.Episodes[:1]; d.Episodes[0].Steps = d.Episodes[0].Steps[:1] }},
		{Neural{Output: nn.Tanh}, 1, nil},
		{Neural{BatchSize: -1}, 1, nil},
		{Neural{HeldOut: 1}, 1, nil},
		{Neural{LearningRate: math.NaN()}, 1, nil},
		{Neural{Hidden: []int{8, 0}}, 1, nil},
	} {
		d := good()
		if tc.modify != nil {
			tc.modify(d)
		}
		if _, err := tc.l.Fit(rng, d, tc.gamma); err == nil {
			t.Errorf("case %d: no error", k)
		} else {
			t.Logf("case %d: %v", k, err)
		}
	}
}

// ExampleNeural learns the stationary density ratio of a linear-Gaussian
// chain whose target policy pushes the state up (true average reward 0.8,
// the behavior's 0) and weighs the logged steps by it.
func ExampleNeural() {
	c := arChain{dim: 1, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	rng := rand.New(rand.NewPCG(1, 0))
	d := c.sample(rng, 20, 250) // 5000 logged steps

	l := Neural{BatchSize: 256, MaxIter: 400}
	m, err := l.Fit(rng, d, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := m.StepRatios(d)
	if err != nil {
		fmt.Println(err)
		return
	}
	est, naive := weightedEstimate(d, 1, w)
	fmt.Printf("w(-1) < w(0) < w(1): %v\n", m.Ratio([]float64{-1}) < m.Ratio([]float64{0}) && m.Ratio([]float64{0}) < m.Ratio([]float64{1}))
	fmt.Printf("naive average within 0.05 of 0: %v\n", math.Abs(naive) < 0.05)
	fmt.Printf("density-ratio estimate %.1f (truth 0.8)\n", est)
	// Output:
	// w(-1) < w(0) < w(1): true
	// naive average within 0.05 of 0: true
	// density-ratio estimate 0.6 (truth 0.8)
}
