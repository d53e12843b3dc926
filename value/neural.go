package value

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/holdout"
	"github.com/ihope-ope/ihope/internal/settings"
	"github.com/ihope-ope/ihope/nn"
)

// Neural is neural fitted Q evaluation, "neural": q is a feed-forward
// network trained by iterated regression,
//
//	q_(k+1) = argmin_q sum_j (q(s_j, a_j) - r_j - gamma E_{a'~pi(.|s'_j)} q_k(s'_j, a'))^2,
//
// over the logged transitions with a known next state, q_k a target
// network: a frozen copy of q refreshed every TargetEvery iterations of
// minibatch Adam (Le, Voloshin and Yue 2019; the target network of Mnih
// et al. 2015). It learns the stationary value for a discount
// 0 < gamma < 1; gamma = 1 (the differential form, whose free average
// reward a network cannot pin down as cleanly as the linear solve) is
// refused: use the linear or the tabular learner. States are real
// vectors.
//
// The network. The states are standardised per component over the
// logged states, x = (s - mean)/sd (a component with sd = 0 is only
// centred), and so are real actions, y = (a - mean)/sd over the logged
// actions. For discrete actions the network maps x to NumActions outputs,
// one q per action (the architecture of deep Q-learning: one forward
// pass gives q(s, .) and so v(s) = sum_a pi(a|s) q(s, a)); for real
// actions it maps (x, y) to one output. The default has two hidden layers
// of 64 tanh units and a linear output, scaled so that its outputs are
// of order 1:
//
//	q(s, a) = Shift + Scale net(x, a),  Shift = mean(r)/(1-gamma),  Scale = sd(r)/(1-gamma)
//
// (Scale = max(|mean(r)|, 1)/(1-gamma) if the rewards are constant). The
// output layer starts at a tenth of LeCun's scale, so q starts close to
// the constant Shift, the value of a policy earning the mean logged
// reward.
//
// The target. E_{a'~pi} q_k(s', a') is sum_a' pi(a'|s') q_k(s', a') with
// pi from the logs' TargetProbs columns (discrete actions; a transition
// whose next distribution is unknown is left out), or, for real actions,
// a Monte Carlo mean over actions drawn from Target.Continuous: the
// Target.Samples actions per next state (DefaultSamples if 0) are drawn
// once, seeded by Target.Seed and the state as for Linear (see
// mcSampler), and a training target averages TrainSamples of them,
// taken cyclically from a random start (an unbiased estimate whose noise
// the regression averages out); the held-out error and Values use all of
// them.
//
// Training. A fraction HeldOut of the data is kept aside: whole episodes
// chosen at random when there are at least 1/HeldOut of them, otherwise
// the last HeldOut fraction of the steps of every episode. Each iteration
// draws BatchSize training transitions uniformly with replacement and
// takes one Adam step on the mean squared regression error against the
// target network's values. The model is not the online network but the
// exponential moving average of its parameters with time constant
// Average (Polyak averaging): with a constant step size the online
// network keeps fluctuating, and through the target network the
// fluctuations of its level accumulate (on the 1-d linear-Gaussian test,
// once converged, the online network's normalised value had a standard
// deviation of 0.008 across evaluations, the average's 0.005, and the
// held-out error of the average became smooth enough to choose by).
// Every EvalEvery iterations
// the held-out Bellman error of the average,
//
//	E = mean over held-out transitions of (q(s, a) - r - gamma E_{a'~pi} q(s', a'))^2,
//
// is computed (over a fixed random sample of 2048 held-out transitions if
// there are more). After BurnIn iterations it chooses: training stops
// when E has not improved for Patience evaluations, or after MaxIter
// iterations, and the parameters with the lowest E are kept. E is a
// guide, not an estimate of the error of q: it also holds the variance
// of r + gamma v(s') given (s, a), and it barely sees the level of q,
// which fitted Q evaluation corrects by only a factor gamma per refresh
// of the target (hence the burn-in, and MaxIter/TargetEvery = 800
// refreshes by default: several times 1/(1-gamma) up to gamma = 0.995;
// raise MaxIter beyond).
//
// Determinism. Every random number of Fit comes from
// rand.NewPCG(Seed, s) with a fixed stream s: the same seed, data and
// settings give bit-identical models on a given machine, whatever Workers
// is (the target network's rows are always evaluated in the same two
// pieces; package nn computes every row the same way in any batch).
//
// The zero value is ready to use; settings that are 0 take the defaults
// documented on each field. Pendulum's logs of the paper (150 episodes
// of 1000 steps, real actions) train in about 40 s on two cores with
// the defaults (see BenchmarkNeuralPendulum).
type Neural struct {
	// Seed seeds Fit: the held-out split, the initial weights and the
	// minibatches.
	Seed uint64

	// Hidden lists the hidden layer widths. If nil, {64, 64} is used.
	Hidden []int

	// Activation is the hidden activation. If 0, nn.Tanh is used.
	Activation nn.Activation

	// BatchSize is the number of transitions per minibatch. If 0, 256 is
	// used.
	BatchSize int

	// LearningRate is Adam's step size. If 0, 1e-3 is used.
	LearningRate float64

	// TargetEvery is the number of iterations between refreshes of the
	// target network. If 0, 50 is used.
	TargetEvery int

	// MaxIter caps the training iterations. If 0, 40000 is used.
	MaxIter int

	// EvalEvery is the number of iterations between evaluations of the
	// held-out Bellman error (and calls of Progress). If 0, 500 is used.
	EvalEvery int

	// Patience is the number of evaluations without improvement of the
	// held-out error after which training stops. If 0, 10 is used.
	Patience int

	// BurnIn is the number of iterations before the held-out error
	// chooses the parameters kept and may stop training: fitted Q
	// evaluation corrects the level of q by a factor gamma per refresh of
	// the target, which the held-out Bellman error barely sees (an error
	// c in the level moves the residual by (1-gamma) c), so an early
	// minimum of the noisy held-out error would keep a q whose level has
	// not converged. If 0, TargetEvery ceil(ln 100/ln(1/gamma)) +
	// 3 Average is used: the refreshes that shrink an initial error of
	// the level a hundredfold, plus three time constants of the
	// parameter average (5200 iterations for gamma = 0.9, 26000 for
	// gamma = 0.99 with the other defaults). If MaxIter comes first, the
	// last parameters are kept.
	BurnIn int

	// HeldOut is the fraction of the data kept aside to monitor the
	// Bellman error. If 0, 0.1 is used; if negative, nothing is held
	// out, training runs MaxIter iterations and keeps the last
	// parameters.
	HeldOut float64

	// Average is the time constant, in iterations, of the exponential
	// moving average of the parameters that is evaluated and kept
	// (weight exp(-1/Average) per iteration). If 0, 1000 is used; if
	// negative, the current parameters are used.
	Average int

	// TrainSamples is the number of target actions per next state in a
	// training target (real actions). If 0, min(4, Target.Samples) is
	// used; it may not exceed Target.Samples.
	TrainSamples int

	// Workers is the number of goroutines of a training step and of
	// Values, 1 or 2. If 0, 2 is used when GOMAXPROCS allows it. It does
	// not change the result.
	Workers int

	// Progress, if not nil, is called after every evaluation with the
	// iteration, the mean training loss since the previous call (in the
	// network's units, (q - target)^2/Scale^2) and the held-out Bellman
	// error (NaN when nothing is held out). The library never prints. It
	// stays in the process that set it (not encoded with the settings).
	Progress func(iter int, loss, heldOut float64) `json:"-"`

	// debug, if not nil, is called after every evaluation with the model
	// holding the current network (tests).
	debug func(iter int, m *NeuralModel)
}

// neuralFQEStream is the second word of the PCG state of Fit's generator
// ("fqe-nn" in ASCII).
const neuralFQEStream = 0x6671652d6e6e

// heldOutFQECap is the largest number of held-out transitions whose
// Bellman error is evaluated.
const heldOutFQECap = 2048

// fqeSettings are the settings of a Neural with defaults filled in.
type fqeSettings struct {
	hidden                      []int
	act                         nn.Activation
	m, targetEvery, maxIter     int
	evalEvery, patience, trainS int
	lr, heldOut                 float64
	workers, average, minIter   int
}

func (l Neural) settings(gamma float64, samples int) (fqeSettings, error) {
	s := fqeSettings{hidden: l.Hidden, act: l.Activation, m: l.BatchSize, targetEvery: l.TargetEvery,
		maxIter: l.MaxIter, evalEvery: l.EvalEvery, patience: l.Patience, trainS: l.TrainSamples,
		lr: l.LearningRate, heldOut: l.HeldOut, workers: l.Workers, average: l.Average,
		minIter: l.BurnIn}
	if s.hidden == nil {
		s.hidden = []int{64, 64}
	}
	for _, h := range s.hidden {
		if h <= 0 {
			return s, fmt.Errorf("value: neural: hidden widths %v, want positive", s.hidden)
		}
	}
	if s.act == 0 {
		s.act = nn.Tanh
	}
	def := func(v *int, d int, name string) error { return settings.Int("value: neural", v, d, name) }
	for _, err := range []error{
		def(&s.m, 256, "batch size"), def(&s.targetEvery, 50, "target refresh period"),
		def(&s.maxIter, 40000, "iteration cap"), def(&s.evalEvery, 500, "evaluation period"),
		def(&s.patience, 10, "patience"), def(&s.trainS, min(4, max(samples, 1)), "training samples"),
		def(&s.workers, min(2, runtime.GOMAXPROCS(0)), "workers"),
	} {
		if err != nil {
			return s, err
		}
	}
	switch {
	case s.average == 0:
		s.average = 1000
	case s.average < 0:
		s.average = 0
	}
	if s.minIter < 0 {
		return s, fmt.Errorf("value: neural: burn-in %d, want >= 0", s.minIter)
	}
	if s.minIter == 0 {
		// ln 100/ln(1/gamma) refreshes shrink the level's error a
		// hundredfold; the average lags by about Average iterations.
		k := math.Ceil(math.Log(100) / -math.Log(gamma))
		s.minIter = int(min(k*float64(s.targetEvery)+3*float64(s.average), 1e9))
	}
	if samples > 0 && s.trainS > samples {
		return s, fmt.Errorf("value: neural: %d training samples per next state, more than the %d drawn (Target.Samples)", s.trainS, samples)
	}
	s.workers = min(s.workers, 2)
	if !(s.lr >= 0) || math.IsInf(s.lr, 0) {
		return s, fmt.Errorf("value: neural: learning rate %v, want a finite value >= 0", s.lr)
	}
	if s.lr == 0 {
		s.lr = 1e-3
	}
	if math.IsNaN(s.heldOut) || s.heldOut >= 1 {
		return s, fmt.Errorf("value: neural: held-out fraction %v, want < 1", s.heldOut)
	}
	if s.heldOut == 0 {
		s.heldOut = 0.1
	}
	return s, nil
}

// Name returns "neural".
func (Neural) Name() string { return "neural" }

// FitsHorizon returns false: the network is the stationary q of
// gamma < 1, with no time-indexed form.
func (Neural) FitsHorizon() bool { return false }

// WithSeed returns l with another training seed.
func (l Neural) WithSeed(seed uint64) Learner {
	l.Seed = seed
	return l
}

// Fit trains q on the logged transitions of d (real-valued states) with
// discount 0 < gamma < 1 and the target's action distribution pi. The
// model is a *NeuralModel.
func (l Neural) Fit(d *dataset.Dataset, gamma float64, pi Target) (Model, error) {
	m, err := l.FitNeural(d, gamma, pi)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// FitNeural is Fit returning the concrete model.
func (l Neural) FitNeural(d *dataset.Dataset, gamma float64, pi Target) (*NeuralModel, error) {
	if err := checkDiscount("neural", gamma); err != nil {
		return nil, err
	}
	if gamma == 1 {
		return nil, errors.New("value: neural: gamma = 1 (the average-reward, differential value) is not supported by the neural learner; use the linear or the tabular learner")
	}
	if d == nil {
		return nil, errors.New("value: neural: no data")
	}
	tgt, err := newRealTarget("neural", d, pi)
	if err != nil {
		return nil, err
	}
	set, err := l.settings(gamma, tgt.samples)
	if err != nil {
		return nil, err
	}
	if d.NumSteps() == 0 {
		return nil, errors.New("value: neural: the logs have no steps")
	}
	rng := rand.New(rand.NewPCG(l.Seed, neuralFQEStream))

	m := &NeuralModel{Gamma: gamma, state: newScaler(d.Obs, d.StateDim), target: tgt,
		workers: set.workers, HeldOutError: math.NaN()}
	if d.ActionDim > 0 {
		m.action = newScaler(d.ActionVec, d.ActionDim)
	}
	train, held, err := m.transitions(rng, d, set.heldOut)
	if err != nil {
		return nil, err
	}
	if train.n == 0 {
		return nil, errors.New("value: neural: no training transition with a known next state (and, for discrete actions, the target's distribution there)")
	}
	mean, sd := meanSD(train.r)
	if !(sd > 0) {
		sd = max(math.Abs(mean), 1)
	}
	m.Shift, m.Scale = mean/(1-gamma), sd/(1-gamma)

	sizes := append(append([]int{m.inputs()}, set.hidden...), m.outputs())
	net, err := nn.New(sizes, set.act, nn.Identity)
	if err != nil {
		return nil, fmt.Errorf("value: neural: %w", err)
	}
	net.Init(rng, 0.1)
	m.Net = net

	if held != nil && held.n > heldOutFQECap {
		held = held.sample(rng, heldOutFQECap)
	}
	tr := newFQETrainer(m, set, gamma)
	tr.debug = l.debug
	if err := tr.optimise(rng, l.Progress, train, held); err != nil {
		return nil, err
	}
	return m, nil
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)))
}

// NeuralModel is a fitted neural FQE model (see Neural).
type NeuralModel struct {
	// Net maps the standardised state (and action) to net(x, a); q is
	// Shift + Scale net.
	Net *nn.MLP
	// Shift and Scale map the network's outputs to values.
	Shift, Scale float64
	// Gamma is the discount.
	Gamma float64
	// Iterations is the number of training iterations run and BestIter
	// the iteration whose parameters were kept.
	Iterations, BestIter int
	// TrainLoss is the mean minibatch loss over the last evaluation
	// period (network units); HeldOutError the held-out Bellman error at
	// BestIter (NaN without held-out data).
	TrainLoss, HeldOutError float64

	state, action scaler
	target        realTarget
	workers       int
}

// Rho returns NaN: the neural model is discounted.
func (m *NeuralModel) Rho() float64 { return math.NaN() }

func (m *NeuralModel) stateDim() int { return len(m.state.mean) }

// inputs returns the network's input width and outputs its output width.
func (m *NeuralModel) inputs() int {
	if m.target.numActions > 0 {
		return m.stateDim()
	}
	return m.stateDim() + m.target.actionDim
}

func (m *NeuralModel) outputs() int { return max(m.target.numActions, 1) }

// fqeSet is a set of transitions in the network's terms.
type fqeSet struct {
	n   int
	x   []float64 // n x inputs: the network input at (s_j, a_j) (discrete: x(s_j))
	act []int32   // discrete: a_j
	r   []float64
	nx  []float64 // n x stateDim: x(s'_j)
	na  []float64 // real actions: n x S x actionDim, the standardised draws at s'_j
	np  []float64 // discrete: n x K, pi(.|s'_j)
}

// sample returns k transitions of s drawn without replacement.
func (s *fqeSet) sample(rng *rand.Rand, k int) *fqeSet {
	idx := rng.Perm(s.n)[:k]
	slices.Sort(idx)
	out := &fqeSet{}
	din := len(s.x) / s.n
	ds := len(s.nx) / s.n
	for _, j := range idx {
		out.n++
		out.x = append(out.x, s.x[j*din:(j+1)*din]...)
		out.r = append(out.r, s.r[j])
		out.nx = append(out.nx, s.nx[j*ds:(j+1)*ds]...)
		if s.act != nil {
			out.act = append(out.act, s.act[j])
			w := len(s.np) / s.n
			out.np = append(out.np, s.np[j*w:(j+1)*w]...)
		} else {
			w := len(s.na) / s.n
			out.na = append(out.na, s.na[j*w:(j+1)*w]...)
		}
	}
	return out
}

// transitions builds the training and held-out sets (held is nil when
// nothing is held out), checking the logged values.
func (m *NeuralModel) transitions(rng *rand.Rand, d *dataset.Dataset, heldOut float64) (train, held *fqeSet, err error) {
	train = &fqeSet{}
	if heldOut > 0 {
		held = &fqeSet{}
	}
	nEp := d.NumEpisodes()
	heldEp, byEpisode := holdout.Episodes(rng, nEp, heldOut)
	ds, din := m.stateDim(), m.inputs()
	x := make([]float64, din)
	nx := make([]float64, ds)
	var smp *mcSampler
	var ya []float64
	if m.target.cont != nil {
		smp = newMCSampler(m.target)
		ya = make([]float64, m.target.actionDim)
	}
	for e := range nEp {
		lo, hi := d.Span(e)
		T := hi - lo
		cut := T // steps t >= cut are held out
		switch {
		case heldEp[e]:
			cut = 0
		case held != nil && !byEpisode:
			cut = T - int(math.Ceil(heldOut*float64(T)))
		}
		for j := lo; j < hi; j++ {
			if err := checkRealStep("neural", d, e, j); err != nil {
				return nil, nil, err
			}
			obs, ok := d.NextObs(e, j)
			if !ok {
				continue
			}
			if !allFinite(obs) {
				return nil, nil, fmt.Errorf("value: neural: episode %q step %d: next state %v is not finite", d.IDs[e], j-lo, obs)
			}
			var probs []float64
			if m.target.numActions > 0 {
				if probs, ok = d.NextTargetProbs(e, j); !ok {
					continue
				}
				if err := checkTargetRow("neural", d, e, j, probs, "next"); err != nil {
					return nil, nil, err
				}
			}
			dst := train
			if j-lo >= cut {
				dst = held
			}
			m.input(x, d, j)
			dst.n++
			dst.x = append(dst.x, x...)
			dst.r = append(dst.r, d.Reward[j])
			m.state.apply(nx, obs)
			dst.nx = append(dst.nx, nx...)
			if probs != nil {
				dst.act = append(dst.act, d.Action[j])
				dst.np = append(dst.np, probs...)
				continue
			}
			smp.draw(obs, func(_ int, a []float64) {
				m.action.apply(ya, a)
				dst.na = append(dst.na, ya...)
			})
		}
	}
	if held != nil && held.n == 0 {
		held = nil
	}
	return train, held, nil
}

// input writes the network input of step j's (s, a) to x.
func (m *NeuralModel) input(x []float64, d *dataset.Dataset, j int) {
	ds := m.stateDim()
	m.state.apply(x[:ds], d.ObsAt(j))
	if m.target.numActions == 0 {
		m.action.apply(x[ds:], d.ActionVecAt(j))
	}
}

// fqeTrainer holds the networks and every buffer of a training step.
type fqeTrainer struct {
	m           *NeuralModel
	set         fqeSettings
	gamma       float64
	net, target *nn.MLP
	opt         nn.Adam

	din, dout, ds, S, tS int
	idx                  []int
	xin, tin, t          []float64 // online inputs, target inputs, regression targets
	dy, grad             []float64
	ws                   *nn.Workspace
	tws                  [2]*nn.Workspace
	tout                 [2][]float64
	eval                 *fqeEvaluator
	debug                func(int, *NeuralModel)
}

func newFQETrainer(m *NeuralModel, set fqeSettings, gamma float64) *fqeTrainer {
	tr := &fqeTrainer{m: m, set: set, gamma: gamma, net: m.Net, target: m.Net.Clone(),
		din: m.inputs(), dout: m.outputs(), ds: m.stateDim(), S: m.target.samples, tS: set.trainS}
	tr.opt.LR = set.lr
	b := set.m
	rows := b // target rows per minibatch
	if m.target.numActions == 0 {
		rows = b * tr.tS
	}
	tr.idx = make([]int, b)
	tr.xin = make([]float64, b*tr.din)
	tr.tin = make([]float64, rows*tr.din)
	tr.t = make([]float64, b)
	tr.dy = make([]float64, b*tr.dout)
	tr.grad = make([]float64, m.Net.NumParams())
	tr.ws = m.Net.NewWorkspace(b)
	for p := range 2 {
		tr.tws[p] = m.Net.NewWorkspace((rows + 1) / 2)
	}
	tr.eval = newFQEEvaluator(m)
	return tr
}

// optimise runs the training loop (see Neural) and leaves the kept
// parameters in the model's network.
func (tr *fqeTrainer) optimise(rng *rand.Rand, progress func(int, float64, float64), train, held *fqeSet) error {
	set, m := tr.set, tr.m
	online := tr.net
	// The model's network holds the evaluated parameters: the
	// exponential average of the online ones (or the online ones).
	avg := online.Clone()
	m.Net = avg
	acc := make([]float64, online.NumParams())
	beta := 0.0
	if set.average > 0 {
		beta = math.Exp(-1 / float64(set.average))
	}
	betaT := 1.0
	best := math.Inf(1)
	bestParams := slices.Clone(avg.Params())
	since, iter := 0, 0
	sum, count := 0.0, 0
	for iter < set.maxIter {
		iter++
		for k := range tr.idx {
			tr.idx[k] = rng.IntN(train.n)
		}
		loss := tr.step(rng, train)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("value: neural: iteration %d: loss %v (training diverged)", iter, loss)
		}
		sum += loss
		count++
		for i, v := range online.Params() {
			acc[i] = beta*acc[i] + (1-beta)*v
		}
		betaT *= beta
		if iter%set.targetEvery == 0 {
			copy(tr.target.Params(), online.Params())
		}
		if iter%set.evalEvery != 0 && iter != set.maxIter {
			continue
		}
		// The debiased average acc/(1 - beta^t).
		for i, v := range acc {
			avg.Params()[i] = v / (1 - betaT)
		}
		m.TrainLoss = sum / float64(count)
		sum, count = 0, 0
		he := math.NaN()
		if held != nil {
			he = tr.eval.bellmanError(avg, held, tr.gamma)
			if math.IsNaN(he) || math.IsInf(he, 0) {
				return fmt.Errorf("value: neural: held-out Bellman error %v at iteration %d (training diverged)", he, iter)
			}
			switch {
			case iter < set.minIter: // burn-in: not yet a candidate
			case he < best:
				best, since = he, 0
				copy(bestParams, avg.Params())
				m.BestIter, m.HeldOutError = iter, he
			default:
				since++
			}
		}
		if progress != nil {
			progress(iter, m.TrainLoss, he)
		}
		if tr.debug != nil {
			tr.debug(iter, m)
		}
		if held != nil && since >= set.patience {
			break
		}
	}
	m.Iterations = iter
	if held != nil && m.BestIter > 0 {
		copy(avg.Params(), bestParams)
	} else {
		m.BestIter = iter // the last average
	}
	return nil
}

// step takes one Adam step on the minibatch tr.idx of train and returns
// its loss, mean (net(x_i)[a_i] - t_i)^2 with the regression targets in
// network units,
//
//	t_i = (r_i - (1-gamma) Shift)/Scale + gamma vbar_i,
//
// vbar_i the target network's mean output at s'_i (over pi for discrete
// actions, over TrainSamples drawn actions for real ones), so that
// Shift + Scale t_i = r_i + gamma v_k(s'_i).
func (tr *fqeTrainer) step(rng *rand.Rand, train *fqeSet) float64 {
	m, b := tr.m, tr.set.m
	din, ds := tr.din, tr.ds
	rows := b
	if m.target.numActions == 0 {
		rows = b * tr.tS
		am := m.target.actionDim
		for i, j := range tr.idx {
			o := rng.IntN(tr.S)
			for k := range tr.tS {
				row := tr.tin[(i*tr.tS+k)*din : (i*tr.tS+k+1)*din]
				copy(row, train.nx[j*ds:(j+1)*ds])
				a := (o + k) % tr.S
				copy(row[ds:], train.na[(j*tr.S+a)*am:(j*tr.S+a+1)*am])
			}
		}
	} else {
		for i, j := range tr.idx {
			copy(tr.tin[i*ds:(i+1)*ds], train.nx[j*ds:(j+1)*ds])
		}
	}
	// The target network's outputs, in two fixed pieces of rows.
	half := (rows + 1) / 2
	run(tr.set.workers, func(p int) {
		lo, hi := p*half, min(rows, (p+1)*half)
		tr.tout[p] = tr.target.Forward(tr.tws[p], tr.tin[lo*din:hi*din], hi-lo)
	})
	tout := func(row, col int) float64 {
		if row < half {
			return tr.tout[0][row*tr.dout+col]
		}
		return tr.tout[1][(row-half)*tr.dout+col]
	}
	c := (1 - tr.gamma) * m.Shift
	for i, j := range tr.idx {
		vbar := 0.0
		if m.target.numActions > 0 {
			K := m.target.numActions
			for a, pa := range train.np[j*K : (j+1)*K] {
				if pa != 0 {
					vbar += pa * tout(i, a)
				}
			}
		} else {
			for k := range tr.tS {
				vbar += tout(i*tr.tS+k, 0)
			}
			vbar /= float64(tr.tS)
		}
		tr.t[i] = (train.r[j]-c)/m.Scale + tr.gamma*vbar
		copy(tr.xin[i*din:(i+1)*din], train.x[j*din:(j+1)*din])
	}
	out := tr.net.Forward(tr.ws, tr.xin, b)
	clear(tr.dy)
	loss := 0.0
	for i, j := range tr.idx {
		col := 0
		if train.act != nil {
			col = int(train.act[j])
		}
		e := out[i*tr.dout+col] - tr.t[i]
		loss += e * e
		tr.dy[i*tr.dout+col] = 2 * e / float64(b)
	}
	tr.net.Backward(tr.ws, tr.dy, tr.grad)
	tr.opt.Step(tr.net.Params(), tr.grad)
	return loss / float64(b)
}

// fqeChunk is the number of transitions an evaluator processes at once.
const fqeChunk = 256

// fqeEvaluator evaluates q and E_pi q on sets of states in chunks.
type fqeEvaluator struct {
	m    *NeuralModel
	ws   *nn.Workspace
	in   []float64
	rows int
}

func newFQEEvaluator(m *NeuralModel) *fqeEvaluator {
	rows := fqeChunk * max(m.target.samples, 1)
	return &fqeEvaluator{m: m, ws: m.Net.NewWorkspace(rows), in: make([]float64, rows*m.inputs()), rows: rows}
}

// bellmanError returns the mean squared Bellman residual of net (in
// value units) over the transitions of s, with every drawn action.
func (ev *fqeEvaluator) bellmanError(net *nn.MLP, s *fqeSet, gamma float64) float64 {
	m := ev.m
	din, dout := m.inputs(), m.outputs()
	sum := 0.0
	q := make([]float64, fqeChunk)
	for lo := 0; lo < s.n; lo += fqeChunk {
		hi := min(s.n, lo+fqeChunk)
		n := hi - lo
		out := net.Forward(ev.ws, s.x[lo*din:hi*din], n)
		for i := range n {
			col := 0
			if s.act != nil {
				col = int(s.act[lo+i])
			}
			q[i] = out[i*dout+col]
		}
		v := ev.nextValues(net, s, lo, hi)
		for i := range n {
			res := m.Scale * (q[i] - gamma*v[i] - (s.r[lo+i]-(1-gamma)*m.Shift)/m.Scale)
			sum += res * res
		}
	}
	return sum / float64(s.n)
}

// nextValues returns E_pi net(s'_j, .) in network units for the
// transitions [lo, hi) of s (at most fqeChunk), over every drawn action.
func (ev *fqeEvaluator) nextValues(net *nn.MLP, s *fqeSet, lo, hi int) []float64 {
	m := ev.m
	din, ds := m.inputs(), m.stateDim()
	n := hi - lo
	v := make([]float64, n)
	if m.target.numActions > 0 {
		K := m.target.numActions
		out := net.Forward(ev.ws, s.nx[lo*ds:hi*ds], n)
		for i := range n {
			for a, pa := range s.np[(lo+i)*K : (lo+i+1)*K] {
				if pa != 0 {
					v[i] += pa * out[i*K+a]
				}
			}
		}
		return v
	}
	S, am := m.target.samples, m.target.actionDim
	for i := range n {
		for k := range S {
			row := ev.in[(i*S+k)*din : (i*S+k+1)*din]
			copy(row, s.nx[(lo+i)*ds:(lo+i+1)*ds])
			copy(row[ds:], s.na[((lo+i)*S+k)*am:((lo+i)*S+k+1)*am])
		}
	}
	out := net.Forward(ev.ws, ev.in[:n*S*din], n*S)
	for i := range n {
		for k := range S {
			v[i] += out[i*S+k]
		}
		v[i] /= float64(S)
	}
	return v
}

// Values returns q, v and next for every step of d (see Model). v(s) is
// sum_a pi(a|s) q(s, a) with pi from d's TargetProbs for discrete actions,
// and for real actions the Monte Carlo mean of q(s, a_k) over the
// Target.Samples actions drawn at s as in the fit (so next[j] = v[j+1]
// where s'_j = s_(j+1)). next[j] is NaN where the next state, or for
// discrete actions the target's distribution there, is unknown.
func (m *NeuralModel) Values(d *dataset.Dataset) (q, v, next []float64, err error) {
	if d == nil {
		return nil, nil, nil, errors.New("value: neural: no data")
	}
	if err := m.target.compatible("neural", d, m.stateDim()); err != nil {
		return nil, nil, nil, err
	}
	n := d.NumSteps()
	q, v, next = make([]float64, n), make([]float64, n), make([]float64, n)
	parts := stepHalves(n)
	var errs [2]error
	run(m.workers, func(w int) {
		errs[w] = m.values(d, parts[w][0], parts[w][1], q, v, next)
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return q, v, next, nil
}

// values fills q, v and next for the steps [lo, hi), in chunks: q and v
// at the logged states first, then next (v[j+1] where the next state is
// the next step's state).
func (m *NeuralModel) values(d *dataset.Dataset, lo, hi int, q, v, next []float64) error {
	if lo >= hi {
		return nil
	}
	ev := newFQEEvaluator(m)
	din, ds, dout := m.inputs(), m.stateDim(), m.outputs()
	K, S, am := m.target.numActions, m.target.samples, m.target.actionDim
	set := &fqeSet{x: make([]float64, fqeChunk*din), nx: make([]float64, fqeChunk*ds)}
	if K > 0 {
		set.np = make([]float64, fqeChunk*K)
	} else {
		set.na = make([]float64, fqeChunk*S*am)
	}
	var smp *mcSampler
	if K == 0 {
		smp = newMCSampler(m.target)
	}
	ya := make([]float64, am)
	// load sets row i of set to the state obs with distribution probs.
	load := func(i int, obs, probs []float64) {
		m.state.apply(set.nx[i*ds:(i+1)*ds], obs)
		if K > 0 {
			copy(set.np[i*K:(i+1)*K], probs)
			return
		}
		smp.draw(obs, func(k int, a []float64) {
			m.action.apply(ya, a)
			copy(set.na[(i*S+k)*am:(i*S+k+1)*am], ya)
		})
	}
	// Pass 1: q and v at the logged states.
	e := episodeOfStep(d, lo)
	for c := lo; c < hi; c += fqeChunk {
		ch := min(hi, c+fqeChunk)
		for j := c; j < ch; j++ {
			for j >= d.Start[e+1] {
				e++
			}
			if err := checkRealStep("neural", d, e, j); err != nil {
				return err
			}
			m.input(set.x[(j-c)*din:(j-c+1)*din], d, j)
			var probs []float64
			if K > 0 {
				probs = d.TargetProbsAt(j)
				if err := checkTargetRow("neural", d, e, j, probs, "logged"); err != nil {
					return err
				}
			}
			load(j-c, d.ObsAt(j), probs)
		}
		out := m.Net.Forward(ev.ws, set.x, ch-c)
		for j := c; j < ch; j++ {
			col := 0
			if K > 0 {
				col = int(d.Action[j])
			}
			q[j] = m.Shift + m.Scale*out[(j-c)*dout+col]
		}
		vs := ev.nextValues(m.Net, set, 0, ch-c)
		for j := c; j < ch; j++ {
			v[j] = m.Shift + m.Scale*vs[j-c]
		}
	}
	// Pass 2: next.
	var pend []int // steps whose next value is computed in this chunk
	flush := func() {
		if len(pend) == 0 {
			return
		}
		vs := ev.nextValues(m.Net, set, 0, len(pend))
		for i, j := range pend {
			next[j] = m.Shift + m.Scale*vs[i]
		}
		pend = pend[:0]
	}
	e = episodeOfStep(d, lo)
	for j := lo; j < hi; j++ {
		for j >= d.Start[e+1] {
			e++
		}
		obs, ok := d.NextObs(e, j)
		var probs []float64
		if ok && K > 0 {
			probs, ok = d.NextTargetProbs(e, j)
			if ok {
				if err := checkTargetRow("neural", d, e, j, probs, "next"); err != nil {
					return err
				}
			}
		}
		if !ok {
			next[j] = math.NaN()
			continue
		}
		if !allFinite(obs) {
			return fmt.Errorf("value: neural: episode %q step %d: next state %v is not finite", d.IDs[e], j-d.Start[e], obs)
		}
		if j+1 < hi && j+1 < d.Start[e+1] && sameBits(obs, d.ObsAt(j+1)) &&
			(K == 0 || sameBits(probs, d.TargetProbsAt(j+1))) {
			next[j] = v[j+1]
			continue
		}
		load(len(pend), obs, probs)
		pend = append(pend, j)
		if len(pend) == fqeChunk {
			flush()
		}
	}
	flush()
	return nil
}
