package ratio

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/nn"
)

// Neural learns the density ratio w(s) = d_pi(s)/d_pi0(s) of real-valued
// states ("bch-neural"): w is a feed-forward network with a positive
// output, trained by Adam on minibatch estimates of the kernel loss of
// Theorem 2 with a Gaussian RBF kernel (Section 5, Algorithms 1 and 2).
//
// The network. The inputs are the states scaled per dimension,
// x = (s - mean)/sd over the logged states s_t (a dimension with sd = 0 is
// only centred). The default network has two hidden layers of 64 tanh
// units and a softplus output, as in the authors' code; tanh keeps w
// smooth, so its gradient can be checked by finite differences everywhere.
// Hidden layers use LeCun's initialisation; the output layer starts at a
// tenth of that scale, so that w starts close to a constant (the ratio of
// two equal policies).
//
// The loss. A minibatch M holds m transitions i = (s_i, a_i, s'_i) with
// beta_i = exp(LogTarget - LogBehavior). With z = mean of w(s_i) over the
// transitions of M that are not dummies,
//
//	Delta_i = w(s_i)/z beta_i - w(s'_i)/z,
//	D = (1/m^2) sum_{i,j in M} Delta_i Delta_j K_ij,
//	K_ij = exp(-||x'_i - x'_j||^2 / (2 h^2)),
//
// x' being the scaled next states and h, unless set, the median of the
// pairwise distances between up to BandwidthSample scaled next states of
// the training data (computed once). D is a V-statistic: the diagonal
// i = j is included.
//
// Sampling. For gamma = 1 the transitions are drawn uniformly with
// replacement (Algorithm 1). For 0 < gamma < 1 every episode gets a dummy
// transition at t = -1 into its first state s_0, with Delta = 1 - w(s_0)/z,
// and step t is drawn with probability proportional to gamma^(t+1), the
// dummy with probability proportional to gamma^0 = 1 (Algorithm 2,
// Appendix "Algorithm Details": the augmented distribution weighs step
// t >= -1 by (1-gamma) gamma^(t+1); the dummies then make up the share
// 1 - gamma of the draws, as the paper says, when episodes are long). The
// dummies' s_i enter neither z nor any gradient. This is the weighting of
// Aggregate for the tabular learner.
//
// Training. A fraction HeldOut of the data is kept aside: whole episodes
// chosen at random when there are at least 1/HeldOut of them, otherwise
// the last HeldOut fraction of the steps of every episode. Every EvalEvery
// iterations the held-out loss is evaluated: the U-statistic (i != j, so
// that it is unbiased for the population loss whatever the spread of w)
// over all held-out transitions, each weighted by its sampling weight, or
// over a fixed weighted sample of 2048 of them if there are more. Training
// stops when that loss has not improved for Patience evaluations, or after
// MaxIter iterations, and the parameters with the lowest held-out loss are
// kept.
//
// Determinism. The same rng state, data and settings give bit-identical
// models on a given machine, whatever Workers is: the work is cut into the
// same pieces and summed in the same order whether one or two goroutines
// do it. The matrix kernels of package nn give the same bits with or
// without their assembly.
//
// The zero value is ready to use. Settings that are 0 take the defaults
// documented on each field.
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Theorems 1-3, Section 5, Algorithms 1-2
//	and Appendix "Algorithm Details"; Kingma and Ba (2015) for Adam.
type Neural struct {
	// Hidden lists the hidden layer widths. If nil, {64, 64} is used.
	Hidden []int

	// Activation is the hidden activation. If 0, nn.Tanh is used.
	Activation nn.Activation

	// Output is the output activation, nn.Softplus or nn.Exp (w must be
	// positive). If 0, nn.Softplus is used.
	Output nn.Activation

	// BatchSize is m, the transitions per minibatch. If 0, 512 is used.
	BatchSize int

	// LearningRate is Adam's step size. If 0, 1e-3 is used.
	LearningRate float64

	// MaxIter caps the training iterations. If 0, 3000 is used.
	MaxIter int

	// EvalEvery is the number of iterations between evaluations of the
	// held-out loss (and calls of Progress). If 0, 50 is used.
	EvalEvery int

	// Patience is the number of evaluations without improvement of the
	// held-out loss after which training stops. If 0, 20 is used.
	Patience int

	// HeldOut is the fraction of the data kept aside to monitor the loss.
	// If 0, 0.1 is used; if negative, nothing is held out, training runs
	// MaxIter iterations and keeps the last parameters.
	HeldOut float64

	// Bandwidth is the kernel bandwidth h in scaled units. If 0, the
	// median heuristic is used.
	Bandwidth float64

	// BandwidthSample is the number of next states whose pairwise
	// distances give the median heuristic. If 0, 1000 is used.
	BandwidthSample int

	// UStatistic, if set, leaves the diagonal i = j out of the training
	// loss, which becomes the U-statistic 1/(m(m-1)) sum_{i != j}, an
	// unbiased estimate of the population loss (the authors' code gets the
	// same effect by pairing two independent minibatches). By default the
	// V-statistic of Algorithm 1, (1/m^2) sum_{i,j}, is used: its diagonal
	// adds about E[Delta^2]/m, a penalty on the spread of w beta that
	// flattens w (on the linear-Gaussian test the U-statistic lands closer,
	// 0.67-0.75 against 0.63-0.68 for a truth of 0.8), but the U-statistic
	// is unbounded below on a finite sample and was unstable on Pendulum,
	// whose policy ratios are heavy-tailed (errors up to -5.6 where the
	// V-statistic stays within 0.5). The held-out loss is always the
	// U-statistic.
	UStatistic bool

	// Workers is the number of goroutines a training step uses, 1 or 2.
	// If 0, 2 is used when GOMAXPROCS allows it. It does not change the
	// result.
	Workers int

	// Progress, if not nil, is called after every evaluation with the
	// iteration, the mean training minibatch loss since the previous call
	// and the held-out loss (NaN when nothing is held out). The library
	// never prints.
	Progress func(iter int, loss, heldOut float64)
}

// NeuralModel is a learned density ratio of real-valued states.
type NeuralModel struct {
	// Net maps scaled states to unnormalised ratios.
	Net *nn.MLP

	// Mean and Scale scale a state s into the network input
	// x = (s - Mean)/Scale, per dimension.
	Mean, Scale []float64

	// Norm divides the network output: Ratio(s) = Net(x)/Norm, where Norm
	// makes the gamma^t-weighted mean of the ratio over the logged states
	// s_t equal to 1 (the normalisation E_{d_pi0}[w] = 1 of the paper).
	Norm float64

	// Bandwidth is the kernel bandwidth h in scaled units.
	Bandwidth float64

	// Iterations is the number of training iterations run and BestIter
	// the iteration whose parameters were kept.
	Iterations, BestIter int

	// TrainLoss is the mean minibatch loss over the last evaluation
	// period, HeldOutLoss the held-out loss at BestIter (NaN without
	// held-out data).
	TrainLoss, HeldOutLoss float64

	pool *sync.Pool // of *neuralRow
}

// Dim returns the state dimension the model expects.
func (m *NeuralModel) Dim() int { return len(m.Mean) }

// Ratio returns the learned w(s) for one state. It returns NaN if obs does
// not have the model's dimension. It is safe for concurrent use.
func (m *NeuralModel) Ratio(obs []float64) float64 {
	d := len(m.Mean)
	if len(obs) != d {
		return math.NaN()
	}
	var ws *neuralRow
	if m.pool != nil {
		ws = m.pool.Get().(*neuralRow)
		defer m.pool.Put(ws)
	} else { // a model built by hand
		ws = &neuralRow{ws: m.Net.NewWorkspace(1), x: make([]float64, d)}
	}
	for k, v := range obs {
		ws.x[k] = (v - m.Mean[k]) / m.Scale[k]
	}
	return m.Net.Forward(ws.ws, ws.x, 1)[0] / m.Norm
}

// neuralRow is the scratch space of one Ratio call.
type neuralRow struct {
	ws *nn.Workspace
	x  []float64
}

// RatioBatch returns w(s) for every state of obs. It returns an error if
// a state does not have the model's dimension.
func (m *NeuralModel) RatioBatch(obs [][]float64) ([]float64, error) {
	d := len(m.Mean)
	out := make([]float64, len(obs))
	const chunk = 1024
	ws := m.Net.NewWorkspace(min(chunk, len(obs)))
	x := make([]float64, min(chunk, len(obs))*d)
	for lo := 0; lo < len(obs); lo += chunk {
		hi := min(lo+chunk, len(obs))
		for i := lo; i < hi; i++ {
			if len(obs[i]) != d {
				return nil, fmt.Errorf("ratio: state %d has dimension %d, the model %d", i, len(obs[i]), d)
			}
			row := x[(i-lo)*d : (i-lo+1)*d]
			for k, v := range obs[i] {
				row[k] = (v - m.Mean[k]) / m.Scale[k]
			}
		}
		y := m.Net.Forward(ws, x, hi-lo)
		for i := lo; i < hi; i++ {
			out[i] = y[i-lo] / m.Norm
		}
	}
	return out, nil
}

// StepRatios returns w(s_t) for every step of d, episode after episode in
// step order (the order of the estimator's weights).
func (m *NeuralModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	obs := make([][]float64, 0, d.NumSteps())
	for e := range d.Episodes {
		for t := range d.Episodes[e].Steps {
			obs = append(obs, d.Episodes[e].Steps[t].Obs)
		}
	}
	w, err := m.RatioBatch(obs)
	if err != nil {
		return nil, fmt.Errorf("ratio: %w", err)
	}
	return w, nil
}

func newNeuralModel(net *nn.MLP, mean, scale []float64) *NeuralModel {
	m := &NeuralModel{Net: net, Mean: mean, Scale: scale, Norm: 1}
	d := len(mean)
	m.pool = &sync.Pool{New: func() any {
		return &neuralRow{ws: net.NewWorkspace(1), x: make([]float64, d)}
	}}
	return m
}

// neuralSettings are the settings of a Neural with defaults filled in.
type neuralSettings struct {
	hidden          []int
	act, out        nn.Activation
	m, maxIter      int
	lr              float64
	evalEvery, pat  int
	heldOut         float64
	bandwidth       float64
	bandwidthSample int
	workers         int
}

func (l Neural) settings() (neuralSettings, error) {
	s := neuralSettings{
		hidden: l.Hidden, act: l.Activation, out: l.Output,
		m: l.BatchSize, maxIter: l.MaxIter, lr: l.LearningRate,
		evalEvery: l.EvalEvery, pat: l.Patience, heldOut: l.HeldOut,
		bandwidth: l.Bandwidth, bandwidthSample: l.BandwidthSample, workers: l.Workers,
	}
	if s.hidden == nil {
		s.hidden = []int{64, 64}
	}
	for _, h := range s.hidden {
		if h <= 0 {
			return s, fmt.Errorf("ratio: hidden widths %v, want positive", s.hidden)
		}
	}
	if s.act == 0 {
		s.act = nn.Tanh
	}
	if s.out == 0 {
		s.out = nn.Softplus
	}
	if s.out != nn.Softplus && s.out != nn.Exp {
		return s, fmt.Errorf("ratio: output activation %v, want softplus or exp (w > 0)", s.out)
	}
	def := func(v *int, d int, name string) error {
		if *v < 0 {
			return fmt.Errorf("ratio: %s %d, want >= 0", name, *v)
		}
		if *v == 0 {
			*v = d
		}
		return nil
	}
	for _, f := range []error{
		def(&s.m, 512, "batch size"), def(&s.maxIter, 3000, "iteration cap"),
		def(&s.evalEvery, 50, "evaluation period"), def(&s.pat, 20, "patience"),
		def(&s.bandwidthSample, 1000, "bandwidth sample"), def(&s.workers, min(2, runtime.GOMAXPROCS(0)), "workers"),
	} {
		if f != nil {
			return s, f
		}
	}
	s.workers = min(s.workers, 2)
	if s.bandwidthSample < 2 {
		return s, fmt.Errorf("ratio: bandwidth sample %d, want >= 2", s.bandwidthSample)
	}
	if !(s.lr >= 0) || math.IsInf(s.lr, 0) {
		return s, fmt.Errorf("ratio: learning rate %v, want a finite value >= 0", s.lr)
	}
	if s.lr == 0 {
		s.lr = 1e-3
	}
	if math.IsNaN(s.heldOut) || s.heldOut >= 1 {
		return s, fmt.Errorf("ratio: held-out fraction %v, want < 1", s.heldOut)
	}
	if s.heldOut == 0 {
		s.heldOut = 0.1
	}
	if !(s.bandwidth >= 0) || math.IsInf(s.bandwidth, 0) {
		return s, fmt.Errorf("ratio: bandwidth %v, want a finite value >= 0", s.bandwidth)
	}
	return s, nil
}

// transitions is a set of (scaled) transitions to draw minibatches from.
type transitions struct {
	d       int
	s, next []float64 // n x d, scaled
	beta    []float64
	dummy   []bool    // dummy transition of the discounted case
	weight  []float64 // sampling weight
	cum     []float64 // cumulative weights; nil for uniform draws
}

func (tr *transitions) len() int { return len(tr.beta) }

func (tr *transitions) add(s, next []float64, beta, weight float64, dummy bool) {
	tr.s = append(tr.s, s...)
	tr.next = append(tr.next, next...)
	tr.beta = append(tr.beta, beta)
	tr.dummy = append(tr.dummy, dummy)
	tr.weight = append(tr.weight, weight)
}

// setWeights prepares weighted draws, or uniform ones if uniform is set.
func (tr *transitions) setWeights(uniform bool) {
	tr.cum = nil
	if uniform {
		return
	}
	tr.cum = make([]float64, len(tr.weight))
	c := 0.0
	for i, w := range tr.weight {
		c += w
		tr.cum[i] = c
	}
}

// draw fills idx with indices drawn with replacement in proportion to the
// sampling weights.
func (tr *transitions) draw(rng *rand.Rand, idx []int) {
	n := tr.len()
	if tr.cum == nil {
		for k := range idx {
			idx[k] = rng.IntN(n)
		}
		return
	}
	total := tr.cum[n-1]
	for k := range idx {
		u := rng.Float64() * total
		i := sort.SearchFloat64s(tr.cum, u)
		for i < n-1 && tr.cum[i] <= u { // skip zero-weight entries
			i++
		}
		idx[k] = min(i, n-1)
	}
}

// Fit learns w from the logged transitions of d with discount gamma in
// (0, 1], drawing every random number (held-out split, initialisation,
// bandwidth sample, minibatches) from rng. It needs real-valued states
// (d.StateDim > 0).
func (l Neural) Fit(rng *rand.Rand, d *dataset.Dataset, gamma float64) (*NeuralModel, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: discount %v outside (0, 1]", gamma)
	}
	if d == nil || d.StateDim <= 0 {
		return nil, errors.New("ratio: the neural learner needs real-valued states (StateDim > 0)")
	}
	set, err := l.settings()
	if err != nil {
		return nil, err
	}
	dim := d.StateDim
	if err := checkNeuralData(d); err != nil {
		return nil, err
	}

	// Scaling from all logged states.
	mean, scale := stateScaling(d)

	train, held := splitTransitions(rng, d, gamma, set.heldOut, mean, scale)
	if held != nil && held.len() < 2 {
		// Too little to evaluate a pairwise loss on: hold nothing out.
		train, held = splitTransitions(rng, d, gamma, -1, mean, scale)
	}
	if train.len() < 2 {
		return nil, fmt.Errorf("ratio: %d training transitions, need at least 2", train.len())
	}

	h := set.bandwidth
	if h == 0 {
		if h, err = medianBandwidth(rng, train, set.bandwidthSample); err != nil {
			return nil, err
		}
	}

	sizes := append(append([]int{dim}, set.hidden...), 1)
	net, err := nn.New(sizes, set.act, set.out)
	if err != nil {
		return nil, fmt.Errorf("ratio: %w", err)
	}
	net.Init(rng, 0.1)

	tr := newNeuralTrainer(net, set.m, h, set.workers)
	defer tr.close()
	tr.opt.LR = set.lr

	// The held-out loss: the weighted U-statistic over the whole held-out
	// set, or over a fixed weighted sample of heldOutCap of its transitions.
	var ev *neuralTrainer
	if held != nil {
		n := min(held.len(), heldOutCap)
		ev = newNeuralTrainer(net, n, h, set.workers)
		defer ev.close()
		idx := make([]int, n)
		if held.len() <= heldOutCap {
			for i := range idx {
				idx[i] = i
			}
			ev.om = make([]float64, n)
		} else {
			held.draw(rng, idx)
		}
		ev.fill(held, idx)
	}

	model := newNeuralModel(net, mean, scale)
	model.Bandwidth = h
	model.HeldOutLoss = math.NaN()
	best := math.Inf(1)
	bestParams := slices.Clone(net.Params())
	sinceBest := 0
	idx := make([]int, set.m)
	sum, count := 0.0, 0
	iter := 0
	for iter < set.maxIter {
		iter++
		train.draw(rng, idx)
		tr.fill(train, idx)
		v, err := tr.loss(true, !l.UStatistic)
		if err != nil {
			return nil, fmt.Errorf("ratio: iteration %d: %w", iter, err)
		}
		tr.opt.Step(net.Params(), tr.grad)
		sum += v
		count++
		if iter%set.evalEvery != 0 && iter != set.maxIter {
			continue
		}
		model.TrainLoss = sum / float64(count)
		sum, count = 0, 0
		ho := math.NaN()
		if ev != nil {
			if ho, err = ev.loss(false, false); err != nil {
				return nil, fmt.Errorf("ratio: held-out loss at iteration %d: %w", iter, err)
			}
			if ho < best {
				best, sinceBest = ho, 0
				copy(bestParams, net.Params())
				model.BestIter, model.HeldOutLoss = iter, ho
			} else {
				sinceBest++
			}
		}
		if l.Progress != nil {
			l.Progress(iter, model.TrainLoss, ho)
		}
		if ev != nil && sinceBest >= set.pat {
			break
		}
	}
	model.Iterations = iter
	if ev != nil {
		copy(net.Params(), bestParams)
	} else {
		model.BestIter = iter
	}
	if err := model.normalise(d, gamma); err != nil {
		return nil, err
	}
	return model, nil
}

// normalise sets Norm to the gamma^t-weighted mean of the network output
// over the logged states.
func (m *NeuralModel) normalise(d *dataset.Dataset, gamma float64) error {
	m.Norm = 1
	w, err := m.StepRatios(d)
	if err != nil {
		return err
	}
	var num, den float64
	k := 0
	for e := range d.Episodes {
		g := 1.0
		for range d.Episodes[e].Steps {
			num += g * w[k]
			den += g
			g *= gamma
			k++
		}
	}
	norm := num / den
	if !(norm > 0) || math.IsInf(norm, 0) {
		return fmt.Errorf("ratio: the learned ratio has mean %v over the logged states", norm)
	}
	m.Norm = norm
	return nil
}

// checkNeuralData checks the dimensions and finiteness of the states and
// the ratios of the logged actions.
func checkNeuralData(d *dataset.Dataset) error {
	dim := d.StateDim
	finite := func(v []float64) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	for e := range d.Episodes {
		ep := &d.Episodes[e]
		for t := range ep.Steps {
			st := &ep.Steps[t]
			if len(st.Obs) != dim || !finite(st.Obs) {
				return fmt.Errorf("ratio: episode %q step %d: state %v, want %d finite values", ep.ID, t, st.Obs, dim)
			}
			if !st.HasNext {
				continue
			}
			if len(st.NextObs) != dim || !finite(st.NextObs) {
				return fmt.Errorf("ratio: episode %q step %d: next state %v, want %d finite values", ep.ID, t, st.NextObs, dim)
			}
			lr := st.LogTarget - st.LogBehavior
			if math.IsNaN(lr) || math.IsInf(st.LogBehavior, 0) || math.IsInf(math.Exp(lr), 1) {
				return fmt.Errorf("ratio: episode %q step %d: log-probabilities %v (target), %v (behavior) give no finite ratio",
					ep.ID, t, st.LogTarget, st.LogBehavior)
			}
		}
	}
	return nil
}

// stateScaling returns the per-dimension mean and standard deviation of
// the logged states (a standard deviation of 0 is replaced by 1).
func stateScaling(d *dataset.Dataset) (mean, scale []float64) {
	dim := d.StateDim
	mean = make([]float64, dim)
	scale = make([]float64, dim)
	n := 0.0
	for e := range d.Episodes {
		for t := range d.Episodes[e].Steps {
			n++
			for k, v := range d.Episodes[e].Steps[t].Obs {
				mean[k] += v
			}
		}
	}
	for k := range mean {
		mean[k] /= max(n, 1)
	}
	for e := range d.Episodes {
		for t := range d.Episodes[e].Steps {
			for k, v := range d.Episodes[e].Steps[t].Obs {
				scale[k] += (v - mean[k]) * (v - mean[k])
			}
		}
	}
	for k := range scale {
		scale[k] = math.Sqrt(scale[k] / max(n, 1))
		if !(scale[k] > 0) || math.IsInf(scale[k], 0) {
			scale[k] = 1
		}
	}
	return mean, scale
}

// splitTransitions builds the training and held-out transition sets,
// scaled, with the dummies and sampling weights of the discounted case.
// held is nil when heldOut < 0 or nothing is held out.
func splitTransitions(rng *rand.Rand, d *dataset.Dataset, gamma, heldOut float64, mean, scale []float64) (train, held *transitions) {
	dim := d.StateDim
	train = &transitions{d: dim}
	if heldOut > 0 {
		held = &transitions{d: dim}
	}
	nEp := len(d.Episodes)
	heldEp := make([]bool, nEp)
	byEpisode := heldOut > 0 && float64(nEp)*heldOut >= 1
	if byEpisode {
		k := int(math.Round(float64(nEp) * heldOut))
		for _, e := range rng.Perm(nEp)[:k] {
			heldEp[e] = true
		}
	}
	sx := make([]float64, dim)
	nx := make([]float64, dim)
	scaleTo := func(dst, s []float64) {
		for k, v := range s {
			dst[k] = (v - mean[k]) / scale[k]
		}
	}
	for e := range d.Episodes {
		steps := d.Episodes[e].Steps
		if len(steps) == 0 {
			continue
		}
		cut := len(steps) // steps t >= cut are held out
		switch {
		case heldEp[e]:
			cut = 0
		case held != nil && !byEpisode:
			cut = len(steps) - int(math.Ceil(heldOut*float64(len(steps))))
		}
		dest := func(t int) *transitions {
			if t >= cut {
				return held
			}
			return train
		}
		if gamma < 1 { // the dummy transition t = -1 into s_0, weight gamma^0
			scaleTo(sx, steps[0].Obs)
			dest(0).add(sx, sx, 0, 1, true)
		}
		g := gamma // gamma^(t+1)
		for t := range steps {
			st := &steps[t]
			if st.HasNext && g > 0 {
				scaleTo(sx, st.Obs)
				scaleTo(nx, st.NextObs)
				dest(t).add(sx, nx, math.Exp(st.LogTarget-st.LogBehavior), g, false)
			}
			g *= gamma
		}
	}
	train.setWeights(gamma == 1)
	if held != nil {
		held.setWeights(gamma == 1)
		if held.len() == 0 {
			held = nil
		}
	}
	return train, held
}

// medianBandwidth returns the median of the pairwise distances between up
// to n next states of tr drawn without replacement (dummies excluded). If
// more than half the distances are 0, it returns the median of the
// non-zero ones.
func medianBandwidth(rng *rand.Rand, tr *transitions, n int) (float64, error) {
	var pool []int
	for i, dm := range tr.dummy {
		if !dm {
			pool = append(pool, i)
		}
	}
	for k := 0; k < min(n, len(pool)); k++ { // partial Fisher-Yates
		j := k + rng.IntN(len(pool)-k)
		pool[k], pool[j] = pool[j], pool[k]
	}
	pool = pool[:min(n, len(pool))]
	d := tr.d
	dist := make([]float64, 0, len(pool)*(len(pool)-1)/2)
	for a := 0; a < len(pool); a++ {
		xa := tr.next[pool[a]*d : pool[a]*d+d]
		for b := a + 1; b < len(pool); b++ {
			xb := tr.next[pool[b]*d : pool[b]*d+d]
			s := 0.0
			for k := range xa {
				s += (xa[k] - xb[k]) * (xa[k] - xb[k])
			}
			dist = append(dist, math.Sqrt(s))
		}
	}
	slices.Sort(dist)
	nz, _ := slices.BinarySearch(dist, math.SmallestNonzeroFloat64)
	if nz*2 >= len(dist) {
		dist = dist[nz:]
	}
	if len(dist) == 0 {
		return 0, errors.New("ratio: all sampled next states coincide; set Neural.Bandwidth")
	}
	mid := len(dist) / 2
	h := dist[mid]
	if len(dist)%2 == 0 {
		h = (dist[mid-1] + dist[mid]) / 2
	}
	return h, nil
}

// heldOutCap is the largest number of held-out transitions whose pairwise
// loss is evaluated.
const heldOutCap = 2048

// neuralTrainer holds the network, the minibatch and every buffer of a
// training step, so that an iteration allocates nothing. The batch's
// current states s_i are rows [0, m) of x and its next states s'_i rows
// [m, 2m); part 0 of every phase works on the former (and the first rows
// of the kernel), part 1 on the latter.
type neuralTrainer struct {
	net  *nn.MLP
	d, m int
	negc float64 // -1/(2h^2)

	x     []float64 // 2m x d
	bt    []float64 // d x m: next states by dimension
	beta  []float64 // m
	dummy []bool    // m
	w     [2][]float64
	u     []float64 // beta_i w_i - w'_i
	delta []float64
	g     [2][]float64 // partial K delta of the two kernel parts
	kg    []float64    // K delta
	dy    []float64    // 2m: dD/dw(s_i), dD/dw(s'_i)
	ws    [2]*nn.Workspace
	grads [2][]float64
	grad  []float64
	karg  [2][]float64 // kernel row scratch
	split int          // kernel rows [0, split) are part 0
	om    []float64    // weights of the batch rows; nil for unit weights
	opt   nn.Adam

	// The helper goroutine (Workers = 2): run publishes the phase in slot
	// and nudges the helper; whichever of the two claims slot first runs
	// part 1, so that a helper kept off the CPU by other work costs no
	// more than running both parts on one goroutine.
	gen    uint64
	slot   atomic.Uint64 // gen<<2 | phase of the unclaimed part 1, or 0
	notify chan struct{} // capacity 1
	done   chan struct{} // capacity 1: the helper finished a part
}

const (
	phaseForward = iota
	phaseKernel
	phaseBackward
)

func newNeuralTrainer(net *nn.MLP, m int, h float64, workers int) *neuralTrainer {
	d := net.In()
	t := &neuralTrainer{
		net: net, d: d, m: m, negc: -1 / (2 * h * h),
		x: make([]float64, 2*m*d), bt: make([]float64, d*m),
		beta: make([]float64, m), dummy: make([]bool, m),
		u: make([]float64, m), delta: make([]float64, m), kg: make([]float64, m),
		dy: make([]float64, 2*m), grad: make([]float64, net.NumParams()),
	}
	for p := range 2 {
		t.ws[p] = net.NewWorkspace(m)
		t.grads[p] = make([]float64, net.NumParams())
		t.g[p] = make([]float64, m)
		t.karg[p] = make([]float64, d)
	}
	// Balance the triangle of pairs (i, j > i): row i has m - 1 - i of them.
	t.split = int(float64(m) * (1 - 1/math.Sqrt2))
	if workers > 1 {
		t.notify = make(chan struct{}, 1)
		t.done = make(chan struct{}, 1)
		go func() {
			for range t.notify {
				if v := t.slot.Load(); v != 0 && t.slot.CompareAndSwap(v, 0) {
					t.exec(int(v&3), 1)
					t.done <- struct{}{}
				}
			}
		}()
	}
	return t
}

func (t *neuralTrainer) close() {
	if t.notify != nil {
		close(t.notify)
	}
}

// run executes both parts of a phase, part 1 on the helper goroutine if
// there is one and it claims it in time.
func (t *neuralTrainer) run(ph int) {
	if t.notify == nil {
		t.exec(ph, 0)
		t.exec(ph, 1)
		return
	}
	t.gen++
	v := t.gen<<2 | uint64(ph)
	t.slot.Store(v)
	select {
	case t.notify <- struct{}{}:
	default: // a nudge is already pending
	}
	t.exec(ph, 0)
	if t.slot.CompareAndSwap(v, 0) {
		t.exec(ph, 1) // the helper has not started: do it here
		return
	}
	<-t.done
}

func (t *neuralTrainer) exec(ph, p int) {
	m, d := t.m, t.d
	switch ph {
	case phaseForward:
		t.w[p] = t.net.Forward(t.ws[p], t.x[p*m*d:(p+1)*m*d], m)
	case phaseKernel:
		lo, hi := 0, t.split
		if p == 1 {
			lo, hi = t.split, m
		}
		t.kernelRows(p, lo, hi)
	case phaseBackward:
		t.net.Backward(t.ws[p], t.dy[p*m:(p+1)*m], t.grads[p])
	}
}

// kernelRows sets g[p] to the contributions of the kernel rows [lo, hi)
// off the diagonal: for i in the range and j > i, K_ij Delta_j to entry i
// and K_ij Delta_i to entry j (K is symmetric), so that the two parts
// together hold (K - I) Delta having evaluated each K_ij once.
func (t *neuralTrainer) kernelRows(p, lo, hi int) {
	m, d := t.m, t.d
	g := t.g[p]
	clear(g)
	y := t.karg[p][:d]
	for i := lo; i < hi; i++ {
		for k := range y {
			y[k] = t.bt[k*m+i]
		}
		n := m - i - 1
		gi := nn.RBFRow(n, t.bt[i+1:], m, y, t.negc, t.delta[i+1:], t.delta[i], g[i+1:])
		g[i] += gi
	}
}

// fill loads the transitions idx of tr into the minibatch, with their
// sampling weights if t.om is not nil.
func (t *neuralTrainer) fill(tr *transitions, idx []int) {
	m, d := t.m, t.d
	for k, i := range idx {
		if t.om != nil {
			t.om[k] = tr.weight[i]
		}
		copy(t.x[k*d:(k+1)*d], tr.s[i*d:(i+1)*d])
		copy(t.x[(m+k)*d:(m+k+1)*d], tr.next[i*d:(i+1)*d])
		for c := 0; c < d; c++ {
			t.bt[c*m+k] = tr.next[i*d+c]
		}
		t.beta[k] = tr.beta[i]
		t.dummy[k] = tr.dummy[i]
	}
}

// loss returns the kernel loss D of the current minibatch and, if grad is
// set, leaves its gradient with respect to the parameters in t.grad. With
// diag, D is the V-statistic (1/m^2) sum_{i,j} Delta_i Delta_j K_ij;
// without, the U-statistic 1/(m(m-1)) sum_{i != j}. With N the
// normalisation and g = K Delta (or (K - I) Delta),
//
//	dD/dDelta_i = 2 g_i / N
//	dD/dz = -sum_i dD/dDelta_i u_i / z^2,  u_i = beta_i w(s_i) - w(s'_i)
//	dD/dw(s_i) = dD/dDelta_i beta_i / z + [i not dummy] dD/dz / n_z
//	dD/dw(s'_i) = -dD/dDelta_i / z
func (t *neuralTrainer) loss(grad, diag bool) (float64, error) {
	m := t.m
	t.run(phaseForward)
	w, wn := t.w[0], t.w[1]
	if t.om != nil && grad {
		panic("ratio: gradient of a weighted loss")
	}
	z, nz, wz := 0.0, 0, 0.0
	for i, dm := range t.dummy {
		if !dm {
			o := 1.0
			if t.om != nil {
				o = t.om[i]
			}
			z += o * w[i]
			wz += o
			nz++
		}
	}
	if nz == 0 || !(wz > 0) {
		// Only dummies: no normalisation is defined; skip the step.
		clear(t.grad)
		return 0, nil
	}
	z /= wz
	if !(z > 0) || math.IsInf(z, 0) {
		return 0, fmt.Errorf("mean network output %v (training diverged)", z)
	}
	for i := range t.u {
		t.u[i] = t.beta[i]*w[i] - wn[i]
		c := 0.0
		if t.dummy[i] {
			c = 1
		}
		t.delta[i] = c + t.u[i]/z
	}
	mm := float64(m) * float64(m-1)
	if diag {
		mm = float64(m) * float64(m)
	}
	if t.om != nil { // weighted: Delta_i o_i, normalised by sum_{i != j} o_i o_j
		s, s2 := 0.0, 0.0
		for i, o := range t.om {
			t.delta[i] *= o
			s += o
			s2 += o * o
		}
		mm = s*s - s2
		if diag {
			mm = s * s
		}
	}
	t.run(phaseKernel)
	D := 0.0
	for i := range t.kg {
		t.kg[i] = t.g[0][i] + t.g[1][i]
		if diag {
			t.kg[i] += t.delta[i] // K_ii = 1
		}
		D += t.delta[i] * t.kg[i]
	}
	D /= mm
	if math.IsNaN(D) || math.IsInf(D, 0) {
		return 0, fmt.Errorf("loss %v (training diverged)", D)
	}
	if !grad {
		return D, nil
	}
	dz := 0.0
	for i, gi := range t.kg {
		dz -= (2 * gi / mm) * t.u[i]
	}
	dz /= z * z
	for i, gi := range t.kg {
		G := 2 * gi / mm
		t.dy[i] = G * t.beta[i] / z
		if !t.dummy[i] {
			t.dy[i] += dz / float64(nz)
		}
		t.dy[m+i] = -G / z
	}
	t.run(phaseBackward)
	for k := range t.grad {
		t.grad[k] = t.grads[0][k] + t.grads[1][k]
	}
	return D, nil
}
