package ratio

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/nn"
	"github.com/ihope-ope/ihope/value"
)

// pairNeuralStream is the second word of the PCG state of the neural
// state-action fits' draws ("pair-nn").
const pairNeuralStream = 0x706169722d6e6e

// PairNeuralModel is a state-action ratio of real states and discrete
// actions learned by a network (MWL or DualDICE with Neural set):
//
//	w(s, a) = Net(x)_a / Norm,   x = (s - Mean)/Scale,
//
// Net's outputs positive (exponential), Norm their mean at the fitted
// transitions, so that E_D[w] = 1.
type PairNeuralModel struct {
	Net         *nn.MLP
	Mean, Scale []float64
	NumActions  int
	Norm        float64
	// Bandwidth is the kernel bandwidth in standardised units.
	Bandwidth float64
	// Iterations, BestIter, TrainLoss and HeldOutLoss are the training's
	// record.
	Iterations, BestIter   int
	TrainLoss, HeldOutLoss float64
	// Transitions is the number of transitions of the fit, Skipped those
	// without the target's distribution at the next state.
	Transitions, Skipped int
}

var (
	_ PairModel = (*PairNeuralModel)(nil)
	_ Warner    = (*PairNeuralModel)(nil)
)

// MeanRatio returns E_D[w], 1 by construction.
func (m *PairNeuralModel) MeanRatio() float64 { return 1 }

// Warnings says when transitions were left out.
func (m *PairNeuralModel) Warnings() []string {
	if m.Skipped > 0 {
		return []string{fmt.Sprintf("%d transitions without the target's distribution at the next state were left out", m.Skipped)}
	}
	return nil
}

// StepRatios returns w(s_j, a_j) for every step j of d.
func (m *PairNeuralModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	if d.StateDim != len(m.Mean) || d.ActionDim != 0 || d.NumActions != m.NumActions {
		return nil, fmt.Errorf("ratio: logs of %d-dimensional states and %d actions, the model's are %d and %d",
			d.StateDim, d.NumActions, len(m.Mean), m.NumActions)
	}
	n, dim, nA := d.NumSteps(), len(m.Mean), m.NumActions
	out := make([]float64, n)
	const chunk = 1024
	ws := m.Net.NewWorkspace(chunk)
	x := make([]float64, chunk*dim)
	for lo := 0; lo < n; lo += chunk {
		k := min(chunk, n-lo)
		for r := range k {
			for t, v := range d.ObsAt(lo + r) {
				x[r*dim+t] = (v - m.Mean[t]) / m.Scale[t]
			}
		}
		y := m.Net.Forward(ws, x, k)
		for r := range k {
			a := int(d.Action[lo+r])
			if a < 0 || a >= nA {
				return nil, fmt.Errorf("ratio: step %d: action %d outside 0..%d", lo+r, a, nA-1)
			}
			out[lo+r] = y[r*nA+a] / m.Norm
		}
	}
	return out, nil
}

// pairBatch evaluates the neural MWL/DualDICE loss on a sample of B
// transitions i and S start states s0_k (gamma < 1): with
// w~_i = w(s_i, a_i) / z, z the sample mean of w(s_i, a_i), the measure
// is
//
//	mu = (1/B) sum_i w~_i (gamma pi(.|s'_i) delta_{x'_i} - e_{a_i} delta_{x_i}) + ((1 - gamma)/S) sum_k pi(.|s0_k) delta_{x0_k},
//
// MWL's loss is ||mu||^2 (kernelloss.FeatureLoss) and DualDICE's adds lambda
// times the sample mean of w~^2.
type pairBatch struct {
	net      *nn.MLP
	ws       *nn.Workspace
	sl       *kernelloss.FeatureLoss
	idx      []int
	x, dy    []float64
	gw, wt   []float64
	grad     []float64
	n, start int // transitions and starts loaded
}

func newPairBatch(net *nn.MLP, units, starts int, kern *kernelloss.FeatureLoss) *pairBatch {
	dim, nA := net.In(), net.Out()
	return &pairBatch{net: net, ws: net.NewWorkspace(units), sl: kern.Resize(2*units + starts),
		idx: make([]int, units), x: make([]float64, units*dim), dy: make([]float64, units*nA),
		gw: make([]float64, units), wt: make([]float64, units), grad: make([]float64, net.NumParams())}
}

// load makes the transitions idx and the starts st of nd the sample
// (st empty for gamma = 1) and computes its kernel matrix.
// The start states' masses do not depend on w and are set here.
func (b *pairBatch) load(nd *kernelloss.NeuralData, idx, st []int, gamma float64) {
	dim, nA, sl := nd.Dim, nd.NumActions, b.sl
	b.n, b.start = len(idx), len(st)
	b.idx = append(b.idx[:0], idx...)
	for k, i := range idx {
		copy(b.x[k*dim:(k+1)*dim], nd.S[i*dim:(i+1)*dim])
		copy(sl.X[2*k*dim:(2*k+1)*dim], nd.S[i*dim:(i+1)*dim])
		copy(sl.X[(2*k+1)*dim:(2*k+2)*dim], nd.Next[i*dim:(i+1)*dim])
	}
	p0 := 2 * len(idx)
	clear(sl.C[p0*nA : (p0+len(st))*nA])
	for k, s := range st {
		p := p0 + k
		copy(sl.X[p*dim:(p+1)*dim], nd.S0[s*dim:(s+1)*dim])
		for c, pc := range nd.Pi0[s*nA : (s+1)*nA] {
			sl.C[p*nA+c] = (1 - gamma) * pc / float64(len(st))
		}
	}
	sl.Load(p0 + len(st))
}

// loss returns the loss of the loaded sample with DualDICE's weight lambda of E[w~^2] (0 for MWL) and, if grad,
// leaves its gradient in b.grad.
func (b *pairBatch) loss(nd *kernelloss.NeuralData, gamma, lambda float64, grad bool) (float64, error) {
	n, nA, sl := b.n, nd.NumActions, b.sl
	out := b.net.Forward(b.ws, b.x, n)
	z := 0.0
	for k, i := range b.idx[:n] {
		z += out[k*nA+int(nd.A[i])]
	}
	z /= float64(n)
	if !(z > 0) || math.IsInf(z, 0) {
		return 0, fmt.Errorf("mean network output %v (training diverged)", z)
	}
	clear(sl.C[:2*n*nA])
	pen, inv := 0.0, 1/float64(n)
	for k, i := range b.idx[:n] {
		a := int(nd.A[i])
		w := out[k*nA+a] / z
		b.wt[k] = w
		pen += w * w
		sl.C[2*k*nA+a] = -w * inv
		for c, pc := range nd.PiNext[i*nA : (i+1)*nA] {
			sl.C[(2*k+1)*nA+c] = gamma * w * pc * inv
		}
	}
	v := sl.Loss(grad) + lambda*pen*inv
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("loss %v (training diverged)", v)
	}
	if !grad {
		return v, nil
	}
	// dL/dw~_k, then through the normalisation w~ = w / z.
	sum := 0.0
	for k, i := range b.idx[:n] {
		a := int(nd.A[i])
		g := -sl.G[2*k*nA+a] * inv
		for c, pc := range nd.PiNext[i*nA : (i+1)*nA] {
			g += gamma * pc * sl.G[(2*k+1)*nA+c] * inv
		}
		g += 2 * lambda * b.wt[k] * inv
		b.gw[k] = g
		sum += g * b.wt[k]
	}
	clear(b.dy[:n*nA])
	for k, i := range b.idx[:n] {
		b.dy[k*nA+int(nd.A[i])] = (b.gw[k] - sum*inv) / z
	}
	b.net.Backward(b.ws, b.dy, b.grad)
	return v, nil
}

// fitPairNeural is the neural fit shared by MWL (lambda 0) and DualDICE on
// real states and discrete actions (see MWL and DualDICE).
func fitPairNeural(name string, d *dataset.Dataset, gamma float64, target value.Target, s value.MinimaxNeural, dice bool) (*PairNeuralModel, error) {
	if d != nil && d.ActionDim > 0 {
		return nil, fmt.Errorf("ratio: %s: the neural form needs discrete actions; the kernel form (the default) runs on real actions with the target's draws", name)
	}
	if _, err := checkPairLogs(name, d, gamma, target); err != nil {
		return nil, err
	}
	set, err := s.Resolve("ratio: " + name)
	if err != nil {
		return nil, err
	}
	lambda := 0.0
	if dice {
		lambda = set.Ridge
	}
	rng := rand.New(rand.NewPCG(set.Seed, pairNeuralStream))
	mean, scale := kernelloss.Scaling(d)
	nd := kernelloss.NewNeuralData(d, mean, scale)
	if nd.Len() < 2 {
		return nil, fmt.Errorf("ratio: %s: %d transitions, need at least 2", name, nd.Len())
	}
	train, held := nd.Split(rng, set.HeldOut)
	if held != nil && held.Len() < 2 || train.Len() < 2 {
		train, held = nd, nil
	}
	h := set.Bandwidth
	if h == 0 {
		if h, err = kernelloss.Median(rng, train.S, nd.Dim, set.BandwidthSample); err != nil {
			return nil, fmt.Errorf("ratio: %s: %w", name, err)
		}
		h /= 2 // see value.MinimaxNeural.Bandwidth
	}
	m := &PairNeuralModel{Mean: mean, Scale: scale, NumActions: nd.NumActions, Bandwidth: h,
		Transitions: nd.Len(), Skipped: nd.Skipped}
	sizes := append(append([]int{nd.Dim}, set.Hidden...), nd.NumActions)
	if m.Net, err = nn.New(sizes, nn.Tanh, nn.Exp); err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	m.Net.Init(rng, 0.1)
	// Every SampleIters iterations a new sample of BatchSize transitions
	// (all of them if there are no more) and of as many start states is
	// drawn, and Adam runs on its exact loss until the next (see
	// value.MinimaxNeural for why).
	nb, ns := min(set.BatchSize, train.Len()), 0
	if gamma < 1 {
		ns = min(set.BatchSize, train.Starts())
	}
	kern := kernelloss.NewFeatureLoss(rng, nd.Dim, nd.NumActions, 0, set.Features, h)
	tr := newPairBatch(m.Net, nb, ns, kern)
	draw := kernelloss.NewSampler(train.Len(), nb)
	drawStart := kernelloss.NewSampler(train.Starts(), ns)
	opt := nn.Adam{LR: set.LearningRate}
	iter := 0
	step := func() (float64, error) {
		if iter%set.SampleIters == 0 {
			tr.load(train, draw.Draw(rng), drawStart.Draw(rng), gamma)
		}
		iter++
		v, err := tr.loss(train, gamma, lambda, true)
		if err != nil {
			return 0, fmt.Errorf("ratio: %s: %w", name, err)
		}
		opt.Step(m.Net.Params(), tr.grad)
		return v, nil
	}
	var heldOut func() (float64, error)
	if held != nil {
		hn, hs := min(held.Len(), nb), 0
		if gamma < 1 {
			hs = min(held.Starts(), nb)
		}
		ev := newPairBatch(m.Net, hn, hs, kern)
		ev.load(held, kernelloss.NewSampler(held.Len(), hn).Draw(rng), kernelloss.NewSampler(held.Starts(), hs).Draw(rng), gamma)
		heldOut = func() (float64, error) {
			v, err := ev.loss(held, gamma, lambda, false)
			if err != nil {
				return 0, fmt.Errorf("ratio: %s: held-out loss: %w", name, err)
			}
			return v, nil
		}
	}
	rec, err := kernelloss.Schedule{MaxIter: set.MaxIter, EvalEvery: set.EvalEvery, Patience: set.Patience, Average: set.Average}.
		Run([][]float64{m.Net.Params()}, step, heldOut)
	if err != nil {
		return nil, err
	}
	m.Iterations, m.BestIter, m.TrainLoss, m.HeldOutLoss = rec.Iterations, rec.BestIter, rec.TrainLoss, rec.HeldOutLoss
	// Norm: the mean output at the fitted transitions.
	sum := 0.0
	ws := m.Net.NewWorkspace(1024)
	for lo := 0; lo < nd.Len(); lo += 1024 {
		k := min(1024, nd.Len()-lo)
		y := m.Net.Forward(ws, nd.S[lo*nd.Dim:(lo+k)*nd.Dim], k)
		for r := range k {
			sum += y[r*nd.NumActions+int(nd.A[lo+r])]
		}
	}
	m.Norm = sum / float64(nd.Len())
	if !(m.Norm > 0) || math.IsInf(m.Norm, 0) {
		return nil, fmt.Errorf("ratio: %s: the network's mean output is %v", name, m.Norm)
	}
	return m, nil
}
