package value

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/nn"
)

// mqlNeuralStream is the second word of the PCG state of the neural MQL's
// draws ("mql-nn").
const mqlNeuralStream = 0x6d716c2d6e6e

// MQLNeuralModel is the q of MQL's neural form (MQL with Neural set):
//
//	q(s, a) = Shift + Unit net(x)_a,   x = (s - Mean)/Scale,
//
// and for gamma = 1 the average reward Rho, learned with it.
type MQLNeuralModel struct {
	Net         *nn.MLP
	Mean, Scale []float64
	Shift, Unit float64
	// Bandwidth is the kernel bandwidth in standardised units.
	Bandwidth float64
	// Iterations, BestIter, TrainLoss and HeldOutLoss are the training's
	// record (kernelloss.Record).
	Iterations, BestIter   int
	TrainLoss, HeldOutLoss float64
	// Transitions is the number of transitions of the fit, Skipped those
	// left out for want of the target's distribution at the next state.
	Transitions, Skipped int

	rho    float64
	target realTarget
}

// Rho returns the average reward (gamma = 1), NaN otherwise.
func (m *MQLNeuralModel) Rho() float64 { return m.rho }

// mqlBatch evaluates MQL's loss on a sample of B transitions: the network
// on their states and next states, the Bellman residuals
// delta_i = r_i + gamma q(s'_i, pi) - q(s_i, a_i) - kappa as the masses of
// the measure (1/B) sum_i delta_i delta_(x_i, a_i) (kernelloss.FeatureLoss),
// and the gradient.
type mqlBatch struct {
	net   *nn.MLP
	ws    *nn.Workspace
	sl    *kernelloss.FeatureLoss
	idx   []int
	u     []float64
	x, dy []float64
	grad  []float64
	n     int
}

func newMQLBatch(net *nn.MLP, units int, kern *kernelloss.FeatureLoss) *mqlBatch {
	dim, nA := net.In(), net.Out()
	return &mqlBatch{net: net, ws: net.NewWorkspace(2 * units), sl: kern.Resize(units),
		idx: make([]int, units), u: make([]float64, units*nA), x: make([]float64, 2*units*dim),
		dy: make([]float64, 2*units*nA), grad: make([]float64, net.NumParams())}
}

// load makes the transitions idx of nd the sample and computes its kernel
// matrix.
func (b *mqlBatch) load(nd *kernelloss.NeuralData, idx []int) {
	n, dim, sl := len(idx), nd.Dim, b.sl
	b.n = n
	b.idx = append(b.idx[:0], idx...)
	for k, i := range idx {
		copy(b.x[k*dim:(k+1)*dim], nd.S[i*dim:(i+1)*dim])
		copy(b.x[(n+k)*dim:(n+k+1)*dim], nd.Next[i*dim:(i+1)*dim])
	}
	copy(sl.X, b.x[:n*dim])
	sl.Load(n)
}

// addLevelSums adds to e and eu the embeddings of the loaded sample's
// residuals at kappa = 0 and of the constant 1 (each transition's mass
// unweighted), the sums whose ratio <e, eu> / <eu, eu> is the profiled
// kappa over all the samples added.
func (b *mqlBatch) addLevelSums(nd *kernelloss.NeuralData, gamma, shift, unit float64, e, eu []float64) {
	n, nA, sl := b.n, nd.NumActions, b.sl
	out := b.net.Forward(b.ws, b.x, 2*n)
	clear(sl.C[:n*nA])
	clear(b.u[:n*nA])
	sl.U = b.u
	for k, i := range b.idx[:n] {
		a := int(nd.A[i])
		vn := 0.0
		for c, p := range nd.PiNext[i*nA : (i+1)*nA] {
			vn += p * (shift + unit*out[(n+k)*nA+c])
		}
		sl.C[k*nA+a] = nd.R[i] + gamma*vn - (shift + unit*out[k*nA+a])
		b.u[k*nA+a] = 1
	}
	sl.AddEmbedding(e, eu)
}

// loss returns the kernel loss of the loaded sample under q = shift + unit net with the residuals' level kappa, or
// profiled over kappa if profile (b.sl.Kappa is then the minimiser), and,
// if grad, leaves its gradient in b.grad.
func (b *mqlBatch) loss(nd *kernelloss.NeuralData, gamma, shift, unit, kappa float64, profile, grad bool) (float64, error) {
	n, nA, sl := b.n, nd.NumActions, b.sl
	out := b.net.Forward(b.ws, b.x, 2*n)
	inv := 1 / float64(n)
	clear(sl.C[:n*nA])
	sl.U = nil
	if profile {
		clear(b.u[:n*nA])
		sl.U, kappa = b.u, 0
	}
	for k, i := range b.idx[:n] {
		a := int(nd.A[i])
		vn := 0.0
		for c, p := range nd.PiNext[i*nA : (i+1)*nA] {
			vn += p * (shift + unit*out[(n+k)*nA+c])
		}
		sl.C[k*nA+a] = (nd.R[i] - kappa + gamma*vn - (shift + unit*out[k*nA+a])) * inv
		if profile {
			b.u[k*nA+a] = inv
		}
	}
	v := sl.Loss(grad)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("loss %v (training diverged)", v)
	}
	if !grad {
		return v, nil
	}
	clear(b.dy[:2*n*nA])
	for k, i := range b.idx[:n] {
		a := int(nd.A[i])
		g := sl.G[k*nA+a] * inv // dL/ddelta_k
		b.dy[k*nA+a] = -unit * g
		for c, p := range nd.PiNext[i*nA : (i+1)*nA] {
			b.dy[(n+k)*nA+c] = gamma * p * unit * g
		}
	}
	b.net.Backward(b.ws, b.dy, b.grad)
	return v, nil
}

// fitNeural is MQL's neural form on real states and discrete actions (see
// MQL).
func (l MQL) fitNeural(d *dataset.Dataset, gamma float64, target Target) (*MQLNeuralModel, error) {
	if d.ActionDim != 0 || target.Continuous != nil {
		return nil, errors.New("value: mql needs discrete actions (the target's whole distribution at every next state)")
	}
	set, err := l.Network.Resolve("value: mql")
	if err != nil {
		return nil, err
	}
	tgt, err := newRealTarget("mql", d, target)
	if err != nil {
		return nil, err
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if err := checkRealStep("mql", d, e, j); err != nil {
				return nil, err
			}
			if next, ok := d.NextObs(e, j); ok && !allFinite(next) {
				return nil, fmt.Errorf("value: mql: episode %q step %d: next state %v is not finite", d.IDs[e], j-lo, next)
			}
		}
	}
	rng := rand.New(rand.NewPCG(set.Seed, mqlNeuralStream))
	mean, scale := kernelloss.Scaling(d)
	nd := kernelloss.NewNeuralData(d, mean, scale)
	if nd.Len() < 2 {
		return nil, fmt.Errorf("value: mql: %d transitions, need at least 2", nd.Len())
	}
	train, held := nd.Split(rng, set.HeldOut)
	if held != nil && held.Len() < 2 || train.Len() < 2 {
		train, held = nd, nil
	}
	h := set.Bandwidth
	if h == 0 {
		if h, err = kernelloss.Median(rng, train.S, nd.Dim, set.BandwidthSample); err != nil {
			return nil, fmt.Errorf("value: mql: %w", err)
		}
		h /= 2 // see value.MinimaxNeural.Bandwidth
	}
	// The output's scale: q of order Shift +- Unit.
	rMean, rSD := meanSD(nd.R)
	if !(rSD > 0) {
		rSD = max(math.Abs(rMean), 1)
	}
	horizon := 10.0 // gamma = 1: the differential q's scale in rewards
	if gamma < 1 {
		horizon = 1 / (1 - gamma)
	}
	m := &MQLNeuralModel{Mean: mean, Scale: scale, Unit: rSD * horizon, Bandwidth: h, rho: math.NaN(),
		Transitions: nd.Len(), Skipped: nd.Skipped, target: tgt}
	if gamma < 1 {
		m.Shift = rMean * horizon
	}
	sizes := append(append([]int{nd.Dim}, set.Hidden...), nd.NumActions)
	if m.Net, err = nn.New(sizes, nn.Tanh, nn.Identity); err != nil {
		return nil, fmt.Errorf("value: mql: %w", err)
	}
	m.Net.Init(rng, 0.1)
	// The residuals' level kappa (rho for gamma = 1, (1 - gamma) times a
	// shift of q for gamma < 1) is profiled out of every sample's loss;
	// the model's is profiled over all training transitions (in pieces
	// of BatchSize) at every evaluation and at the end.
	level := []float64{0}
	// Every SampleIters iterations a new sample of BatchSize transitions
	// (all of them if there are no more) is drawn, and Adam runs on its
	// exact loss until the next (see MinimaxNeural for why).
	nb := min(set.BatchSize, train.Len())
	kern := kernelloss.NewFeatureLoss(rng, nd.Dim, nd.NumActions, 0, set.Features, h)
	tr := newMQLBatch(m.Net, nb, kern)
	draw := kernelloss.NewSampler(train.Len(), nb)
	opt := nn.Adam{LR: set.LearningRate}
	iter := 0
	step := func() (float64, error) {
		if iter%set.SampleIters == 0 {
			tr.load(train, draw.Draw(rng))
		}
		iter++
		v, err := tr.loss(train, gamma, m.Shift, m.Unit, 0, true, true)
		if err != nil {
			return 0, fmt.Errorf("value: mql: %w", err)
		}
		opt.Step(m.Net.Params(), tr.grad)
		return v, nil
	}
	tb := newMQLBatch(m.Net, nb, kern) // tr keeps the training sample
	nD := nd.NumActions * kern.D
	e, eu := make([]float64, nD), make([]float64, nD)
	piece := make([]int, 0, nb)
	profile := func() error {
		clear(e)
		clear(eu)
		for lo := 0; lo < train.Len(); lo += nb {
			piece = piece[:0]
			for i := lo; i < min(lo+nb, train.Len()); i++ {
				piece = append(piece, i)
			}
			tb.load(train, piece)
			tb.addLevelSums(train, gamma, m.Shift, m.Unit, e, eu)
		}
		cu, uu := 0.0, 0.0
		for i, v := range eu {
			cu += e[i] * v
			uu += v * v
		}
		if !(uu > 0) || math.IsNaN(cu) || math.IsInf(cu, 0) {
			return fmt.Errorf("value: mql: the residuals' level is %v / %v (training diverged)", cu, uu)
		}
		level[0] = cu / uu
		return nil
	}
	var heldOut func() (float64, error)
	if held != nil {
		ev := newMQLBatch(m.Net, min(held.Len(), nb), kern)
		ev.load(held, kernelloss.NewSampler(held.Len(), nb).Draw(rng))
		heldOut = func() (float64, error) {
			if err := profile(); err != nil {
				return 0, err
			}
			v, err := ev.loss(held, gamma, m.Shift, m.Unit, level[0], false, false)
			if err != nil {
				return 0, fmt.Errorf("value: mql: held-out loss: %w", err)
			}
			return v, nil
		}
	}
	rec, err := kernelloss.Schedule{MaxIter: set.MaxIter, EvalEvery: set.EvalEvery, Patience: set.Patience, Average: set.Average}.
		Run([][]float64{m.Net.Params(), level}, step, heldOut)
	if err != nil {
		return nil, err
	}
	if heldOut == nil {
		if err := profile(); err != nil {
			return nil, err
		}
	}
	if gamma == 1 {
		m.rho = level[0]
	} else {
		m.Shift += level[0] / (1 - gamma)
	}
	m.Iterations, m.BestIter, m.TrainLoss, m.HeldOutLoss = rec.Iterations, rec.BestIter, rec.TrainLoss, rec.HeldOutLoss
	return m, nil
}

// Values returns q(s_j, a_j), v(s_j) and v(s'_j) (NaN where s'_j or the
// target's distribution there is unknown) for every step j of d.
func (m *MQLNeuralModel) Values(d *dataset.Dataset) (q, v, next []float64, err error) {
	if d == nil {
		return nil, nil, nil, errors.New("value: mql: no data")
	}
	if err := m.target.compatible("mql", d, len(m.Mean)); err != nil {
		return nil, nil, nil, err
	}
	n, dim, nA := d.NumSteps(), len(m.Mean), m.Net.Out()
	q, v, next = make([]float64, n), make([]float64, n), make([]float64, n)
	const chunk = 512
	ws := m.Net.NewWorkspace(2 * chunk)
	x := make([]float64, 2*chunk*dim)
	hasNext := make([]bool, chunk)
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for c := lo; c < hi; c += chunk {
			k := min(chunk, hi-c)
			for r := range k {
				j := c + r
				if err := checkRealStep("mql", d, e, j); err != nil {
					return nil, nil, nil, err
				}
				for t, s := range d.ObsAt(j) {
					x[r*dim+t] = (s - m.Mean[t]) / m.Scale[t]
				}
				obs, ok := d.NextObs(e, j)
				_, okp := d.NextTargetProbs(e, j)
				hasNext[r] = ok && okp
				for t := range dim {
					x[(k+r)*dim+t] = 0
					if hasNext[r] {
						x[(k+r)*dim+t] = (obs[t] - m.Mean[t]) / m.Scale[t]
					}
				}
			}
			out := m.Net.Forward(ws, x, 2*k)
			for r := range k {
				j := c + r
				q[j] = m.Shift + m.Unit*out[r*nA+int(d.Action[j])]
				for a, p := range d.TargetProbsAt(j) {
					v[j] += p * (m.Shift + m.Unit*out[r*nA+a])
				}
				next[j] = math.NaN()
				if hasNext[r] {
					probs, _ := d.NextTargetProbs(e, j)
					next[j] = 0
					for a, p := range probs {
						next[j] += p * (m.Shift + m.Unit*out[(k+r)*nA+a])
					}
				}
			}
		}
	}
	return q, v, next, nil
}
